import BLEAnalysis
import BLECapture
import BLECore
import BLETestSupport
import Foundation
import Testing

/// The BR/EDR profiles against tshark, frame by frame, on every real capture that carries them (the shared captures,
/// and the public corpus's headset and A2DP logs when `BLESCOPE_CORPUS` names it): SDP (PDU, transaction), RFCOMM
/// (DLCI, frame type, P/F, credits, length), AVDTP signalling (label, message type, signal; the codec type and SBC
/// bitpool of Set Configuration), the hands-free AT lines (their command or result names), AVRCP (C/R, ctype, opcode,
/// PDU, notification event). Frames only one tool decodes are listed by kind; what remains must be none.
///
/// Known differences, explained where they occur (docs/tshark-differences.md): tshark decodes hands-free AT only on a
/// DLC it learnt from SDP (or on the first DLC), blescope also on a DLC whose data starts with AT lines; tshark reads
/// AVDTP media as `bta2dp`, blescope as layer `a2dp`.
@Suite struct ClassicTsharkDifferentialTests {
    /// One frame's numbers, as both tools give them.
    struct Row: Equatable, CustomStringConvertible {
        var sdp: [Int] = []
        var rfcomm: [Int] = []
        var avdtp: [Int] = []
        var hfp: [String] = []
        var avrcp: [Int] = []
        var description: String { "sdp \(sdp) rfcomm \(rfcomm) avdtp \(avdtp) hfp \(hfp) avrcp \(avrcp)" }
    }

    static var captures: [String] { TestEnvironment.realCaptures }

    static let fields = [
        "frame.number", "btsdp.pdu", "btsdp.tid", "btrfcomm.dlci", "btrfcomm.frame_type", "btrfcomm.pf", "btrfcomm.credits",
        "btrfcomm.len", "btavdtp.transaction", "btavdtp.message_type", "btavdtp.signal_id", "btavdtp.media_codec_audio_type",
        "btavdtp.codec.sbc.maximum_bitpool", "bthfp.at_cmd", "btavctp.cr", "btavrcp.ctype", "btavrcp.opcode", "btavrcp.pdu_id",
        "btavrcp.notification.event_id",
    ]

    static func tsharkRows(_ path: String) -> [Int: Row]? {
        guard
            let out = TestEnvironment.tshark(
                [
                    "-n", "-r", path, "-Y", "btsdp || btrfcomm || btavdtp || btavctp", "-T", "fields", "-E", "separator=/t", "-E",
                    "aggregator=;",
                ]
                    + fields.flatMap { ["-e", $0] })
        else { return nil }
        var rows: [Int: Row] = [:]
        for line in out.split(separator: "\n") {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard f.count >= fields.count, let frame = Int(f[0]) else { continue }
            func ints(_ i: Int) -> [Int] {
                f[i].split(separator: ";").compactMap { v in v.hasPrefix("0x") ? Int(v.dropFirst(2), radix: 16) : Int(v) }
            }
            var r = Row()
            // Only the first RFCOMM frame's numbers: an L2CAP PDU carries one RFCOMM frame.
            if !f[1].isEmpty { r.sdp = ints(1) + ints(2) }
            if !f[3].isEmpty { r.rfcomm = [ints(3).first, ints(4).first, ints(5).first, ints(6).first, ints(7).first].map { $0 ?? -1 } }
            if !f[9].isEmpty, !f[10].isEmpty {
                // A media codec type is tshark's for every capability listed; the configuration's is the one compared.
                let setConfiguration = ints(10).first == 0x03 && ints(9).first == 0
                var avdtp: [Int] = Array(ints(8).prefix(1))
                avdtp += ints(9).prefix(1)
                avdtp += ints(10).prefix(1)
                if setConfiguration {
                    avdtp += ints(11).prefix(1)
                    avdtp += ints(12).prefix(1)
                }
                r.avdtp = avdtp
            }
            if !f[13].isEmpty { r.hfp = f[13].split(separator: ";").map(String.init) }
            if !f[14].isEmpty, !f[16].isEmpty {
                // tshark lists GetCapabilities' supported events as event IDs too; blescope names the event of
                // RegisterNotification (PDU 0x31) only.
                let pdu = ints(17)
                r.avrcp = ints(14) + ints(15) + ints(16) + pdu + (pdu.first == 0x31 ? Array(ints(18).prefix(1)) : [])
            }
            rows[frame] = r
        }
        return rows
    }

