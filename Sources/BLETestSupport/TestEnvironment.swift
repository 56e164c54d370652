import Foundation

/// Where tests find the repository, the Samples and the shared real captures, and how they run tshark.
public enum TestEnvironment {
    /// The repository root, found from this file's path (Sources/BLETestSupport/TestEnvironment.swift).
    public static let repositoryRoot: String = {
        var parts = String(#filePath).split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }()

    public static let samplesDirectory = repositoryRoot + "/Samples"

    /// `<repo>/../shared/captures` (or the folder `BLESCOPE_SHARED_CAPTURES` names, for a worktree kept elsewhere), or
    /// nil when it is absent (tests that need it skip).
    public static let sharedCaptures: String? = {
        let override = ProcessInfo.processInfo.environment["BLESCOPE_SHARED_CAPTURES"].flatMap { $0.isEmpty ? nil : $0 }
        let dir = override ?? repositoryRoot + "/../shared/captures"
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: dir, isDirectory: &isDirectory) && isDirectory.boolValue ? dir : nil
    }()

    /// Every real capture in the shared folder (full paths), sorted, then those of the public corpus when
    /// `BLESCOPE_CORPUS` names its folder (`corpus/README.md` lists them and says how to fetch them again).
    public static var realCaptures: [String] {
        var all: [String] = []
        for dir in [sharedCaptures, corpusDirectory].compactMap({ $0 }) {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { continue }
            all += names.filter { !$0.hasSuffix(".md") && !$0.hasPrefix(".") && refusedByDesign[$0] == nil }.sorted().map {
                dir + "/" + $0
            }
        }
        return all
    }

    /// Real captures blescope refuses, with the words of its error (`CaptureReaderTests` holds it to them): left out of
    /// ``realCaptures``, which the differential tests read whole.
    /// The KNOB capture (corpus batch (7)) is LMP inside Ethernet frames (InternalBlue, EtherType 0xFFF0): no Bluetooth
    /// link type, which tshark cannot decode either.
    public static let refusedByDesign: [String: String] = [
        "eth-lt1-internalblue-lmp_knob-nexus5-master-galaxys9-ssp-then-key-size-1-accepted.pcapng":
            "pcapng link type 1 is not a Bluetooth link type (supported: 187, 201, 254, 251, 256, 272, 192 with LE inside)"
    ]

    /// The folder `BLESCOPE_CORPUS` names (captures fetched from public repositories, never committed), or nil.
    public static let corpusDirectory: String? = {
        guard let dir = ProcessInfo.processInfo.environment["BLESCOPE_CORPUS"], !dir.isEmpty else { return nil }
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: dir, isDirectory: &isDirectory) && isDirectory.boolValue ? dir : nil
    }()

    public static func sample(_ name: String) -> String { samplesDirectory + "/" + name }

    /// Every generated Sample (Samples/generate), each in .btsnoop, .pcap and .pklg with a .truth.json.
    public static let sampleNames = [
        "eom-transfer", "bracelet", "nordic-dfu", "headset-ota", "legacy-dfu", "mcumgr-upload",
        "silabs-ota", "vendor-ota", "buttonless-dfu", "ti-oad", "dialog-suota",
        "esp-ble-ota", "telink-ota", "mcumgr-confirm",
        "cypress-bootloader", "eatt", "coc-stream",
        "diag-connect-timeout", "diag-bond-lost", "diag-pairing-failed", "diag-insufficient-encryption",
        "diag-cccd-never-written", "diag-att-timeout", "diag-stale-handle", "diag-param-rejected", "diag-mtu-23",
        "diag-supervision-timeout",
        "le-audio-unicast", "le-audio-broadcast", "le-audio-broadcast-receiver",
        "diff-fw1", "diff-fw2", "diff-central-a", "diff-central-b",
        "diag-unacked-terminate", "diag-unanswered-before-timeout", "diag-ssp-missing-key",
        "sec-legacy-short-key", "sec-sc-debug-key", "sec-bredr-key-downgrade",
        "a2dp-stream", "hfp-call", "hfp-esco-fails",
    ]

    public static let tsharkPath: String? = ["/usr/bin/tshark", "/usr/local/bin/tshark"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Runs tshark with `arguments`; nil when tshark is not installed or fails to start.
    public static func tshark(_ arguments: [String]) -> String? {
        guard let path = tsharkPath else { return nil }
        return run(path, arguments)
    }

    /// What a program printed and how it ended.
    public struct ProcessResult {
        public var stdout: String
        public var stderr: String
        public var status: Int32
    }

    /// Runs a program to its end; nil when it cannot be started. `directory` defaults to the
    /// repository root, `environment` to `NO_COLOR=1` and this process's `PATH`.
    public static func execute(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        directory: String = repositoryRoot
    ) -> ProcessResult? {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        p.currentDirectoryURL = URL(fileURLWithPath: directory)
        p.environment = environment ?? ["NO_COLOR": "1", "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"]
        let out = Pipe()
        p.standardOutput = out
        // A file, not a second pipe: reading one pipe to its end while the other fills would deadlock.
        let errPath = NSTemporaryDirectory() + "blescope-test-stderr-\(UUID().uuidString)"
        guard FileManager.default.createFile(atPath: errPath, contents: nil),
            let err = FileHandle(forWritingAtPath: errPath)
        else { return nil }
        defer { try? FileManager.default.removeItem(atPath: errPath) }
        p.standardError = err
        guard (try? p.run()) != nil else { return nil }
        let data = readToEnd(out.fileHandleForReading.fileDescriptor)
        p.waitUntilExit()
        try? err.close()
        let errData = FileManager.default.contents(atPath: errPath) ?? Data()
        return ProcessResult(
            stdout: String(decoding: data, as: UTF8.self), stderr: String(decoding: errData, as: UTF8.self),
            status: p.terminationStatus)
    }

    /// Everything readable from `fd` until its end. Foundation's readDataToEndOfFile() traps when a signal interrupts
    /// the read (EINTR), which a suite starting hundreds of processes in parallel meets: read(2) again instead.
    static func readToEnd(_ fd: Int32) -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n > 0 {
                data.append(contentsOf: buffer[0..<n])
            } else if n < 0 && errno == EINTR {
                continue
            } else {
                return data
            }
        }
    }

    /// Runs a program and returns its standard output (standard error is discarded).
    public static func run(_ executable: String, _ arguments: [String], exitCode: UnsafeMutablePointer<Int32>? = nil) -> String? {
        guard let r = execute(executable, arguments) else { return nil }
        exitCode?.pointee = r.status
        return r.stdout
    }

    /// tshark's `-T fields` output split into rows of tab-separated fields; nil without tshark.
    public static func tsharkFields(_ arguments: [String]) -> [[String]]? {
        tshark(arguments).map { text in
            text.split(separator: "\n").map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
        }
    }

    /// The `blescope` binary of this build (beside the test bundle), or the debug one.
    public static let blescopeBinary: String? = {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("blescope").path,
            Bundle.main.bundleURL.appendingPathComponent("blescope").path,
            repositoryRoot + "/.build/debug/blescope",
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()
}
