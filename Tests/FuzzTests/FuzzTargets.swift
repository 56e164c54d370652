import BLEAnalysis
import BLECapture
import BLECodecs
import BLECore
import BLEReports

// Fuzz targets shared by the seeded fuzzer of the test suite (FuzzTests.swift) and the libFuzzer
// executable built by scripts/fuzz.sh (which compiles this file with its own entry point), so it
// imports neither Testing nor BLETestSupport.
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One fuzz target: how raw fuzzer bytes become a capture, and what runs over it.
enum FuzzTarget: String, CaseIterable, Sendable {
    /// btsnoop records behind a fixed H4 file header.
    case btsnoop
    /// Classic pcap records (blescope's own reader) behind a fixed LINKTYPE 201 header.
    case pcap
    /// pcapng (``PcapngReader``: interfaces, sections, byte orders, damaged blocks) or classic pcap: the bytes as they are.
    case pcapng
    /// PacketLogger records (no header; the sniffer must accept them).
    case pklg
    /// The bytes are a btsnooz blob body (records), wrapped in an Android bug report.
    case btsnooz
    /// The bytes gzip-compressed, read through the streaming gzip path of a real file.
    case gzip
    /// The whole pipeline: reader → Analyzer (timeline, Samples/codecs) → transfers, OTA, GATT usage, throughput → JSON/CSV.
    case pipeline
    /// `blescope report` over one capture: the analysis behind it (trackers on a second thread for odd-sized
    /// inputs), then its HTML (SVG charts), Markdown (sparklines) and JSON renderings.
    case report

    static let btsnoopHeader: [UInt8] = Array("btsnoop\0".utf8) + [0, 0, 0, 1, 0, 0, 0x03, 0xEA]
    static let pcapHeader: [UInt8] = [0xD4, 0xC3, 0xB2, 0xA1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 0, 0, 201, 0, 0, 0]

    /// The capture bytes this target reads for fuzzer input `data`.
    func capture(from data: [UInt8]) -> [UInt8] {
        switch self {
        case .btsnoop: Self.btsnoopHeader + data
        case .pcap: Self.pcapHeader + data
        case .pcapng, .pklg, .pipeline, .report, .gzip: data
        case .btsnooz: FuzzTargets.bugReport(blobBody: data)
        }
    }

    /// What seeds look like for this target, from a whole capture file's bytes (nil: not a seed for it).
    func seed(fromCapture bytes: [UInt8]) -> [UInt8]? {
        func strip(_ header: [UInt8]) -> [UInt8]? {
            bytes.count >= header.count && bytes.prefix(8).elementsEqual(header.prefix(8)) ? Array(bytes.dropFirst(header.count)) : nil
        }
        switch self {
        case .btsnoop: return bytes.starts(with: Array("btsnoop\0".utf8)) ? Array(bytes.dropFirst(16)) : nil
        case .pcap: return bytes.starts(with: [0xD4, 0xC3, 0xB2, 0xA1]) ? Array(bytes.dropFirst(24)) : nil
        case .pcapng: return bytes.starts(with: [0x0A, 0x0D, 0x0D, 0x0A]) || bytes.starts(with: [0xD4, 0xC3, 0xB2, 0xA1]) ? bytes : nil
        case .pklg:
            return bytes.starts(with: Array("btsnoop\0".utf8)) || bytes.starts(with: [0xD4, 0xC3, 0xB2, 0xA1])
                || bytes.starts(with: [0x0A, 0x0D, 0x0D, 0x0A]) ? nil : bytes
        case .btsnooz: return FuzzTargets.btsnoozBody(fromBTSnoop: bytes)
        case .gzip, .pipeline, .report: return bytes
        }
    }
}

enum FuzzTargets {
    /// TKs the legacy-pairing searches of one input may try (c1 and the MIC search each): 10,000, about 10 ms in the
    /// release, where the command line's 2,000,000 cost a mutated air capture whose pairing says Passkey Entry 1.3 s,
    /// and the fuzzer's time is for the code, not for AES. The budget's own paths stay covered: a search that spends it
    /// says so in a finding.
    static let keySearchBudget = 10_000

