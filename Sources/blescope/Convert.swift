import ArgumentParser
import BLEAnalysis
import BLECapture
import BLEReports

struct Convert: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Rewrite a capture in another format (btsnoop, pcap, pcapng, PacketLogger), optionally with the findings as comments.",
        discussion: """
            The output format comes from OUT's extension (.btsnoop/.log/.cfa → btsnoop, .pcap → pcap, \
            .pcapng → pcapng, .pklg → PacketLogger) or from --format. Records the output format cannot hold (e.g. \
            text notes in btsnoop H4) are skipped and counted on stderr. pcapng holds every record, so frame numbers \
            stay those of the input: a btsnoop H4 or PacketLogger HCI record is written under LINKTYPE 201, a Linux \
            monitor record under 254, a pcap packet under its own link type, a PacketLogger note under 147 (USER0).

            --annotate (pcapng): each finding of `blescope diagnose` becomes a comment on its deciding frame \
            ("DC-01 critical: one sentence") and a summary of them the file's comment, so Wireshark shows them: \
            `tshark -r OUT -Y frame.comment -T fields -e frame.number -e frame.comment`.

            --anonymize replaces every device address (public and random; the random sub-type is kept) and device \
            name by a pseudonym, zeroes keys (LTK, IRK, CSRK, link keys, PINs) and treats attribute values as \
            --values says; lengths and records are kept, so the result decodes the same. It reads the input once \
            more (to learn the addresses and names first) and reports what it replaced on stderr. With --decrypt, \
            the decrypted records are anonymized.
            """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
        case btsnoop, btsnoopH1 = "btsnoop-h1", btsnoopMonitor = "btsnoop-monitor", pcap, pcapng, pklg, pklgBE = "pklg-be"
    }

    @Argument(help: "Input capture (any supported format, .gz too).")
    var input: String

    @Argument(help: "Output file.")
    var output: String

    @Option(help: "Output format: \(Format.allCases.map(\.rawValue).joined(separator: ", ")).")
    var format: Format?

    @Flag(
        help:
            "Air captures: write the encrypted link-layer packets blescope can decrypt (keys from --ltk, --keys, --keys-from and pairings in the capture) in the clear, MIC removed, flagged decrypted, so any tool reads them."
    )
    var decrypt = false

    @OptionGroup var keys: KeyOptions

    @Flag(help: "pcapng: each finding of the diagnosis as a comment on its deciding frame, their summary as the file's comment.")
    var annotate = false

    @Flag(help: "Replace addresses and names by pseudonyms, zero keys (see --values, --salt).")
    var anonymize = false

    @Option(
        help:
            "With --anonymize: the secret the pseudonyms derive from; the same salt gives the same pseudonyms in every file (default: random, so each run differs)."
    )
    var salt: String?

    @Option(
        help:
            "With --anonymize: attribute values \(AnonymizedValues.allCases.map(\.rawValue).joined(separator: "|")) (default keep; device names are replaced in every case)."
    )
    var values: AnonymizedValues?

    func validate() throws {
        if format == nil && Convert.format(forExtensionOf: output) == nil {
            throw ValidationError("cannot tell the output format from '\(output)': use --format")
        }
        if input == output { throw ValidationError("input and output are the same file") }
        if !anonymize && (salt != nil || values != nil) { throw ValidationError("--salt and --values go with --anonymize") }
        if annotate && (format ?? Convert.format(forExtensionOf: output)) != .pcapng {
            throw ValidationError("--annotate writes pcapng: name OUT .pcapng or give --format pcapng")
        }
        if annotate && anonymize {
            throw ValidationError(
                "--annotate and --anonymize together would put real addresses in the comments: annotate the anonymized file")
        }
    }

    static func format(forExtensionOf path: String) -> Format? {
        let lower = path.lowercased()
        if lower.hasSuffix(".btsnoop") || lower.hasSuffix(".log") || lower.hasSuffix(".cfa") { return .btsnoop }
        if lower.hasSuffix(".pcap") { return .pcap }
        if lower.hasSuffix(".pcapng") { return .pcapng }
        if lower.hasSuffix(".pklg") { return .pklg }
        return nil
    }

    func run() throws {
        let capture: CaptureFile
        do { capture = try CaptureFile.open(path: input) } catch {
            writeStandardError("blescope: \(error)\n")
            throw Exit.badInput
        }
        let chosen = format ?? Convert.format(forExtensionOf: output)!
        let writer = try openWriter(chosen, input: capture)
        var decrypted: [Int: [UInt8]] = [:]
        if decrypt {
            // First pass: decrypt; second pass: copy, putting each decrypted record in place of its encrypted one.
            let analyzer = Analyzer(options: AnalyzerOptions(timeline: false, keys: try keys.keyMaterial()))
            analyzer.onDecryptedRecord = { frame, bytes in decrypted[frame] = bytes }
            while let record = capture.next() { analyzer.process(record) }
            analyzer.finish()
            let undecrypted = analyzer.connections.compactMap(\.linkLayer).reduce(0) { $0 + $1.encryptedUndecrypted + $1.micFailures }
            writeStandardError("blescope: \(decrypted.count) record(s) decrypted; \(undecrypted) encrypted record(s) left as they were\n")
        }
        /// Every record of the input as it is to be written: decrypted where --decrypt could.
        func eachRecord(_ file: CaptureFile, _ body: (OwnedRecord?, CaptureRecord) throws -> Void) rethrows {
            while let record = file.next() {
                if let bytes = decrypted[record.frame] {
                    var owned = OwnedRecord(record)
                    owned.bytes = bytes
                    owned.originalLength = bytes.count
                    try body(owned, record)
                } else {
                    try body(nil, record)
                }
            }
        }
        func reopen() throws -> CaptureFile {
            do { return try CaptureFile.open(path: input) } catch {
                writeStandardError("blescope: \(error)\n")
                throw Exit.badInput
            }
        }
        var anonymizer: CaptureAnonymizer?
        if anonymize {
            let secret: [UInt8] = salt.map { Array($0.utf8) } ?? (0..<16).map { _ in UInt8.random(in: 0...255) }
            let a = CaptureAnonymizer(salt: secret, values: values ?? .keep)
            // A pass that learns every address and name, so that each is replaced wherever it appears, even before
            // the record that names it.
            eachRecord(decrypt ? try reopen() : capture) { owned, record in
                if let owned { a.learn(owned) } else { a.learn(record) }
            }
            anonymizer = a
        }
        let records = decrypt || anonymize ? try reopen() : capture
        // The input's packet comments are free text (a key, a name): not written, and counted.
        var commentsLeftOut = 0
        do {
            try eachRecord(records) { owned, record in
                if record.comment.count > 0 { commentsLeftOut += 1 }
                switch (owned, anonymizer) {
                case let (owned?, anonymizer?): try writer.write(anonymizer.anonymize(owned))
                case let (nil, anonymizer?): try writer.write(anonymizer.anonymize(record))
                case let (owned?, nil): try writer.write(owned)
                case (nil, nil): try writer.write(record)
                }
            }
            try writer.close()
        } catch {
            writeStandardError("blescope: \(error)\n")
            throw ExitCode.failure
        }
        for f in capture.findings { writeStandardError("blescope: \(input): \(f)\n") }
        if let pcapng = writer as? AnnotatingWriter, pcapng.beforeEpoch > 0 {
            writeStandardError(
                "blescope: \(pcapng.beforeEpoch) record(s) dated before 1970: pcapng timestamps cannot hold their time (written wrapped)\n")
        }
        if let annotating = writer as? AnnotatingWriter {
            let frames = annotating.annotations.packetComments.count
            writeStandardError(
                "blescope: \(annotating.pcapng.commentsWritten) comment(s) on \(frames) frame(s), and the summary as the file's comment\n")
        }
        if let anonymizer {
            writeStandardError("blescope: \(anonymizer.report.summary)\n")
            if salt == nil {
                writeStandardError("blescope: the salt was random: pseudonyms differ from other runs (--salt to keep them)\n")
            }
        }
        if commentsLeftOut > 0 {
            writeStandardError("blescope: \(commentsLeftOut) packet comment(s) of the input not written\n")
        }
        if writer.recordsSkipped > 0 {
            writeStandardError("blescope: \(writer.recordsSkipped) record(s) that \(writer.formatName) cannot hold were skipped\n")
        }
    }

    /// The writer of `chosen`: pcapng (with the diagnosis's comments under --annotate) or another format.
    func openWriter(_ chosen: Format, input capture: CaptureFile) throws -> any RecordSink {
        do {
            guard chosen == .pcapng else {
                return try CaptureFileWriter(path: output, format: CaptureConversion.outputFormat(chosen.rawValue, input: capture))
            }
            var annotations = CaptureAnnotations.none
            if annotate { annotations = try self.annotations() }
            let pcapng = try PcapngFileWriter(
                path: output, input: capture, sectionComment: annotations.sectionComment, application: "blescope \(BlescopeVersion.number)")
            return AnnotatingWriter(pcapng: pcapng, annotations: annotations)
        } catch let error as CaptureWriteError {
            writeStandardError("blescope: \(error)\n")
            throw Exit.badInput
        }
    }

    /// The diagnosis of the input as comments (one more pass over it, with the keys given).
    func annotations() throws -> CaptureAnnotations {
        let capture: CaptureFile
        do { capture = try CaptureFile.open(path: input) } catch {
            writeStandardError("blescope: \(error)\n")
            throw Exit.badInput
        }
        let options = AnalyzerOptions(timeline: false, keys: try keys.keyMaterial())
        return CaptureAnnotations(DiagnosisReport.analyze(capture, options: options))
    }
}

