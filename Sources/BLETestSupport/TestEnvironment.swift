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

    /// `<repo>/../shared/captures`, or nil when it is absent (tests that need it skip).
    public static let sharedCaptures: String? = {
        let dir = repositoryRoot + "/../shared/captures"
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: dir, isDirectory: &isDirectory) && isDirectory.boolValue ? dir : nil
    }()

    /// Every real capture in the shared folder (full paths), sorted.
    public static var realCaptures: [String] {
        guard let dir = sharedCaptures, let names = try? FileManager.default.contentsOfDirectory(atPath: dir) else { return [] }
        return names.filter { !$0.hasSuffix(".md") }.sorted().map { dir + "/" + $0 }
    }

    public static func sample(_ name: String) -> String { samplesDirectory + "/" + name }

    public static let tsharkPath: String? = ["/usr/bin/tshark", "/usr/local/bin/tshark"].first {
        FileManager.default.isExecutableFile(atPath: $0)
    }

    /// Runs tshark with `arguments`; nil when tshark is not installed or fails to start.
    public static func tshark(_ arguments: [String]) -> String? {
        guard let path = tsharkPath else { return nil }
        return run(path, arguments)
    }

    /// Runs a program and returns its standard output (standard error is discarded).
    public static func run(_ executable: String, _ arguments: [String], exitCode: UnsafeMutablePointer<Int32>? = nil) -> String? {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = arguments
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        guard (try? p.run()) != nil else { return nil }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        exitCode?.pointee = p.terminationStatus
        return String(decoding: data, as: UTF8.self)
    }
}
