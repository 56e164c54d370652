import ArgumentParser
import BLEAnalysis
import BLECapture
import BLECodecs
import BLECore
import BLEReports

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
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

    @Flag(help: "More detail: the codec specs loaded (--codec) on stderr, and what each applies to; diagnose: info findings in full.")
    var verbose = false

    /// Loads the codecs and the GATT map; exits 2 with a one-line error when one cannot be read.
    /// `diagnosis: false` for a command that prints no diagnosis: the analyzer gathers no evidence for one.
    func analyzerOptions(timeline: Bool, diagnosis: Bool = true, announce: Bool = true) throws -> AnalyzerOptions {
        let registry = CodecRegistry()
        for path in codecs {
            do {
                if CaptureInputs.isDirectory(path) { _ = try registry.load(directory: path) } else { _ = try registry.load(specFile: path) }
            } catch {
                writeStandardError("blescope: \(error)\n")
                throw Exit.badInput
            }
        }
        if verbose && announce {
            for spec in registry.specs {
                writeStandardError("blescope: codec \(spec.name) from \(spec.file ?? "?"): \(spec.appliesTo)\n")
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
        return AnalyzerOptions(timeline: timeline, codecs: registry, gattMap: map, keys: try keys.keyMaterial(), evidence: diagnosis)
    }

    /// After a run: one line on stderr naming the loaded specs that decoded nothing in the captures read (a spec in
    /// the wrong folder, or for another device, would otherwise go unnoticed). Nothing with --quiet.
    func sayUnusedCodecs(_ options: AnalyzerOptions, captures: Int) {
        guard !quiet, let registry = options.codecs else { return }
        let unused = registry.specsThatDecodedNothing
        guard !unused.isEmpty else { return }
        let total = registry.specs.count
        let scope = captures == 1 ? "this capture" : "these \(captures) captures"
        let names = unused.map(\.name).joined(separator: ", ")
        let which = unused.count == total ? (total == 1 ? "the" : "all \(total)") : "\(unused.count) of \(total)"
        let note = "blescope: \(which) codec spec\(total == 1 ? "" : "s") matched nothing in \(scope): \(names)"
        writeStandardError(TextWidth.fit(note + (verbose ? "" : " (--verbose: what each applies to)"), width: TextWidth.standard) + "\n")
    }

    func progress(for capture: CaptureFile) -> ProgressReporter? {
        quiet ? nil : ProgressReporter(label: capture.path, totalBytes: capture.fileSize)
    }
}

/// How text output looks: the unit of rates and the width of lines (every command that prints for people).
struct DisplayOptions: ParsableArguments {
    @Option(help: "The unit every rate is shown in (JSON and CSV stay in bits per second).")
    var units: RateUnit = .kbps

    @Flag(help: "Lines as long as they are, instead of fitted to 100 columns (the terminal's width on a terminal).")
    var wide = false

    /// Applies --units to the run and returns the terminal standard output is, with the width text is fitted to.
    func terminal() -> Terminal {
        RateUnit.display = units
        return .standardOutput(width: TextWidth.forStandardOutput(wide: wide))
    }
}

extension RateUnit: ExpressibleByArgument {
    public init?(argument: String) {
        guard let unit = RateUnit.allCases.first(where: { $0.rawValue.lowercased() == argument.lowercased() }) else { return nil }
        self = unit
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
