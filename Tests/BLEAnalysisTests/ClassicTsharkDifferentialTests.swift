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
/// DLC it learnt from SDP (or on the first DLC), blescope also on a DLC whose data starts with AT lines; tshark names
/// a line it reassembled at a later frame, and a line repeated in one frame once; tshark forgets a channel at its
/// Disconnection Request; tshark reads AVDTP media as `bta2dp`, blescope as layer `a2dp`.
@Suite struct ClassicTsharkDifferentialTests {
    /// One frame's numbers, as both tools give them.
    struct Row: Equatable, CustomStringConvertible {
        var sdp: [Int] = []
        var rfcomm: [Int] = []
        var avdtp: [Int] = []
        var hfp: [String] = []
        var avrcp: [Int] = []
        /// The ACL handle (tshark's `bthci_acl.chandle`; only tshark's rows have it): which link a DLC is on.
        var handle: Int? = nil
        var description: String { "sdp \(sdp) rfcomm \(rfcomm) avdtp \(avdtp) hfp \(hfp) avrcp \(avrcp)" }
        static func == (a: Row, b: Row) -> Bool {
            (a.sdp, a.rfcomm, a.avdtp, a.hfp, a.avrcp) == (b.sdp, b.rfcomm, b.avdtp, b.hfp, b.avrcp)
        }
    }

    static var captures: [String] { TestEnvironment.realCaptures }

    static let fields = [
        "frame.number", "btsdp.pdu", "btsdp.tid", "btrfcomm.dlci", "btrfcomm.frame_type", "btrfcomm.pf", "btrfcomm.credits",
        "btrfcomm.len", "btavdtp.transaction", "btavdtp.message_type", "btavdtp.signal_id", "btavdtp.media_codec_audio_type",
        "btavdtp.codec.sbc.maximum_bitpool", "bthfp.at_cmd", "btavctp.cr", "btavrcp.ctype", "btavrcp.opcode", "btavrcp.pdu_id",
        "btavrcp.notification.event_id", "bthci_acl.chandle",
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
            r.handle = ints(19).first
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
            // Names compared without case (V.250, 5.1): tshark lower-cases a bare text result, the Honda log's `SAMSUNG`
            // answering AT+CGMI at 2805 is its `samsung`.
            if !f[13].isEmpty { r.hfp = f[13].split(separator: ";").map { $0.uppercased() } }
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
                        if e.layer == .hfp { rows[e.frame, default: Row()].hfp.append(Self.atName(e.summary).uppercased()) }
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
                    case .hfp: rows[e.frame, default: Row()].hfp.append(Self.atName(e.summary).uppercased())
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
        // The DLCs tshark reads as hands-free: their AT lines are compared frame by frame, each frame's names once (tshark
        // names a line repeated in one frame once). Where a frame differs, tshark reassembled a line it did not see end
        // at the frame where a later line ended (docs/tshark-differences.md): the lines tshark names in the differing
        // frames must all be among blescope's there. AT lines on the other DLCs (by link and DLCI) are blescope's only.
        let atDLCs = Set(theirs.values.compactMap { r in r.hfp.isEmpty ? nil : r.rfcomm.first.map { [r.handle ?? -1, $0] } })
        var compared = 0, hfpOnlyOurs = 0, differ: [String] = []
        var shiftedTheirs: [String] = [], shiftedOurs: [String] = [], shiftedFrames: [Int] = []
        for (frame, t) in theirs.sorted(by: { $0.key < $1.key }) {
            var o = ours[frame] ?? Row(), t = t
            if !o.hfp.isEmpty, !(o.rfcomm.first.map { atDLCs.contains([t.handle ?? -1, $0]) } ?? false) {
                hfpOnlyOurs += 1
            } else if Self.once(o.hfp) != Self.once(t.hfp) {
                shiftedTheirs += Self.once(t.hfp)
                shiftedOurs += Self.once(o.hfp)
                shiftedFrames.append(frame)
            }
            (o.hfp, t.hfp) = ([], [])
            compared += 1
            if o != t, differ.count < 10 { differ.append("frame \(frame): tshark \(t), blescope \(o)") }
        }
        // tshark's `bthfp.at_cmd` names the first line of a frame it reassembled only (the Ethermind log's 468:
        // `AT+BRSF=` and `AT+CIND=?` in its Info, `+BRSF` in the field): each line it names there must be blescope's.
        var unmatched = shiftedOurs
        let missing = shiftedTheirs.filter { name in
            guard let i = unmatched.firstIndex(of: name) else { return true }
            unmatched.remove(at: i)
            return false
        }
        if !missing.isEmpty {
            differ.append(
                "AT lines of frames \(shiftedFrames.prefix(10)): tshark \(shiftedTheirs.prefix(20)), blescope \(shiftedOurs.prefix(20))")
        }
        let closing = Self.disconnecting(path)
        var duringDisconnection = 0
        let onlyOurs = Set(ours.keys).subtracting(theirs.keys).filter { f in
            guard ours[f].map({ !$0.sdp.isEmpty || !$0.rfcomm.isEmpty || !$0.avdtp.isEmpty || !$0.avrcp.isEmpty }) ?? false else {
                return false
            }
            // A PDU between a Disconnection Request and its Response: tshark forgets the channel at the request.
            if closing.contains(f) {
                duringDisconnection += 1
                return false
            }
            return true
        }
        print(
            "classic tshark differential \((path as NSString).lastPathComponent): \(compared) frames; AT lines only blescope read: \(hfpOnlyOurs), named at another frame by tshark: \(shiftedFrames.count) frames; PDUs only blescope decoded, during a disconnection: \(duringDisconnection), others: \(onlyOurs.count)"
        )
        #expect(differ.isEmpty, "\(differ.joined(separator: "\n"))")
        #expect(onlyOurs.isEmpty, "frames only blescope decoded: \(onlyOurs.sorted().prefix(10))")
    }

    /// Each name once where it repeats in one frame.
    static func once(_ names: [String]) -> [String] {
        names.enumerated().filter { $0.offset == 0 || names[$0.offset - 1] != $0.element }.map(\.element)
    }

    /// The frames of L2CAP PDUs on a channel whose Disconnection Request was sent and not yet answered (tshark's
    /// `btl2cap.cmd_code` 6 and 7 with their CIDs; the data's `btl2cap.cid`, per `bthci_acl.chandle`).
    static func disconnecting(_ path: String) -> Set<Int> {
        guard
            let out = TestEnvironment.tshark([
                "-n", "-r", path, "-Y", "btl2cap", "-T", "fields", "-E", "separator=/t", "-E", "aggregator=;", "-e", "frame.number", "-e",
                "bthci_acl.chandle", "-e", "btl2cap.cid", "-e", "btl2cap.cmd_code", "-e", "btl2cap.dcid", "-e", "btl2cap.scid",
            ])
        else { return [] }
        var open: [String: Int] = [:]  // "handle cid" -> the request's frame
        var frames = Set<Int>()
        for line in out.split(separator: "\n") {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard f.count >= 6, let frame = Int(f[0]) else { continue }
            let handle = f[1], code = f[3].split(separator: ";").first.map(String.init) ?? ""
            let cids = [f[4], f[5]].flatMap { $0.split(separator: ";").map(String.init) }
            if code == "0x06" || code == "6" {
                for c in cids { open["\(handle) \(c)"] = frame }
            } else if code == "0x07" || code == "7" {
                for c in cids { open["\(handle) \(c)"] = nil }
            } else if f[2] != "0x0001", open["\(handle) \(f[2])"] != nil {
                frames.insert(frame)
            }
        }
        return frames
    }
}
