import BLEAnalysis
import BLECapture
import BLECore
import BLETestSupport
import Foundation
import Testing

/// For every ATT PDU: (frame, opcode, handle, value) from blescope equals tshark's, and the counts per
/// opcode are identical. Every disagreement must fall in one of the categories explained in the
/// README ("Where blescope and tshark disagree"); anything else fails the test.
@Suite struct TsharkDifferentialTests {
    struct Row: Equatable {
        var frame: Int
        var opcode: Int
        var handles: [Int]
        var value: String
        var connection: Int?
        var requestFrame: Int?
        var direction: Direction = .unknown
        /// tshark's own verdicts on air captures: bad CRC, retransmission.
        var crcBad = false
        var retransmission = false
        /// tshark marked the frame malformed (an exception while dissecting it).
        var malformed = false
        /// The CID in the L2CAP header that carried the PDU (0x0004 on the LE fixed channel; dynamic on BR/EDR and EATT).
        var cid: Int?
    }

    static var captures: [String] {
        let samples = TestEnvironment.sampleNames.flatMap { name in
            ["btsnoop", "pcap", "pklg"].map { TestEnvironment.sample("\(name).\($0)") }
        }
        return samples + TestEnvironment.realCaptures
    }

    static func tsharkRows(_ path: String) -> [Int: Row]? {
        guard let out = TestEnvironment.tshark(["-n", "-r", path, "-Y", "btatt", "-T", "fields", "-E", "separator=/t",
                                                "-e", "frame.number", "-e", "btatt.opcode", "-e", "btatt.handle",
                                                "-e", "btatt.value", "-e", "bthci_acl.chandle", "-e", "btatt.request_in_frame",
                                                "-e", "btle.crc.incorrect", "-e", "_ws.expert.message", "-e", "nordic_ble.crcok",
                                                "-e", "btl2cap.cid"]) else { return nil }
        var rows: [Int: Row] = [:]
        for line in out.split(separator: "\n") {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard f.count >= 10, let frame = Int(f[0]), let opcode = Int(f[1].dropFirst(2), radix: 16) else { continue }
            let handles = f[2].split(separator: ",").compactMap { Int($0.dropFirst(2), radix: 16) }
            rows[frame] = Row(frame: frame, opcode: opcode, handles: handles, value: f[3], connection: Int(f[4].dropFirst(2), radix: 16),
                              requestFrame: Int(f[5].split(separator: ",").first ?? ""),
                              crcBad: !f[6].isEmpty || f[8] == "0", retransmission: f[7].contains("Retransmission"),
                              malformed: f[7].contains("Malformed"),
                              cid: Int((f[9].split(separator: ",").first ?? "").dropFirst(2), radix: 16))
        }
        return rows
    }

    static func ourRows(_ path: String) throws -> (rows: [Int: Row], events: [Int: TimelineEvent], vendorTrace: VendorTrace) {
        let capture = try CaptureFile.open(path: path)
        var rows: [Int: Row] = [:]
        var events: [Int: TimelineEvent] = [:]
        let analyzer = Analyzer.analyze(capture, options: AnalyzerOptions(timeline: true), configure: { analyzer in
            analyzer.onEvent = { e in
                guard e.layer == .att, let code = e.code else { return }
                let handles = e.handles.map { $0.map(Int.init) } ?? e.handle.map { [Int($0)] } ?? []
                let value = e.values.map { $0.map { hexString($0) }.joined(separator: ",") } ?? e.value.map { hexString($0) } ?? ""
                rows[e.frame] = Row(frame: e.frame, opcode: Int(code), handles: handles, value: value,
                                    connection: e.connection.map(Int.init), requestFrame: e.requestFrame, direction: e.direction,
                                    cid: e.cid.map(Int.init))
                events[e.frame] = e
            }
        })
        return (rows, events, analyzer.decodeHealth.vendorTrace)
    }

