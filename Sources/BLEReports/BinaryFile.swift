#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whole files in and out: expected firmware images, extracted images and messages, JUnit XML.
public enum BinaryFile {
    /// The file's bytes, or nil when it cannot be opened or read.
    public static func read(_ path: String) -> [UInt8]? {
        guard let f = fopen(path, "rb") else { return nil }
        defer { fclose(f) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = fread(&buffer, 1, buffer.count, f)
            if n <= 0 { break }
            bytes.append(contentsOf: buffer[0..<n])
        }
        return ferror(f) == 0 ? bytes : nil
    }

    /// Writes `bytes` to `path` (created or truncated); false when it cannot be written whole.
    public static func write(_ path: String, _ bytes: [UInt8]) -> Bool {
        guard let f = fopen(path, "wb") else { return false }
        defer { fclose(f) }
        return bytes.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, f) } == bytes.count
    }

    /// Creates the directory (mode 755) when it is not there; a directory that cannot be made shows up as files that
    /// cannot be written.
    public static func makeDirectory(_ path: String) { mkdir(path, 0o755) }
}
