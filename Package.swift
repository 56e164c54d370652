// swift-tools-version: 6.2
import PackageDescription

// Modules depend only leftwards:
// BLECore ← BLECapture, BLEProtocols, BLECodecs, BLESecurity ← BLEAnalysis ← BLEReports, BLEDiagnosis ← blescope
// BLESecurity: libcrypto (AES-CCM, pairing functions, P-256, SHA-256)
// BLEYAML (libyaml) ← BLECodecs: codec specs, GATT maps, key files and expectation files are YAML
// The four under BLEAnalysis do not import each other, so that a clean build compiles them side by side on two cores
// (the capture readers and the codecs while the protocol decoders build): what they share (BD_ADDR, record kinds,
// connection timing units) is in BLECore (docs/performance.md#build-time).
// BLEDiagnosis holds the diagnosis rules; BLEReports does not import it (BLEAnalysis reads the rule table through a
// symbol the linker binds, Sources/BLEDiagnosis/DiagnosisRuleTable.swift), so the two compile side by side after
// BLEAnalysis instead of one after the other. Whatever links BLEAnalysis links BLEDiagnosis too.
// A map of the modules, their main types and where to start reading: docs/design.md.
//
// The per-record hot paths (BLEAnalysis, BLEReports for JSON Lines, the capture readers of BLECapture) spend a large
// share of their time in dynamic exclusivity checks (figures: docs/performance.md#package-swift).
// Release builds turn them off there; debug builds (and so the test suite) keep them, which is
// where an overlapping access would show up.
//
// Why tools-version 6.2: `-enforce-exclusivity=unchecked` has no supported SwiftSetting (none in PackageDescription
// up to 6.3.1), so it goes through `unsafeFlags`, and SwiftPM before 6.2 refuses a versioned dependency on a product
// whose targets use unsafe flags ("contains unsafe build flags"). SwiftPM 6.2 dropped that check for packages whose
// manifest says 6.2 or later (swift-package-manager #8896, #8951). With 6.2 the `BLEAnalysis` product can be used
// by version (`from: "x.y.z"`, checked on 2026-11-23 with toolchain 6.3.1, a consumer package and a tagged clone: refused at
// 6.1, accepted at 6.2) and release builds keep the speed; what it costs is a 6.2 toolchain to build blescope.
// Dropping the flag instead made every pass 21–76 % slower (docs/performance.md#package-swift). Dropping the
// library product would have kept 6.1 but left nothing for others to depend on.
let releaseSpeed: [SwiftSetting] = [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]
// The cold modules are compiled for size: the command line (each command's set-up and printing), codec specs and YAML
// run once per file, not per record. 0.15 MB of the binary, no time lost on the benchmark (docs/performance.md#size).
let coldSize: [SwiftSetting] = [.unsafeFlags(["-Osize"], .when(configuration: .release))]
// BLEReports is compiled for size too (its renderers, charts and the cold commands: diff, fleet, check), but what runs
// per record or per event is marked `@_optimize(speed)`: the timeline's JSON renderer and its byte buffer, the JSON
// writer, the page's timeline rows, the per-record work of `report` and `diagnose`. A closure does not take its
// function's `@_optimize(speed)`, so what runs per record or event is a named function, not a closure's body. At
// `-Osize` unmarked, `timeline --format jsonl` was 7 % slower; marked, no command costs more than 0.23 % more
// instructions, for 0.24 MB less (docs/performance.md#size).
let reportsSize: [SwiftSetting] = [
    .unsafeFlags(["-enforce-exclusivity=unchecked", "-Osize"], .when(configuration: .release))
]