    enum Explanation: String {
        /// tshark decodes a CCCD write into its bits and leaves btatt.value empty.
        case cccdValueDecodedByTshark
        /// tshark pairs a response with a request on another connection (it does not track ATT per connection).
        case tsharkPairedAcrossConnections
        /// tshark found no request for a response we paired on the same connection.
        case tsharkDidNotPair
        /// tshark decodes a known characteristic's value into sub-fields (extra "handles", value tail only).
        case valueDecodedByTshark
        /// tshark decodes the value of a characteristic it knows (Device Name, Service Changed, …) into
        /// typed fields and leaves btatt.value empty; blescope keeps the raw value.
        case knownValueDecodedByTshark
        /// tshark pairs a response with a request that went the same way (it ignores direction, so
        /// when both sides are clients at once it picks the wrong request).
        case tsharkPairedIgnoringDirection
        /// Air capture: tshark decodes a packet whose CRC is bad; blescope keeps it out of the decode.
        case crcBadFrameDecodedByTshark
        /// Air capture: an LL retransmission (same SN, same bytes) that tshark decodes again.
        case retransmissionDecodedByTshark
        /// tshark pairs a response with a request that an earlier response already answered.
        case tsharkReusedAnsweredRequest
        /// tshark shows the service UUIDs of a Read By Group Type Response as UUID fields, not values.
        case serviceUUIDDecodedByTshark
        /// tshark reads a written value as the characteristic declaration that the handle has in the *other*
        /// side's GATT database (both ends are servers), takes its bytes for a handle and marks the frame
        /// malformed; blescope keeps the value (OpenGuardian pump: 2 Write Requests).
        case tsharkUsedOtherSidesDatabase
        /// tshark decodes a Qualcomm controller's firmware-log ACL packets (handle 0x0EDC, no connection) as
        /// L2CAP; blescope sets them aside as vendor trace (AOSP snoop_logger.cc: kQualcommDebugLogHandle).
        case vendorTraceDecodedByTshark
        /// An ATT PDU on an enhanced ATT bearer (PSM 0x0027): tshark 4.0 shows the L2CAP Credit Based Connection
        /// Request/Response (0x17/0x18) as "Unknown command", so the channel has no PSM and its K-frames stay
        /// "Connection oriented channel" payload. Counted only when the SDU that tshark's own L2CAP payloads make
        /// at that frame carries the same opcode (and, where the PDU is handle + value, the same handle and value).
        case eattNotDecodedByTshark
    }

    /// ATT PDUs on dynamic credit-based channels as tshark splits the capture: its L2CAP payloads of CIDs 0x0040 and
    /// up (no signalling) joined into SDUs per (direction, CID) (Core Spec Vol 3, Part A, 3.4.3: the first K-frame
    /// starts with the 2-byte SDU length), keyed by the frame of the last K-frame.
    static func tsharkCreditSDUs(_ path: String) -> [Int: [UInt8]] {
        guard let out = TestEnvironment.tshark(["-n", "-r", path, "-Y", "btl2cap.cid >= 0x40 && !btl2cap.cmd_code && !btl2cap.psm", "-T", "fields",
                                                "-E", "separator=/t", "-e", "frame.number", "-e", "btl2cap.cid", "-e", "hci_h4.direction",
                                                "-e", "packetlogger.type", "-e", "btl2cap.payload"]) else { return [:] }
        var partial: [String: (want: Int, got: [UInt8])] = [:]
        var sdus: [Int: [UInt8]] = [:]
        for line in out.split(separator: "\n") {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard f.count == 5, let frame = Int(f[0]) else { continue }
            let bytes = stride(from: 0, to: f[4].count - 1, by: 2).compactMap { i -> UInt8? in
                let a = f[4].index(f[4].startIndex, offsetBy: i)
                return UInt8(f[4][a...f[4].index(after: a)], radix: 16)
            }
            let key = f[1] + "/" + f[2] + f[3]
            if var p = partial[key] {
                p.got += bytes
                partial[key] = p
            } else {
                guard bytes.count >= 2 else { continue }
                partial[key] = (Int(bytes[0]) | Int(bytes[1]) << 8, Array(bytes[2...]))
            }
            if let p = partial[key], p.got.count >= p.want {
                sdus[frame] = p.got
                partial[key] = nil
            }
        }
        return sdus
    }

    /// An EATT PDU tshark did not decode: the same opcode (and handle + value, for the PDUs laid out so) in the SDU
    /// tshark's L2CAP payloads make at that frame.
    static func explainEATT(_ o: Row, event: TimelineEvent?, sdus: [Int: [UInt8]]) -> Explanation? {
        guard event?.bearer == .eatt, let sdu = sdus[o.frame], sdu.first.map(Int.init) == o.opcode else { return nil }
        if [0x12, 0x52, 0x1B, 0x1D].contains(o.opcode) {
            guard sdu.count >= 3, o.handles == [Int(sdu[1]) | Int(sdu[2]) << 8], o.value == hexString(Array(sdu[3...])) else { return nil }
        }
        return .eattNotDecodedByTshark
    }

