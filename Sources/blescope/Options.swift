import ArgumentParser
import BLEAnalysis
import BLECapture
import BLECodecs
import BLECore
import BLEReports
#if canImport(Glibc)
import Glibc
#endif

/// Options every analysing command shares: codecs, a GATT map, quiet.
struct AnalysisOptions: ParsableArguments {
    @Option(name: .customLong("codec"), help: "A YAML codec spec, or a directory of them (repeatable).")
    var codecs: [String] = []

    @Option(name: .customLong("gatt"), help: "A YAML handle map (handle: UUID or {uuid:, name:}) for captures without discovery.")
    var gattMap: String?

    @Flag(help: "No progress on stderr.")
    var quiet = false

    /// Loads the codecs and the GATT map; exits 2 with a one-line error when one cannot be read.
    func analyzerOptions(timeline: Bool) throws -> AnalyzerOptions {
        let registry = CodecRegistry()
        for path in codecs {
            var isDirectory = false
            var st = stat()
            if stat(path, &st) == 0 { isDirectory = (st.st_mode & S_IFMT) == S_IFDIR }
            do {
                if isDirectory { _ = try registry.load(directory: path) } else { _ = try registry.load(specFile: path) }
            } catch {
                writeStandardError("blescope: \(error)\n")
                throw Exit.badInput
            }
        }
        var map: GATTMap? = nil
        if let gattMap {
            guard let text = readTextFile(gattMap) else {
                writeStandardError("blescope: \(gattMap): cannot read the GATT map\n")
                throw Exit.badInput
            }
            do { map = try GATTMap(yaml: text, file: gattMap) } catch {
                writeStandardError("blescope: \(error)\n")
                throw Exit.badInput
            }
        }
        return AnalyzerOptions(timeline: timeline, codecs: registry, gattMap: map)
    }

    func progress(for capture: CaptureFile) -> ProgressReporter? {
        quiet ? nil : ProgressReporter(label: capture.path, totalBytes: capture.fileSize)
    }
}

func openCapture(_ path: String) throws -> CaptureFile {
    do { return try CaptureFile.open(path: path) } catch {
        writeStandardError("blescope: \(error)\n")
        throw Exit.badInput
    }
}

func readTextFile(_ path: String) -> String? {
    guard let f = fopen(path, "rb") else { return nil }
    defer { fclose(f) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buffer, 1, buffer.count, f)
        if n <= 0 { break }
        bytes.append(contentsOf: buffer[0..<n])
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// `0x0040`, `64`
func parseInteger16(_ s: String) -> UInt16? {
    let t = s.lowercased()
    return t.hasPrefix("0x") ? UInt16(t.dropFirst(2), radix: 16) : UInt16(t)
}