    /// Repository root, from this file's path (Tests/FuzzTests/FuzzTargets.swift).
    static let repositoryRoot: String = {
        var parts = String(#filePath).split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)
        return parts.joined(separator: "/")
    }()

    /// SIG codecs plus the sample YAML specs, loaded once.
    static let codecs: CodecRegistry = {
        let registry = CodecRegistry()
        _ = try? registry.load(directory: repositoryRoot + "/Samples/codecs")
        return registry
    }()

    /// Runs `target` over fuzzer input `data`. Returns a small number so the work is not optimized away.
    @discardableResult
    static func run(_ target: FuzzTarget, _ data: [UInt8]) -> Int {
        let bytes = target.capture(from: data)
        switch target {
        case .pipeline: return pipeline(bytes)
        case .report: return report(bytes)
        case .gzip: return readGzip(bytes)
        default: return read(bytes)
        }
    }

    /// Opens and walks every record, then the reader's summary (`blescope info --no-decode`): the records counted,
    /// their times and the completeness verdict, not the analysis. With it (`CaptureInfo(reading:)` decodes, as `info`
    /// does), each reader target ran the whole pipeline and was about ten times slower; the `pipeline` and `report`
    /// targets fuzz the analysis.
    static func read(_ bytes: [UInt8]) -> Int {
        guard !bytes.isEmpty, let capture = try? CaptureFile.open(bytes: bytes, name: "fuzz") else { return 0 }
        var total = 0
        while let r = capture.next() {
            total &+= r.bytes.count &+ r.frame
            if r.kind == .text { total &+= r.text.utf8.count }
        }
        total &+= capture.findings.count
        if let again = try? CaptureFile.open(bytes: bytes, name: "fuzz") {
            total &+= CaptureInfo(reading: again, decode: false).json.utf8.count
        }
        return total
    }

    /// Writes the bytes gzip-compressed to a temporary file and reads it through the streaming path
    /// (every 4th input: the raw bytes, so corrupt gzip streams are read too).
    static func readGzip(_ bytes: [UInt8]) -> Int {
        let payload = bytes.count % 4 == 0 && bytes.starts(with: [0x1F, 0x8B]) ? bytes : zlibDeflate(bytes, gzip: true)
        var template = Array("/tmp/blescope-fuzz-XXXXXX".utf8CString)
        let fd = mkstemp(&template)
        guard fd >= 0 else { return 0 }
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { unlink(path) }
        _ = payload.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard let capture = try? CaptureFile.open(path: path) else { return 0 }
        var total = 0
        while let r = capture.next() { total &+= r.bytes.count }
        return total &+ capture.findings.count
    }

    /// The whole pipeline over one capture, JSON outputs included.
    static func pipeline(_ bytes: [UInt8]) -> Int {
        guard !bytes.isEmpty, let capture = try? CaptureFile.open(bytes: bytes, name: "fuzz") else { return 0 }
        let options = AnalyzerOptions(timeline: true, codecs: codecs, maxKeySearchCandidates: keySearchBudget)
        var renderer = TimelineJSONRenderer()
        var out: [UInt8] = []
        var written = 0
        // The typed entry point, as the commands use it: each tracker's result comes back typed, none is cast out of observers.
        let observing = Observing(
            throughput: ThroughputOptions(), transfers: TransferOptions(), otaStallThreshold: OTATracker().stallThreshold,
            gattUsage: true)
        let analysis = CaptureAnalysis.analyze(
            capture, options: options, observing: observing,
            onEvent: { e, _ in
                renderer.append(e, to: &out)
                if out.count > 1 << 16 { written &+= out.count; out.removeAll(keepingCapacity: true) }
            })
        var total = written &+ out.count &+ analysis.findings.count &+ analysis.connections.count
        if let t = analysis.transfers { total &+= TransfersReport.json(t.transfers, findings: t.findings).utf8.count }
        if let sessions = analysis.otaSessions { total &+= OTAReport.json(sessions).utf8.count }
        if let g = analysis.gattUsage { total &+= g.byConnection.count }
        let report = ThroughputReport(analysis)
        total &+= report.json().utf8.count &+ report.csv().utf8.count
        return total
    }

    /// One capture through `Report.analyze` and the three report renderers.
    static func report(_ bytes: [UInt8]) -> Int {
        guard !bytes.isEmpty, let capture = try? CaptureFile.open(bytes: bytes, name: "fuzz") else { return 0 }
        let options = ReportOptions(backgroundTrackers: bytes.count % 2 == 1)
        let f = Report.analyze(
            capture: capture, options: options,
            analyzerOptions: AnalyzerOptions(timeline: false, codecs: codecs, maxKeySearchCandidates: keySearchBudget))
        return HTMLReport.file(f, index: 1, options: options).utf8.count
            &+ HTMLReport.overview([FileOverview(f), FileOverview(f)]).utf8.count
            &+ MarkdownReport.file(f, options: options).utf8.count &+ JSONReport.file(f).utf8.count
    }

    // MARK: btsnooz wrapping

    /// An Android bug report whose btsnooz block carries `blobBody` as its (deflated) record area.
    static func bugReport(blobBody: [UInt8]) -> [UInt8] {
        var blob: [UInt8] = [2]
        let lastMs: UInt64 = 1_700_000_000_000
        for i in 0..<8 { blob.append(UInt8(truncatingIfNeeded: lastMs >> (8 * UInt64(i)))) }
        blob += zlibDeflate(blobBody)
        var text = Array("== dumpstate: 2026-01-01 00:00:00\n--- BEGIN:BTSNOOP_LOG_SUMMARY (\(blob.count) bytes in) ---\n".utf8)
        let encoded = base64(blob)
        var i = 0
        while i < encoded.count {
            text += encoded[i..<min(encoded.count, i + 76)]
            text.append(0x0A)
            i += 76
        }
        text += Array("--- END:BTSNOOP_LOG_SUMMARY ---\n".utf8)
        return text
    }

    /// btsnooz v2 records (length+1, packet length+1, delta ms, type, data) from an H4 btsnoop file's records.
    static func btsnoozBody(fromBTSnoop bytes: [UInt8]) -> [UInt8]? {
        guard bytes.count > 16, bytes.starts(with: Array("btsnoop\0".utf8)), bytes[15] == 0xEA else { return nil }
        var out: [UInt8] = []
        var at = 16
        while at + 24 <= bytes.count {
            func be32(_ o: Int) -> Int { Int(bytes[o]) << 24 | Int(bytes[o + 1]) << 16 | Int(bytes[o + 2]) << 8 | Int(bytes[o + 3]) }
            let incl = be32(at + 4), flags = be32(at + 8)
            guard incl >= 1, at + 24 + incl <= bytes.count, incl < 0xFFFF else { break }
            let h4 = bytes[at + 24]
            let type: UInt8
            switch (h4, flags & 1) {
            case (0x01, _): type = 0x20
            case (0x02, 0): type = 0x21
            case (0x02, _): type = 0x11
            case (0x04, _): type = 0x10
            default: type = 0x21
            }
            let n = incl  // type byte + data
            out += [UInt8(n & 0xFF), UInt8(n >> 8), UInt8(n & 0xFF), UInt8(n >> 8), 1, 0, 0, 0, type]
            out += bytes[(at + 25)..<(at + 24 + incl)]
            at += 24 + incl
        }
        return out.isEmpty ? nil : out
    }

    static func base64(_ bytes: [UInt8]) -> [UInt8] {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var i = 0
        while i < bytes.count {
            let b0 = Int(bytes[i]), b1 = i + 1 < bytes.count ? Int(bytes[i + 1]) : 0, b2 = i + 2 < bytes.count ? Int(bytes[i + 2]) : 0
            out.append(alphabet[b0 >> 2])
            out.append(alphabet[(b0 & 3) << 4 | b1 >> 4])
            out.append(i + 1 < bytes.count ? alphabet[(b1 & 15) << 2 | b2 >> 6] : UInt8(ascii: "="))
            out.append(i + 2 < bytes.count ? alphabet[b2 & 63] : UInt8(ascii: "="))
            i += 3
        }
        return out
    }
}