    /// Air captures: a PDU tshark decodes that blescope keeps out of the decode on purpose.
    static func explainMissing(_ t: Row, ours: [Int: Row], theirs: [Int: Row], vendorTrace: VendorTrace = VendorTrace()) -> Explanation? {
        if let c = t.connection, vendorTrace.handles.contains(UInt16(truncatingIfNeeded: c)), let first = vendorTrace.firstFrame, let last = vendorTrace.lastFrame,
           (first...last).contains(t.frame) {
            return .vendorTraceDecodedByTshark
        }
        if t.crcBad { return .crcBadFrameDecodedByTshark }
        if t.retransmission { return .retransmissionDecodedByTshark }
        // The same PDU (same SN, same bytes) as an earlier frame that blescope decoded: an LL retransmission.
        if let earlier = theirs.values.filter({ $0.frame < t.frame }).max(by: { $0.frame < $1.frame }),
           earlier.opcode == t.opcode, earlier.handles == t.handles, earlier.value == t.value, ours[earlier.frame] != nil {
            return .retransmissionDecodedByTshark
        }
        return nil
    }

    static func explain(_ t: Row, _ o: Row, ours: [Int: Row], theirs: [Int: Row], event: TimelineEvent?) -> Explanation? {
        guard t.opcode == o.opcode else { return nil }
        if t.handles == o.handles, t.value.isEmpty, o.value.count == 4, event?.uuid?.uuid16 == 0x2902 {
            return .cccdValueDecodedByTshark
        }
        if t.handles == o.handles, t.value.isEmpty, !o.value.isEmpty, t.opcode != 0x11 { return .knownValueDecodedByTshark }
        if t.opcode == 0x11, t.handles == o.handles, t.value.isEmpty { return .serviceUUIDDecodedByTshark }
        if t.value == o.value, let ourRequest = o.requestFrame, ours[ourRequest]?.connection == o.connection {
            if let theirRequest = t.requestFrame, let r = theirs[theirRequest], r.connection != t.connection {
                return .tsharkPairedAcrossConnections
            }
            if t.requestFrame == nil && t.handles.isEmpty { return .tsharkDidNotPair }
            if let theirRequest = t.requestFrame, theirRequest != ourRequest,
               ours.values.contains(where: { $0.frame < o.frame && $0.requestFrame == theirRequest }) {
                return .tsharkReusedAnsweredRequest
            }
            if let theirRequest = t.requestFrame, ours[theirRequest]?.direction == o.direction,
               ours[ourRequest]?.direction == o.direction.reversed {
                return .tsharkPairedIgnoringDirection
            }
        }
        // tshark paired the response with a request that another response already answered, and decoded its
        // values by that request's type (a Device Name read as characteristic declarations: extra "handles").
        if let theirRequest = t.requestFrame, let ourRequest = o.requestFrame, theirRequest != ourRequest, t.value.isEmpty,
           t.handles.first == o.handles.first, ours.values.contains(where: { $0.requestFrame == theirRequest && $0.frame != o.frame }) {
            return .tsharkReusedAnsweredRequest
        }
        if t.malformed, t.value.isEmpty, !o.value.isEmpty, o.handles.count == 1, t.handles.first == o.handles.first {
            return .tsharkUsedOtherSidesDatabase
        }
        if !t.value.isEmpty, o.value.hasSuffix(t.value), t.handles.starts(with: o.handles), t.handles.count > o.handles.count {
            return .valueDecodedByTshark
        }
        return nil
    }

    /// Encrypted air captures that blescope decrypts (with keys it learns from the capture's own pairing):
    /// tshark cannot, so it reads blescope's decrypted copy (`convert --decrypt`: same records and frame
    /// numbers, payloads in the clear, MIC removed, flagged decrypted). The MIC that checked is what says the
    /// decryption is right; the comparison then checks everything above the link layer.
    /// PPI (LT 192) captures too: tshark 4.0 does not read LE packets inside PPI, so the copy carries them as
    /// LT 251 (the PPI header removed, nothing else changed).
    static func decryptedCopy(_ path: String) throws -> String? {
        let capture = try CaptureFile.open(path: path)
        guard [251, 256, 272, 192].contains(Int(capture.datalink)) else { return nil }
        var decrypted: [Int: [UInt8]] = [:]
        _ = Analyzer.analyze(capture, options: AnalyzerOptions(timeline: false), configure: { a in
            a.onDecryptedRecord = { frame, bytes in decrypted[frame] = bytes }
        })
        let ppi = capture.datalink == 192
        guard !decrypted.isEmpty || ppi else { return nil }
        let out = NSTemporaryDirectory() + "blescope-decrypted-\(UUID().uuidString).pcap"
        let writer = try CaptureFileWriter(path: out, format: .pcap(linkType: ppi ? 251 : capture.datalink))
        let records = try CaptureFile.open(path: path)
        while let record = records.next() {
            var owned = OwnedRecord(record)
            if let bytes = decrypted[record.frame] { owned.bytes = bytes; owned.originalLength = bytes.count }
            if ppi, owned.bytes.count >= 8 {
                let header = Int(owned.bytes[2]) | Int(owned.bytes[3]) << 8
                owned.bytes = Array(owned.bytes[min(header, owned.bytes.count)...])
                owned.originalLength = owned.bytes.count
                owned.linkType = 251
            }
            try writer.write(owned)
        }
        try writer.close()
        return out
    }

