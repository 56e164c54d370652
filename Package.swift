// swift-tools-version: 6.1
import PackageDescription

// Modules depend only leftwards:
// BLECore ← BLECapture ← BLEProtocols ← BLECodecs ← BLEAnalysis ← BLEReports ← blescope
// BLECore ← BLESecurity (libcrypto: AES-CCM, pairing functions, P-256, SHA-256) ← BLEAnalysis
// The per-record hot paths (BLEAnalysis, and BLEReports for JSON Lines) spend ~15 % of its time in dynamic exclusivity checks;
// the capture readers (BLECapture) 8 % of an `info` pass once their bookkeeping is a struct (RecordWalk).
// Release builds turn them off there; debug builds (and so the test suite) keep them, which is
// where an overlapping access would show up.
let releaseSpeed: [SwiftSetting] = [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

let package = Package(
    name: "blescope",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "blescope", targets: ["blescope"]),
        .library(name: "BLEAnalysis", targets: ["BLEAnalysis"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/jpsim/Yams", from: "5.0.0"),
    ],
    targets: [
        .systemLibrary(name: "CPcap", pkgConfig: "libpcap",
                       providers: [.apt(["libpcap-dev"]), .brew(["libpcap"])]),
        .systemLibrary(name: "CZlib", pkgConfig: "zlib",
                       providers: [.apt(["zlib1g-dev"]), .brew(["zlib"])]),
        .systemLibrary(name: "COpenSSL", pkgConfig: "libcrypto",
                       providers: [.apt(["libssl-dev"]), .brew(["openssl"])]),
        .target(name: "BLECore"),
        .target(name: "BLESecurity", dependencies: ["BLECore", "COpenSSL"], swiftSettings: releaseSpeed),
        .target(name: "BLECapture", dependencies: ["BLECore", "CPcap", "CZlib"], swiftSettings: releaseSpeed),
        .target(name: "BLEProtocols", dependencies: ["BLECore", "BLECapture"]),
        .target(name: "BLECodecs", dependencies: ["BLECore", "BLEProtocols", .product(name: "Yams", package: "Yams")],
                exclude: ["Declarative/SPEC_FORMAT.md"]),
        .target(name: "BLEAnalysis", dependencies: ["BLECore", "BLECapture", "BLESecurity", "BLEProtocols", "BLECodecs", .product(name: "Yams", package: "Yams")],
                swiftSettings: releaseSpeed),
        .target(name: "BLEReports", dependencies: ["BLECore", "BLECapture", "BLEProtocols", "BLECodecs", "BLEAnalysis"],
                swiftSettings: releaseSpeed),
        .executableTarget(name: "blescope", dependencies: [
            "BLECore", "BLECapture", "BLEProtocols", "BLECodecs", "BLEAnalysis", "BLEReports",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ]),
        .target(name: "BLETestSupport", dependencies: ["BLECore", "BLECapture", "BLEProtocols", "BLESecurity"]),
        .testTarget(name: "BLECoreTests", dependencies: ["BLECore"]),
        .testTarget(name: "BLESecurityTests", dependencies: ["BLESecurity", "BLECore", "BLETestSupport"]),
        .testTarget(name: "BLECaptureTests", dependencies: ["BLECapture", "BLETestSupport"]),
        .testTarget(name: "BLEProtocolsTests", dependencies: ["BLEProtocols", "BLETestSupport"]),
        .testTarget(name: "BLECodecsTests", dependencies: ["BLECodecs", "BLETestSupport"]),
        .testTarget(name: "BLEAnalysisTests", dependencies: ["BLEAnalysis", "BLEReports", "BLESecurity", "BLETestSupport"]),
        .testTarget(name: "BLEReportsTests", dependencies: ["BLEReports", "BLETestSupport"]),
        .testTarget(name: "EndToEndTests", dependencies: ["BLETestSupport", "blescope"], exclude: ["Golden"]),
        .testTarget(name: "FuzzTests", dependencies: ["BLEAnalysis", "BLEReports", "BLETestSupport"], exclude: ["Corpus"]),
    ]
)
