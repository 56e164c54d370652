import ArgumentParser
import BLEAnalysis
import BLECapture
import BLEReports

/// `blescope diff A B`: what changed between two captures (firmware N and N+1, two phones, a golden run and today's).
struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Say what changed between two captures: GATT, link, procedure order, throughput, updates, findings.",
        discussion: """
            Both captures are analysed as `report` analyses them and compared: GATT per peer matched by UUID (handles \
            that moved said once), the link (parameters, PHY, data length, ATT_MTU, encryption, what was asked and \
            by whom), the order of the GATT procedures with the first step where they part, throughput per stream \
            (matched by UUID, direction and kind) and updates, diagnosis findings, LE Audio streams. Each difference \
            is ranked and names its frames in A and in B. Peers are matched by address (by identity address when \
            --irk or --keys gives their IRK), else by their name (a Device Name read, else the Local Name their \
            address advertised), the services they show or the handles their traffic used, then in order; each pair \
            says how. The formats may differ. Two \
            directories compare their files pairwise by name. Exit codes: 0 compared (differences or not), 1 a \
            --fail-on threshold was crossed (one FAIL line each), 2 a capture could not be read or bad usage.
            """)

    @Argument(help: "The capture (or directory of captures) before: the golden run, the old firmware.")
    var a: String

    @Argument(help: "The capture (or directory) after.")
    var b: String

    @Flag(help: "JSON (schemas/diff.schema.json) instead of text.")
    var json = false

    @Option(help: "text, md (Markdown for a ticket) or json (as --json).")
    var format: String = "text"

    @Option(help: "Only connections to this peer address (or identity address) on both sides.")
    var peer: String?

    @Option(help: "Only connection N of A against connection M of B: N or N:M (1-based, as every output numbers them).")
    var connection: String?

    @Option(
        name: .customLong("irk"),
        help: ArgumentHelp(
            "An identity resolving key (32 hex digits, most significant first), optionally @ its identity address: peers at private addresses it resolves are one device on both sides (repeatable).",
            valueName: "HEX[@ADDRESS]"))
    var irks: [String] = []

    @Option(
        name: .customLong("fail-on"),
        help: "Exit 1 when B crosses one of these against A: rate-drop=N%, new-error, gatt-changed, mtu-lower (comma-separated).")
    var failOn: String?

    @OptionGroup var analysis: AnalysisOptions
    @OptionGroup var display: DisplayOptions

    var outputFormat: String { json ? "json" : format }

    func validate() throws {
        guard ["text", "md", "json"].contains(outputFormat) else { throw ValidationError("--format is text, md or json") }
        if json && format != "text" && format != "json" { throw ValidationError("--json and --format \(format) exclude each other") }
        if let connection, connectionPair(connection) == nil {
            throw ValidationError("--connection takes N or N:M (connection numbers, 1-based)")
        }
        if let failOn {
            do { _ = try DiffGate(parsing: failOn) } catch { throw ValidationError(error.description) }
        }
        _ = try identityKeys()
    }

    /// The `--irk` keys, read as a key file's `irk:` and `address:` entries are.
    func identityKeys() throws -> [IdentityKey] {
        try irks.flatMap { text -> [IdentityKey] in
            let parts = text.split(separator: "@", maxSplits: 1).map(String.init)
            let entry = "- irk: \(parts[0])\n" + (parts.count > 1 ? "  address: \(parts[1])\n" : "")
            do { return try LinkKeyMaterial(keyFile: entry, path: "--irk \(text)").identityKeys } catch {
                throw ValidationError("\(error)")
            }
        }
    }

    func connectionPair(_ text: String) -> (a: Int, b: Int)? {
        let parts = text.split(separator: ":").map { Int($0) }
        guard (1...2).contains(parts.count), parts.allSatisfy({ ($0 ?? 0) >= 1 }) else { return nil }
        return (parts[0]!, parts.last!!)
    }

    func run() throws {
        let terminal = display.terminal()
        let gate = try failOn.map { text in try DiffGate(parsing: text) }
        let options = DiffOptions(peer: peer, connection: connection.flatMap(connectionPair), identityKeys: try identityKeys())
        let analyzerOptions = try analysis.analyzerOptions(timeline: false)
        let pairs = try filePairs()
        let out = OutputStream()
        var breached = 0
        var unreadable = 0
        var json = JSONWriter(capacity: 4096)
        json.beginObject()
        json.field("schema", "blescope-diff/1")
        json.beginArray("comparisons")
        for (i, (pathA, pathB)) in pairs.pairs.enumerated() {
            let (fa, fb) = CaptureDiffer.analyze(pathA, pathB, analyzerOptions: analyzerOptions)
            if let error = fa.error ?? fb.error {
                writeStandardError("blescope: \(fa.error != nil ? pathA : pathB): \(error)\n")
                unreadable += 1
                continue
            }
            let diff = CaptureDiffer.compare(fa, fb, options: options)
            let breaches = gate?.breaches(diff)
            breached += breaches?.count ?? 0
            switch outputFormat {
            case "json": DiffWriter.writeJSON(diff, breaches: breaches, to: &json)
            case "md": out.write((i > 0 ? "\n" : "") + DiffWriter.markdown(diff, breaches: breaches))
            default: out.write((i > 0 ? "\n" : "") + DiffWriter.text(diff, breaches: breaches, terminal: terminal))
            }
        }
        json.endArray()
        json.beginArray("only_in_a")
        for p in pairs.onlyA { json.value(p) }
        json.endArray()
        json.beginArray("only_in_b")
        for p in pairs.onlyB { json.value(p) }
        json.endArray()
        json.endObject()
        if outputFormat == "json" {
            out.write(json.string + "\n")
        } else {
            let bullet = outputFormat == "md" ? "- " : ""
            for p in pairs.onlyA { out.write(terminal.fit(bullet + "only in A (no file of that name in B): \(p)") + "\n") }
            for p in pairs.onlyB { out.write(terminal.fit(bullet + "only in B (no file of that name in A): \(p)") + "\n") }
        }
        out.flush()
        if unreadable > 0 { throw Exit.badInput }
        if breached > 0 { throw Exit.checkFailed }
    }

    /// The captures to compare: A and B, or the files of two directories paired by their path below each.
    func filePairs() throws -> (pairs: [(String, String)], onlyA: [String], onlyB: [String]) {
        let dirA = CaptureInputs.isDirectory(a), dirB = CaptureInputs.isDirectory(b)
        guard dirA || dirB else { return ([(a, b)], [], []) }
        guard dirA && dirB else {
            writeStandardError("blescope: diff compares two files or two directories, not a file with a directory\n")
            throw Exit.badInput
        }
        let filesA = relativeFiles(a), filesB = relativeFiles(b)
        let setB = Set(filesB)
        let pairs = filesA.filter { setB.contains($0) }.map { (a + "/" + $0, b + "/" + $0) }
        return (pairs, filesA.filter { !setB.contains($0) }, filesB.filter { !Set(filesA).contains($0) })
    }

    func relativeFiles(_ directory: String) -> [String] {
        let root = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
        // Files that are not captures (notes, truth files) are left out quietly: only captures pair.
        var inputs = CaptureInputs([root])
        inputs.separateNonCaptures(jobs: 1)
        return inputs.files.map { String($0.dropFirst(root.count + 1)) }.sorted()
    }
}