    @Test(.enabled(if: TestEnvironment.tsharkPath != nil), arguments: captures)
    func everyATTPDUAgreesWithTshark(_ path: String) throws {
        let reference = try Self.decryptedCopy(path)
        defer { if let reference { try? FileManager.default.removeItem(atPath: reference) } }
        guard FileManager.default.fileExists(atPath: path), let theirs = Self.tsharkRows(reference ?? path) else { return }
        let (ours, events, vendorTrace) = try Self.ourRows(path)
        // Counts per opcode: exactly equal, once the packets blescope keeps out on purpose (bad CRC,
        // LL retransmissions) are set aside.
        var theirCounts: [Int: Int] = [:], ourCounts: [Int: Int] = [:]
        for r in theirs.values where ours[r.frame] != nil || Self.explainMissing(r, ours: ours, theirs: theirs, vendorTrace: vendorTrace) == nil {
            theirCounts[r.opcode, default: 0] += 1
        }
        // EATT PDUs tshark cannot read are counted from the SDUs its own L2CAP payloads make (below, per frame).
        for r in ours.values where events[r.frame]?.bearer != .eatt { ourCounts[r.opcode, default: 0] += 1 }
        #expect(ourCounts == theirCounts, "ATT opcode counts differ for \(path)")
        // tshark read ATT from every shared capture that has some (a check that it ran); corpus files may hold none
        // it can read (encrypted links without a key).
        #expect(!theirs.isEmpty || path.contains("classic") || path.contains("notes-only")
                || TestEnvironment.corpusDirectory.map { path.hasPrefix($0) } == true)
        var explained: [Explanation: Int] = [:]
        var unexplained: [String] = []
        let creditSDUs = events.values.contains { $0.bearer == .eatt } ? Self.tsharkCreditSDUs(reference ?? path) : [:]
        for frame in Set(theirs.keys).union(ours.keys).sorted() {
            let t = theirs[frame], o = ours[frame]
            guard t != o else { continue }
            var tt = t, oo = o
            // Compare what the schema promises; connection and request frame only serve the explanations.
            tt?.connection = nil; tt?.requestFrame = nil; oo?.connection = nil; oo?.requestFrame = nil
            tt?.direction = .unknown; oo?.direction = .unknown
            tt?.crcBad = false; tt?.retransmission = false; oo?.crcBad = false; oo?.retransmission = false
            tt?.malformed = false
            if tt == oo { continue }
            if let t, let o, let why = Self.explain(t, o, ours: ours, theirs: theirs, event: events[frame]) {
                explained[why, default: 0] += 1
            } else if let t, o == nil, let why = Self.explainMissing(t, ours: ours, theirs: theirs, vendorTrace: vendorTrace) {
                explained[why, default: 0] += 1
            } else if t == nil, let o, let why = Self.explainEATT(o, event: events[frame], sdus: creditSDUs) {
                explained[why, default: 0] += 1
            } else {
                unexplained.append("frame \(frame): tshark \(String(describing: t)) blescope \(String(describing: o))")
            }
        }
        let ourEATT = events.values.filter { $0.bearer == .eatt }.count
        #expect(explained[.eattNotDecodedByTshark, default: 0] == ourEATT && creditSDUs.count == ourEATT,
                "EATT PDUs: \(ourEATT) for blescope, \(creditSDUs.count) SDUs from tshark's L2CAP payloads")
        var perBearer: [String: Int] = [:]
        for e in events.values { perBearer[e.bearer?.rawValue ?? "none", default: 0] += 1 }
        print("tshark differential \(path.split(separator: "/").last!): \(theirs.count) ATT PDUs, ours by bearer \(perBearer.sorted { $0.key < $1.key }), explained \(explained.map { "\($0.key.rawValue)=\($0.value)" }.sorted())")
        #expect(unexplained.isEmpty, "\(unexplained.count) unexplained disagreements, first: \(unexplained.prefix(5))")
    }
}

