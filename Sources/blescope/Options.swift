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

    @OptionGroup var keys: KeyOptions

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
        return AnalyzerOptions(timeline: timeline, codecs: registry, gattMap: map, keys: try keys.keyMaterial())
    }

    func progress(for capture: CaptureFile) -> ProgressReporter? {
        quiet ? nil : ProgressReporter(label: capture.path, totalBytes: capture.fileSize)
    }
}

/// Keys for encrypted air captures: --ltk, --keys, --keys-from (analysing commands and `convert --decrypt`).
struct KeyOptions: ParsableArguments {
    @Option(
        name: .customLong("ltk"),
        help:
            "A long-term key (32 hex digits, most significant first, as sniffers print it) for encrypted links in air captures (repeatable)."
    )
    var ltks: [String] = []

    @Option(
        name: .customLong("keys"),
        help: "A YAML key file (address, ltk, ediv, rand, irk per device; see the README) for encrypted links and private addresses.")
    var keyFile: String?

    @Option(
        name: .customLong("keys-from"),
        help: "An HCI log of the phone (btsnoop, PacketLogger…) whose LTKs and distributed keys decrypt this air capture (repeatable).")
    var keysFrom: [String] = []

    /// The keys given by --ltk, --keys and --keys-from; exits 2 with a one-line error when one cannot be read.
    func keyMaterial() throws -> LinkKeyMaterial {
        var material = LinkKeyMaterial()
        do {
            for ltk in ltks { material = material + (try LinkKeyMaterial(ltkOption: ltk)) }
            if let keyFile {
                guard let text = readTextFile(keyFile) else {
                    writeStandardError("blescope: \(keyFile): cannot read the key file\n")
                    throw Exit.badInput
                }
                material = material + (try LinkKeyMaterial(keyFile: text, path: keyFile))
            }
        } catch let error as LinkKeyMaterial.LoadError {
            writeStandardError("blescope: \(error)\n")
            throw Exit.badInput
        }
        for log in keysFrom {
            do { material = material + (try LinkKeyMaterial(phoneLog: log)) } catch {
                writeStandardError("blescope: \(log): \(error)\n")
                throw Exit.badInput
            }
        }
        return material
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
