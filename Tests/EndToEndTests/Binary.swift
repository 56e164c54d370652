import BLETestSupport
import Foundation
import Testing

/// Runs the built `blescope` binary (the test target depends on it, so `swift test` builds it).
enum Blescope {
    static let path: String? = {
        let candidates = [
            URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("blescope").path,
            Bundle.main.bundleURL.appendingPathComponent("blescope").path,
            TestEnvironment.repositoryRoot + "/.build/debug/blescope",
        ]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    struct Result {
        var stdout: String
        var status: Int32
        var stderr = ""
        var json: Any? { try? JSONSerialization.jsonObject(with: Data(stdout.utf8)) }
        var jsonLines: [[String: Any]] {
            stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        }
    }

    /// Runs blescope from the repository root with `arguments`.
    static func run(_ arguments: [String]) throws -> Result {
        let binary = try #require(path, "the blescope binary was not built")
        let p = Process()
        p.executableURL = URL(fileURLWithPath: binary)
        p.arguments = arguments
        p.currentDirectoryURL = URL(fileURLWithPath: TestEnvironment.repositoryRoot)
        p.environment = ["NO_COLOR": "1", "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin"]
        let out = Pipe()
        p.standardOutput = out
        // A file, not a second pipe: reading one pipe to its end while the other fills would deadlock.
        let errURL = FileManager.default.temporaryDirectory.appendingPathComponent("blescope-stderr-\(UUID().uuidString)")
        FileManager.default.createFile(atPath: errURL.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errURL) }
        p.standardError = try FileHandle(forWritingTo: errURL)
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let err = (try? Data(contentsOf: errURL)) ?? Data()
        return Result(stdout: String(decoding: data, as: UTF8.self), status: p.terminationStatus,
                      stderr: String(decoding: err, as: UTF8.self))
    }

    static func truth(_ sample: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: TestEnvironment.sample("\(sample).truth.json")))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}