let package = Package(
    name: "blescope",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "blescope", targets: ["blescope"]),
        .library(name: "BLEAnalysis", targets: ["BLEAnalysis", "BLEDiagnosis"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0")
    ],
    targets: [
        .systemLibrary(
            name: "CPcap", pkgConfig: "libpcap",
            providers: [.apt(["libpcap-dev"]), .brew(["libpcap"])]),
        .systemLibrary(
            name: "CZlib", pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]),
        // libdeflate for the page's gzipped timeline: zlib's size at level 6 in a third of its time (zlib stays for
        // reading gzip and btsnooz, where it streams).
        .systemLibrary(
            name: "CDeflate", pkgConfig: "libdeflate",
            providers: [.apt(["libdeflate-dev"]), .brew(["libdeflate"])]),
        .systemLibrary(
            name: "COpenSSL", pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"]), .brew(["openssl"])]),
        // libyaml under BLEYAML's nodes: Yams, which it replaces, needs Foundation, and so ICU (34 MB of the static binary).
        .systemLibrary(
            name: "CYAML", pkgConfig: "yaml-0.1",
            providers: [.apt(["libyaml-dev"]), .brew(["libyaml"])]),
        .target(name: "BLECore"),
        .target(name: "BLEYAML", dependencies: ["CYAML"], swiftSettings: coldSize),
        .target(name: "BLESecurity", dependencies: ["BLECore", "COpenSSL"], swiftSettings: releaseSpeed),
        .target(name: "BLECapture", dependencies: ["BLECore", "CPcap", "CZlib"], swiftSettings: releaseSpeed),
        .target(name: "BLEProtocols", dependencies: ["BLECore"]),
        .target(
            name: "BLECodecs", dependencies: ["BLECore", "BLEYAML"],
            exclude: ["Declarative/SPEC_FORMAT.md"], swiftSettings: coldSize),
        .target(
            name: "BLEAnalysis",
            dependencies: ["BLECore", "BLECapture", "BLESecurity", "BLEProtocols", "BLECodecs", "BLEYAML"],
            swiftSettings: releaseSpeed),
        .target(
            name: "BLEDiagnosis", dependencies: ["BLECore", "BLEProtocols", "BLECodecs", "BLEAnalysis"],
            swiftSettings: releaseSpeed),
        .target(
            name: "BLEReports",
            dependencies: ["BLECore", "BLECapture", "BLEProtocols", "BLECodecs", "BLEAnalysis", "BLEYAML", "CDeflate"],
            swiftSettings: reportsSize),
        .executableTarget(
            name: "blescope",
            dependencies: [
                "BLECore", "BLECapture", "BLEProtocols", "BLECodecs", "BLEAnalysis", "BLEDiagnosis", "BLEReports",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            // SwiftPM's static runtime links with `-export-dynamic`: 27,774 of blescope's own symbols (2.0 MB of the stripped
            // binary) exported, and kept by `--gc-sections` whether used or not. No one loads blescope as a library, and
            // the Swift backtracer names a crash's frames from the debug file, not from them (docs/performance.md#size).
            // `--icf=safe`: the linker (gold, the Swift toolchain's default on Linux; lld takes it too) keeps one copy of
            // functions whose code is identical and whose address nobody takes (value witnesses and specializations
            // that came out the same): 516 kB less of the stripped binary, the same speed (docs/performance.md#size).
            swiftSettings: coldSize,
            linkerSettings: [
                .unsafeFlags(
                    ["-Xlinker", "--no-export-dynamic", "-Xlinker", "--icf=safe"], .when(platforms: [.linux], configuration: .release))
            ],
            plugins: ["BuildInfo"]),
        // `blescope --version` names the commit: the plugin writes it into the target before each build (see its comment).
        .plugin(name: "BuildInfo", capability: .buildTool()),
        .target(name: "BLETestSupport", dependencies: ["BLECore", "BLECapture", "BLEProtocols", "BLESecurity"]),
        // What BLEAnalysisTests and BLEDiagnosisTests share: nRF Sniffer and encrypted-link builders, the analyzer run
        // over a built capture, the trackers' test events and the truth files.
        .target(
            name: "BLEAnalysisTestSupport",
            dependencies: ["BLEAnalysis", "BLECodecs", "BLESecurity", "BLEProtocols", "BLECapture", "BLECore", "BLETestSupport"]),
        // Each test target names every module its sources import, not only the one it tests: SwiftPM rebuilds a target
        // when the modules it names change, and a test reads the stored properties of the types it imports in place
        // (their layout is compiled in). With BLEAnalysis reached only through BLEReports, a change to `Analyzer`'s
        // stored properties that left BLEReports' interface byte for byte the same rebuilt BLEAnalysis and BLEReports
        // but not BLEReportsTests: its `analyzer.onEvent = …` stored a closure over `observers` and the connection table
        // of the new layout (the heap corruption in BackgroundTimelineJSONTests, 2026-11-24 and 2026-11-28).
        .testTarget(name: "BLECoreTests", dependencies: ["BLECore"]),
        .testTarget(name: "BLESecurityTests", dependencies: ["BLESecurity", "BLECore", "BLETestSupport"]),
        .testTarget(name: "BLECaptureTests", dependencies: ["BLECapture", "BLECore", "BLEProtocols", "BLETestSupport"]),
        .testTarget(name: "BLEProtocolsTests", dependencies: ["BLEProtocols", "BLECapture", "BLECore", "BLETestSupport"]),
        .testTarget(name: "BLECodecsTests", dependencies: ["BLECodecs", "BLEYAML", "BLEProtocols", "BLECore", "BLETestSupport"]),
        .testTarget(
            name: "BLEAnalysisTests",
            dependencies: [
                "BLEAnalysis", "BLESecurity", "BLECodecs", "BLEProtocols", "BLECapture", "BLECore", "BLETestSupport",
                "BLEAnalysisTestSupport",
            ]),
        // The rules' tests and the analysis tests that read BLEReports (the diagnosis through `DiagnosisReport`, the
        // report, `info`): BLEAnalysisTests imports neither BLEReports nor BLEDiagnosis, so that it compiles as soon as
        // BLEAnalysis is built instead of after BLEReports (docs/performance.md#build-time).
        .testTarget(
            name: "BLEDiagnosisTests",
            dependencies: [
                "BLEDiagnosis", "BLEReports", "BLEAnalysis", "BLESecurity", "BLECodecs", "BLEProtocols", "BLECapture", "BLECore",
                "BLETestSupport", "BLEAnalysisTestSupport",
            ]),
        .testTarget(
            name: "BLEReportsTests",
            dependencies: [
                "BLEReports", "BLEAnalysis", "BLESecurity", "BLECodecs", "BLEProtocols", "BLECapture", "BLECore", "BLETestSupport",
            ]),
        .testTarget(
            name: "EndToEndTests", dependencies: ["BLETestSupport", "BLEProtocols", "BLECapture", "BLECore", "blescope"],
            exclude: ["Golden", "Stories"]),
        .testTarget(
            name: "FuzzTests", dependencies: ["BLEAnalysis", "BLEReports", "BLECodecs", "BLECapture", "BLECore", "BLETestSupport"],
            exclude: ["Corpus"]),
    ]
)