/// Dynamic channels: every L2CAP PDU tshark attributes to a PSM (it follows the same Connection Requests) is
/// attributed to the same PSM by blescope, on every capture with BR/EDR or LE signalling that opens channels.
@Suite struct TsharkChannelDifferentialTests {
    @Test(.enabled(if: TestEnvironment.tsharkPath != nil), arguments: TsharkDifferentialTests.captures)
    func dynamicChannelsHaveTsharksPSM(_ path: String) throws {
        guard FileManager.default.fileExists(atPath: path),
              let out = TestEnvironment.tshark(["-n", "-r", path, "-Y", "btl2cap.cid >= 0x40 && btl2cap.psm && !btatt", "-T", "fields",
                                                "-e", "frame.number", "-e", "btl2cap.psm"]) else { return }
        var theirs: [Int: Int] = [:]
        for line in out.split(separator: "\n") {
            let f = line.split(separator: "\t").map(String.init)
            guard f.count == 2, let frame = Int(f[0]), let psm = Int(f[1].dropFirst(2), radix: 16) else { continue }
            theirs[frame] = psm
        }
        var ours: [Int: Int] = [:]
        _ = Analyzer.analyze(try CaptureFile.open(path: path), options: AnalyzerOptions(timeline: true), configure: { analyzer in
            analyzer.onEvent = { e in
                // "CID 0x0041 RFCOMM (0x0003)" or "CID 0x0041 PSM 0x1001": the PSM is the last hex number of the name.
                guard e.layer == .l2cap, let code = e.code, code >= 0x40, e.name.hasPrefix("CID "),
                      let hexPart = e.name.split(separator: " ").last?.trimmingCharacters(in: CharacterSet(charactersIn: "()")),
                      hexPart.hasPrefix("0x"), e.name.split(separator: " ").count > 2 else { return }
                ours[e.frame] = Int(hexPart.dropFirst(2), radix: 16)
            }
        })
        // Where tshark gives no PSM and blescope does, two reasons, both checked on tshark's own fields:
        // an ERTM supervisory frame (S-frame: tshark names the channel's service but writes no btl2cap.psm), and a
        // PDU between a Disconnection Request and its Response (tshark forgets the channel at the request; the
        // channel stays open until the response, Core Spec Vol 3, Part A, 4.6–4.7).
        var sFrames = Set<Int>()
        for line in (TestEnvironment.tshark(["-n", "-r", path, "-Y", "btl2cap.control_supervisory", "-T", "fields", "-e", "frame.number"]) ?? "")
            .split(separator: "\n") { if let f = Int(line) { sFrames.insert(f) } }
        var disconnections: [(frame: Int, code: Int, cids: Set<Int>)] = []
        for line in (TestEnvironment.tshark(["-n", "-r", path, "-Y", "btl2cap.cmd_code == 0x06 || btl2cap.cmd_code == 0x07", "-T", "fields",
                                              "-e", "frame.number", "-e", "btl2cap.cmd_code", "-e", "btl2cap.dcid", "-e", "btl2cap.scid"]) ?? "")
            .split(separator: "\n") {
            let f = line.split(separator: "\t").map(String.init)
            guard f.count == 4, let frame = Int(f[0]), let code = Int(f[1].dropFirst(2), radix: 16) else { continue }
            disconnections.append((frame, code, Set([f[2], f[3]].compactMap { Int($0.dropFirst(2), radix: 16) })))
        }
        var cids: [Int: Int] = [:]
        for line in (TestEnvironment.tshark(["-n", "-r", path, "-Y", "btl2cap.cid >= 0x40", "-T", "fields", "-e", "frame.number", "-e", "btl2cap.cid"]) ?? "")
            .split(separator: "\n") {
            let f = line.split(separator: "\t").map(String.init)
            if f.count == 2, let frame = Int(f[0]), let cid = Int(f[1].dropFirst(2), radix: 16) { cids[frame] = cid }
        }
        var explained = (sFrame: 0, disconnecting: 0)
        for (frame, _) in ours where theirs[frame] == nil {
            if sFrames.contains(frame) { explained.sFrame += 1; theirs[frame] = ours[frame]; continue }
            guard let cid = cids[frame],
                  let request = disconnections.last(where: { $0.frame < frame && $0.code == 0x06 && $0.cids.contains(cid) }),
                  !disconnections.contains(where: { $0.code == 0x07 && $0.frame > request.frame && $0.frame < frame && $0.cids.contains(cid) })
            else { continue }
            explained.disconnecting += 1
            theirs[frame] = ours[frame]
        }
        print("tshark channel differential \(path.split(separator: "/").last!): \(theirs.count) PDUs on channels tshark knows by PSM, "
              + "\(ours.count) for blescope; explained: S-frames \(explained.sFrame), after a Disconnection Request \(explained.disconnecting)")
        #expect(ours == theirs)
    }
}
