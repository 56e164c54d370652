import BLETestSupport
import Foundation
import Testing

/// Runs the built `blescope` binary (the test target depends on it, so `swift test` builds it).
enum Blescope {
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
        let binary = try #require(TestEnvironment.blescopeBinary, "the blescope binary was not built")
        let r = try #require(TestEnvironment.execute(binary, arguments))
        return Result(stdout: r.stdout, status: r.status, stderr: r.stderr)
    }

    static func truth(_ sample: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: TestEnvironment.sample("\(sample).truth.json")))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}