    static func ourRows(_ path: String) throws -> [Int: Row] {
        var rows: [Int: Row] = [:]
        _ = Analyzer.analyze(
            try CaptureFile.open(path: path), options: AnalyzerOptions(timeline: true),
            configure: { analyzer in
                analyzer.onEvent = { e in
                    guard let fields = e.fields else {
                        if e.layer == .hfp { rows[e.frame, default: Row()].hfp.append(Self.atName(e.summary)) }
                        return
                    }
                    let v = Dictionary(fields, uniquingKeysWith: { a, _ in a })
                    func n(_ k: String) -> Int? { v[k].map(Int.init) }
                    switch e.layer {
                    case .sdp: rows[e.frame, default: Row()].sdp = [n("pdu"), n("tid")].compactMap { $0 }
                    case .rfcomm:
                        rows[e.frame, default: Row()].rfcomm = [
                            n("dlci") ?? -1, n("frame_type") ?? -1, n("pf") ?? -1, n("credits") ?? -1, n("length") ?? -1,
                        ]
                    case .avdtp:
                        var a = [n("label"), n("message_type"), n("signal")].compactMap { $0 }
                        if n("signal") == 0x03, n("message_type") == 0, let c = n("codec_type") {
                            a += [c] + (n("sbc_max_bitpool").map { [$0] } ?? [])
                        }
                        rows[e.frame, default: Row()].avdtp = a
                    case .hfp: rows[e.frame, default: Row()].hfp.append(Self.atName(e.summary))
                    case .avrcp:
                        rows[e.frame, default: Row()].avrcp = ["cr", "ctype", "opcode", "pdu_id", "event_id"].compactMap(n)
                    default: break
                    }
                }
            })
        return rows
    }

    /// The name tshark gives an AT line: `+BRSF` of `AT+BRSF=191` or `+BRSF: 871`, `OK`, `A` of `ATA`.
    static func atName(_ text: String) -> String {
        var s = Substring(text)
        if s.hasPrefix("AT") { s = s.dropFirst(2) }
        if let end = s.firstIndex(where: { $0 == "=" || $0 == ":" || $0 == "?" }) { s = s[..<end] }
        if s.count > 1, !s.hasPrefix("+"), s.first == "A" || s.first == "D" { return String(s.prefix(1)) }
        return String(s)
    }

    @Test(arguments: captures)
    func profilesAgreeWithTshark(_ path: String) throws {
        guard let theirs = Self.tsharkRows(path), !theirs.isEmpty else { return }  // no tshark, or no profile in the capture
        let ours = try Self.ourRows(path)
        var compared = 0, hfpOnlyOurs = 0, differ: [String] = []
        for (frame, t) in theirs.sorted(by: { $0.key < $1.key }) {
            var o = ours[frame] ?? Row()
            if t.hfp.isEmpty, !o.hfp.isEmpty {
                hfpOnlyOurs += 1
                o.hfp = []
            }
            compared += 1
            if o != t, differ.count < 10 { differ.append("frame \(frame): tshark \(t), blescope \(o)") }
        }
        let onlyOurs = Set(ours.keys).subtracting(theirs.keys).filter { f in
            ours[f].map { !$0.sdp.isEmpty || !$0.rfcomm.isEmpty || !$0.avdtp.isEmpty || !$0.avrcp.isEmpty } ?? false
        }
        print(
            "classic tshark differential \((path as NSString).lastPathComponent): \(compared) frames; AT lines only blescope read: \(hfpOnlyOurs); frames only blescope decoded: \(onlyOurs.count)"
        )
        #expect(differ.isEmpty, "\(differ.joined(separator: "\n"))")
        #expect(onlyOurs.isEmpty, "frames only blescope decoded: \(onlyOurs.sorted().prefix(10))")
    }
}