/// Where `convert` writes records: a ``CaptureFileWriter`` or the pcapng writer with its comments.
protocol RecordSink: AnyObject {
    func write(_ record: CaptureRecord) throws
    func write(_ record: OwnedRecord) throws
    func close() throws
    var recordsSkipped: Int { get }
    var formatName: String { get }
}

extension CaptureFileWriter: RecordSink {
    var formatName: String { format.description }
}

/// The pcapng writer, each record with the comments of its frame.
final class AnnotatingWriter: RecordSink {
    let pcapng: PcapngFileWriter
    let annotations: CaptureAnnotations
    init(pcapng: PcapngFileWriter, annotations: CaptureAnnotations) {
        self.pcapng = pcapng
        self.annotations = annotations
    }
    /// Records dated before 1970, whose time pcapng (unsigned timestamps) cannot hold: said on stderr.
    private(set) var beforeEpoch = 0
    func write(_ record: CaptureRecord) throws {
        if record.timestamp.microseconds < 0 { beforeEpoch += 1 }
        try pcapng.write(record, comments: annotations.packetComments[record.frame] ?? [])
    }
    func write(_ record: OwnedRecord) throws {
        if record.timestamp.microseconds < 0 { beforeEpoch += 1 }
        try pcapng.write(record, comments: annotations.packetComments[record.frame] ?? [])
    }
    func close() throws { try pcapng.close() }
    var recordsSkipped: Int { 0 }
    var formatName: String { "pcapng" }
}

/// Picks the concrete output format: the datalink follows the input where the name leaves it open.
enum CaptureConversion {
    static func outputFormat(_ name: String, input: CaptureFile) -> CaptureOutputFormat {
        // Every link-layer datalink the reader takes (PPI, 192, too: its records keep their PPI header).
        let linkLayer = PcapLinkType.isLinkLayer(input.datalink) && input.format.name.hasPrefix("pcap")
        switch name {
        case "btsnoop-h1": return .btsnoop(datalink: 1001)
        case "btsnoop-monitor": return .btsnoop(datalink: 2001)
        case "btsnoop": return .btsnoop(datalink: input.format.name == "btsnoop" && input.datalink == 2001 ? 2001 : 1002)
        case "pcap":
            if linkLayer { return .pcap(linkType: input.datalink) }
            return .pcap(linkType: input.datalink == 254 || input.datalink == 2001 ? 254 : 201)
        case "pklg-be": return .packetLogger(bigEndian: true)
        default: return .packetLogger(bigEndian: false)
        }
    }
}

extension AnonymizedValues: ExpressibleByArgument {}
