import BLEAnalysis
import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
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
        /// tshark's expert notes on air captures: the packet's CRC was not checked; the peer did not acknowledge it.
        var crcUnchecked = false
        var notAcknowledged = false
        /// The link-layer sequence number (SN) of the packet; nil on HCI captures.
        var sequenceNumber: Int?
        /// tshark's expert note on HCI captures: "Frame is out of any \"connection handle\" session".
        var outsideSession = false
    }

    static var captures: [String] {
        let samples = TestEnvironment.sampleNames.flatMap { name in
            ["btsnoop", "pcap", "pklg"].map { TestEnvironment.sample("\(name).\($0)") }
        }
        return samples + TestEnvironment.realCaptures
    }

    static func tsharkRows(_ path: String) -> [Int: Row]? {
        guard
            let out = TestEnvironment.tshark([
                "-n", "-r", path, "-Y", "btatt", "-T", "fields", "-E", "separator=/t",
                "-e", "frame.number", "-e", "btatt.opcode", "-e", "btatt.handle",
                "-e", "btatt.value", "-e", "bthci_acl.chandle", "-e", "btatt.request_in_frame",
                "-e", "btle.crc.incorrect", "-e", "_ws.expert.message", "-e", "nordic_ble.crcok",
                "-e", "btl2cap.cid", "-e", "btle.data_header.sequence_number",
            ])
        else { return nil }
        var rows: [Int: Row] = [:]
        for line in out.split(separator: "\n") {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard f.count >= 11, let frame = Int(f[0]), let opcode = Int(f[1].dropFirst(2), radix: 16) else { continue }
            let handles = f[2].split(separator: ",").compactMap { Int($0.dropFirst(2), radix: 16) }
            rows[frame] = Row(
                frame: frame, opcode: opcode, handles: handles, value: f[3], connection: Int(f[4].dropFirst(2), radix: 16),
                requestFrame: Int(f[5].split(separator: ",").first ?? ""),
                crcBad: !f[6].isEmpty || f[8] == "0", retransmission: f[7].contains("Retransmission"),
                malformed: f[7].contains("Malformed"),
                cid: Int((f[9].split(separator: ",").first ?? "").dropFirst(2), radix: 16),
                crcUnchecked: f[7].contains("CRC unchecked"), notAcknowledged: f[7].contains("Not acknowledged"),
                sequenceNumber: Int(f[10]), outsideSession: f[7].contains("out of any \"connection handle\" session"))
        }
        return rows
    }

    /// Each handle followed by the handle its declaration names, as tshark lists them: an Include (6 bytes: included
    /// service handle, end group handle, 16-bit UUID) or a characteristic declaration (5 or 19 bytes: properties, value
    /// handle, UUID), Core Spec Vol 3, Part G, 3.2–3.3.1; nil when a value is neither.
    static func declarationHandles(_ handles: [Int], values: String) -> [Int]? {
        let values = values.split(separator: ",").map(String.init)
        let named = values.compactMap { v -> Int? in
            let at = v.count == 12 ? 0 : (v.count == 10 || v.count == 38) ? 2 : -1
            guard at >= 0, let lo = Int(v.dropFirst(at).prefix(2), radix: 16), let hi = Int(v.dropFirst(at + 2).prefix(2), radix: 16)
            else { return nil }
            return lo | hi << 8
        }
        guard named.count == values.count, named.count == handles.count else { return nil }
        return zip(handles, named).flatMap { [$0, $1] }
    }

    static func ourRows(_ path: String) throws -> (rows: [Int: Row], events: [Int: TimelineEvent], vendorTrace: VendorTrace) {
        let capture = try CaptureFile.open(path: path)
        var rows: [Int: Row] = [:]
        var events: [Int: TimelineEvent] = [:]
        let analyzer = Analyzer.analyze(
            capture, options: AnalyzerOptions(timeline: true),
            configure: { analyzer in
                analyzer.onEvent = { e in
                    guard e.layer == .att, let code = e.code else { return }
                    let handles = e.handles.map { $0.map(Int.init) } ?? e.handle.map { [Int($0)] } ?? []
                    let value = e.values.map { $0.map { hexString($0) }.joined(separator: ",") } ?? e.value.map { hexString($0) } ?? ""
                    rows[e.frame] = Row(
                        frame: e.frame, opcode: Int(code), handles: handles, value: value,
                        connection: e.connection.map(Int.init), requestFrame: e.requestFrame, direction: e.direction,
                        cid: e.cid.map(Int.init))
                    events[e.frame] = e
                }
            })
        return (rows, events, analyzer.decodeHealth.vendorTrace)
    }

    enum Explanation: String {
        /// The LL header's Length runs past the bytes the sniffer captured: blescope cannot read the packet and says so
        /// (warning ll.malformed, "truncated: needed N bytes"); tshark decodes what bytes there are and marks the frame
        /// malformed (the SweynTooth DA14680 oversized-MTU capture, frame 71: Length 114, 10 bytes).
        case llLengthPastCapturedBytes
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
        /// The capturer cut the record (incl_len < orig_len: Android's filtered snoop log, btsnooz; or, unmarked, an ACL
        /// record shorter than its own header's Data Total Length: BTVS's filtered logs): tshark decodes the bytes kept;
        /// blescope counts the PDU as cut by the capturer and decodes nothing of it (DESIGN §3).
        case cutRecordDecodedByTshark
        /// tshark decodes a Qualcomm controller's firmware-log ACL packets (handle 0x0EDC, no connection) as
        /// L2CAP; blescope sets them aside as vendor trace (AOSP snoop_logger.cc: kQualcommDebugLogHandle).
        case vendorTraceDecodedByTshark
        /// An ATT PDU on an enhanced ATT bearer (PSM 0x0027): tshark 4.0 shows the L2CAP Credit Based Connection
        /// Request/Response (0x17/0x18) as "Unknown command", so the channel has no PSM and its K-frames stay
        /// "Connection oriented channel" payload. Counted only when the SDU that tshark's own L2CAP payloads make
        /// at that frame carries the same opcode (and, where the PDU is handle + value, the same handle and value).
        case eattNotDecodedByTshark
        /// Air capture: tshark could not check the packet's CRC ("CRC unchecked, not all data available") and decodes it;
        /// the test's own CRC-24 over tshark's packet bytes, with the CRC init of the connection's CONNECT_IND, fails, so
        /// the bytes are not what was sent and blescope keeps them out (crackle PPI frame 26: a Read By Type Request 0x08
        /// received as 0x48; with 0x08 the CRC holds, and the server's Error Response names 0x08).
        case crcFailsOnRecheckDecodedByTshark
        /// Air capture: the same PDU (same SN, same bytes) as an earlier one the peer never acknowledged, sent again:
        /// a link-layer retransmission (Core Spec Vol 6, Part B, 4.5.9) that tshark marks "Not acknowledged" but decodes
        /// as new. An attacked SweynTooth Telink peripheral answers every copy without acknowledging any.
        case unacknowledgedRepeatDecodedByTshark
        /// tshark decodes an Include or characteristic declaration read with Read By Type or Read into typed fields (the
        /// included service's or the value's handle becomes a second "handle", the value is left empty); blescope keeps
        /// the value whole (SweynTooth Telink captures: 5 responses).
        case declarationDecodedByTshark
        /// A Read By Type Response with no request in the capture: blescope reads its values as the characteristic
        /// declarations their shape shows (the value handle after each declaration's), tshark, with no request type,
        /// keeps them raw (the debug-key capture's 503).
        case declarationDecodedByBlescope
        /// tshark reads a Read By Type Response as the attribute type of the request it pairs it with; when the
        /// response's Length says otherwise it takes the first value for that type (an Include: its first two bytes as
        /// the included service handle) and marks the frame malformed; blescope reads each Attribute Data by the
        /// Length field (Core Spec Vol 3, Part F, 3.4.4.2). WHAD's capture, decrypted, frame 1494: Length 7
        /// (characteristic declarations) after an Include request, the capture having missed the request it answers.
        case responseReadAsItsRequestsTypeByTshark
        /// Air capture without a direction field whose timestamps are broken (crackle's rewritten output: microsecond
        /// fields above 10^6): blescope cannot tell who sent the response, so it does not pair it (no handle); tshark
        /// pairs it ignoring direction. On the encrypted original the decryption nonce gives the direction and they agree.
        case unpairedForUnknownDirection
        /// tshark splits a Read Multiple Response into one field per handle its request named (the values carry no
        /// lengths, Core Spec Vol 3, Part F, 3.4.4.8; tshark sizes them from what it knows of each attribute) and leaves
        /// `btatt.value` empty; blescope keeps the concatenated value.
        case readMultipleSplitByTshark
        /// Air capture: a response to a request the sniffer missed (the central's packet of that connection event is not
        /// in the capture; the response is a new PDU, not a retransmission). tshark pairs it with the last request of its
        /// kind, which an earlier response already answered (both tshark and blescope pair that one; one request is
        /// outstanding at a time, Core Spec Vol 3, Part F, 3.3.2), and decodes it by that request's handle; blescope leaves
        /// it unpaired (the Ubertooth shaver capture, frame 26611: Read Response "766" after 26608, "775", answered the
        /// Read Request of handle 0x0016 at 26605).
        case responseToMissedRequestPairedByTshark
        /// HCI capture: ACL on a handle whose link ended (a Disconnection Complete with status 0) with no Connection Complete
        /// for that handle since, read from the capture's own events. tshark notes "Frame is out of any connection handle
        /// session" and decodes it; blescope sets it aside as stale, "came after its link ended at frame N" (the nexxtender
        /// 3e `.cfa`: frames 10932/10933 on 0x0004, after 6098).
        case aclAfterItsLinkEndedDecodedByTshark
    }

    /// Frames of tshark rows whose CRC tshark did not check and that fail the test's own CRC-24 check (Core Spec Vol 6,
    /// Part B, 3.1.1: LFSR x^24 + x^10 + x^9 + x^6 + x^4 + x^3 + x + 1, preset with the CONNECT_IND's CRCInit, bits
    /// least significant first), over tshark's raw `btle` bytes (access address, header, payload, CRC).
    static func crcFailures(_ path: String, frames: [Int]) -> Set<Int> {
        guard !frames.isEmpty,
            let inits = TestEnvironment.tshark([
                "-n", "-r", path, "-Y", "btle.link_layer_data.crc_init", "-T", "fields",
                "-e", "btle.link_layer_data.access_address", "-e", "btle.link_layer_data.crc_init",
            ])
        else { return [] }
        var crcInit: [UInt32: UInt32] = [:]
        for line in inits.split(separator: "\n") {
            let f = line.split(separator: "\t").map(String.init)
            if f.count == 2, let aa = UInt32(f[0].dropFirst(2), radix: 16), let i = UInt32(f[1].dropFirst(2), radix: 16) { crcInit[aa] = i }
        }
        var failed = Set<Int>()
        for frame in frames {
            guard let json = TestEnvironment.tshark(["-n", "-r", path, "-Y", "frame.number == \(frame)", "-T", "json", "-x"]),
                let r = json.range(of: "\"btle_raw\": [")
            else { continue }
            let rest = json[r.upperBound...]
            guard let q1 = rest.firstIndex(of: "\""), let q2 = rest[rest.index(after: q1)...].firstIndex(of: "\"") else { continue }
            let hexText = rest[rest.index(after: q1)..<q2]
            var raw: [UInt8] = []
            var i = hexText.startIndex
            while i < hexText.endIndex, let j = hexText.index(i, offsetBy: 2, limitedBy: hexText.endIndex),
                let b = UInt8(hexText[i..<j], radix: 16)
            {
                raw.append(b); i = j
            }
            guard raw.count >= 9 else { continue }
            let aa = UInt32(raw[0]) | UInt32(raw[1]) << 8 | UInt32(raw[2]) << 16 | UInt32(raw[3]) << 24
            guard let initValue = crcInit[aa] else { continue }
            // The register starts from the CRCInit with its bit order reversed (it is sent least significant bit first).
            var state: UInt32 = 0
            for bit in 0..<24 where initValue & (1 << bit) != 0 { state |= 1 << (23 - bit) }
            for byte in raw[4..<(raw.count - 3)] {
                var cur = byte
                for _ in 0..<8 {
                    let next = (state ^ UInt32(cur)) & 1
                    cur >>= 1
                    state >>= 1
                    if next != 0 { state |= 1 << 23; state ^= 0x5A6000 }
                }
            }
            let stored = UInt32(raw[raw.count - 3]) | UInt32(raw[raw.count - 2]) << 8 | UInt32(raw[raw.count - 1]) << 16
            if stored != state { failed.insert(frame) }
        }
        return failed
    }

    /// The frames of `frames` (ACL rows, keyed by frame, with their handle) whose handle's last link event before them in
    /// the capture is a successful Disconnection Complete: the link ended and no Connection Complete (BR/EDR, SCO/eSCO,
    /// LE, LE Enhanced) reopened the handle (Core Spec Vol 4, Part E, 7.7.3, 7.7.5, 7.7.35, 7.7.65.1, 7.7.65.10).
    static func afterLinkEnded(_ path: String, frames: [Int: Int]) -> Set<Int> {
        guard !frames.isEmpty,
            let out = TestEnvironment.tshark([
                "-n", "-r", path, "-Y",
                "bthci_evt.code == 0x05 || bthci_evt.code == 0x03 || bthci_evt.code == 0x2c || bthci_evt.le_meta_subevent == 0x01 "
                    + "|| bthci_evt.le_meta_subevent == 0x0a",
                "-T", "fields", "-e", "frame.number", "-e", "bthci_evt.code", "-e", "bthci_evt.connection_handle",
                "-e", "bthci_evt.status",
            ])
        else { return [] }
        var events: [(frame: Int, handle: Int, ended: Bool)] = []
        for line in out.split(separator: "\n") {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard f.count == 4, let frame = Int(f[0]), let handle = Int(f[2].dropFirst(2), radix: 16) else { continue }
            let success = f[3] == "0x00"
            if f[1] == "0x05" {
                if success { events.append((frame, handle, true)) }
            } else if success {
                events.append((frame, handle, false))
            }
        }
        return Set(
            frames.filter { frame, handle in events.last { $0.frame < frame && $0.handle == handle }?.ended == true }.keys)
    }

    /// ATT PDUs on dynamic credit-based channels as tshark splits the capture: its L2CAP payloads of CIDs 0x0040 and
    /// up (no signalling) joined into SDUs per (direction, CID) (Core Spec Vol 3, Part A, 3.4.3: the first K-frame
    /// starts with the 2-byte SDU length), keyed by the frame of the last K-frame.
    static func tsharkCreditSDUs(_ path: String) -> [Int: [UInt8]] {
        guard
            let out = TestEnvironment.tshark([
                "-n", "-r", path, "-Y", "btl2cap.cid >= 0x40 && !btl2cap.cmd_code && !btl2cap.psm", "-T", "fields",
                "-E", "separator=/t", "-e", "frame.number", "-e", "btl2cap.cid", "-e", "hci_h4.direction",
                "-e", "packetlogger.type", "-e", "btl2cap.payload",
            ])
        else { return [:] }
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
    static func explainMissing(
        _ t: Row, ours: [Int: Row], theirs: [Int: Row], vendorTrace: VendorTrace = VendorTrace(),
        crcFailed: Set<Int> = [], cutFrames: Set<Int> = [], unreadable: Set<Int> = [], afterLinkEnded: Set<Int> = []
    ) -> Explanation? {
        if crcFailed.contains(t.frame) { return .crcFailsOnRecheckDecodedByTshark }
        if t.outsideSession, afterLinkEnded.contains(t.frame) { return .aclAfterItsLinkEndedDecodedByTshark }
        if t.malformed, unreadable.contains(t.frame) { return .llLengthPastCapturedBytes }
        if cutFrames.contains(t.frame) { return .cutRecordDecodedByTshark }
        // A repeat of an unacknowledged PDU: the latest earlier row with the same SN, same bytes, itself not acknowledged.
        if t.notAcknowledged, let sn = t.sequenceNumber {
            let copies = theirs.values.filter {
                $0.frame < t.frame && $0.sequenceNumber == sn && $0.opcode == t.opcode
                    && $0.handles == t.handles && $0.value == t.value
            }
            if let latest = copies.max(by: { $0.frame < $1.frame }), latest.notAcknowledged,
                copies.contains(where: { ours[$0.frame] != nil })
            {
                return .unacknowledgedRepeatDecodedByTshark
            }
        }
        if let c = t.connection, vendorTrace.handles.contains(UInt16(truncatingIfNeeded: c)), let first = vendorTrace.firstFrame,
            let last = vendorTrace.lastFrame,
            (first...last).contains(t.frame)
        {
            return .vendorTraceDecodedByTshark
        }
        if t.crcBad { return .crcBadFrameDecodedByTshark }
        if t.retransmission { return .retransmissionDecodedByTshark }
        // The same PDU (same SN, same bytes) as an earlier frame that blescope decoded: an LL retransmission.
        if let earlier = theirs.values.filter({ $0.frame < t.frame }).max(by: { $0.frame < $1.frame }),
            earlier.opcode == t.opcode, earlier.handles == t.handles, earlier.value == t.value, ours[earlier.frame] != nil
        {
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
                ours.values.contains(where: { $0.frame < o.frame && $0.requestFrame == theirRequest })
            {
                return .tsharkReusedAnsweredRequest
            }
            if let theirRequest = t.requestFrame, ours[theirRequest]?.direction == o.direction,
                ours[ourRequest]?.direction == o.direction.reversed
            {
                return .tsharkPairedIgnoringDirection
            }
        }
        // Both sides act as client at once (the rgbCTF G613 keyboard reads the host's Device Name, 227, while the host's
        // Read Request 226 is outstanding): tshark pairs the keyboard's Read Response 230 with the keyboard's own
        // request 227 and decodes its value by that handle (0x0003, Device Name: no raw value), where it answers the
        // host's 226 (HID Information 0x0023, 11 01 00 03). A response never answers a request its own sender made.
        if let theirRequest = t.requestFrame, let ourRequest = o.requestFrame, theirRequest != ourRequest,
            ours[theirRequest]?.direction == o.direction, ours[ourRequest]?.direction == o.direction.reversed,
            ours[ourRequest]?.connection == o.connection
        {
            return .tsharkPairedIgnoringDirection
        }
        // tshark paired the response with a request that another response already answered, and decoded its
        // values by that request's type (a Device Name read as characteristic declarations: extra "handles").
        if let theirRequest = t.requestFrame, let ourRequest = o.requestFrame, theirRequest != ourRequest, t.value.isEmpty,
            t.handles.first == o.handles.first, ours.values.contains(where: { $0.requestFrame == theirRequest && $0.frame != o.frame })
        {
            return .tsharkReusedAnsweredRequest
        }
        if t.malformed, t.value.isEmpty, !o.value.isEmpty, o.handles.count == 1, t.handles.first == o.handles.first {
            return .tsharkUsedOtherSidesDatabase
        }
        // A characteristic declaration read by Read By Type (declaration handle, properties, value handle) that tshark
        // reads as an Include because its attribute map, kept across connections, has that handle as one: the
        // "included service handle" it prints is the properties byte and the value handle's low byte (the Broadcom
        // dartparser log, frame 6644: 0x0902 = properties 0x02, value handle 0x0009).
        if t.opcode == 0x09, t.malformed, t.value.isEmpty, t.handles.count == 2, o.handles.count == 2, t.handles[0] == o.handles[0],
            t.handles[1] >> 8 == o.handles[1] & 0xFF
        {
            return .tsharkUsedOtherSidesDatabase
        }
        if t.opcode == 0x09, t.malformed, t.value.isEmpty, t.handles.count == 2, t.handles.first == o.handles.first,
            let first = o.value.split(separator: ",").first, let b = bytes(fromHex: String(first)), b.count >= 2,
            t.handles[1] == Int(b[0]) | Int(b[1]) << 8
        {
            return .responseReadAsItsRequestsTypeByTshark
        }
        // The same where blescope read the declarations into handles (its request in the capture): tshark paired the
        // response with the other side's Include request crossing it (the STACK the Flags Galaxy S7 log, both sides
        // discovering: 46 answers this side's 0x2803 request at 42, tshark takes the peer's 0x2802 at 43), so the first
        // declaration's properties and value handle's low byte became an included service handle (0x0302 at 46).
        if t.opcode == 0x09, t.malformed, t.value.isEmpty, o.value.isEmpty, t.handles.count == 2, o.handles.count >= 2,
            t.handles[0] == o.handles[0], t.handles[1] >> 8 == o.handles[1] & 0xFF
        {
            return .responseReadAsItsRequestsTypeByTshark
        }
        if !t.value.isEmpty, o.value.hasSuffix(t.value), t.handles.starts(with: o.handles), t.handles.count > o.handles.count {
            return .valueDecodedByTshark
        }
        if t.opcode == 0x09 || t.opcode == 0x0B, t.value.isEmpty, !o.value.isEmpty,
            t.handles == Self.declarationHandles(o.handles, values: o.value)
        {
            return .declarationDecodedByTshark
        }
        // The reverse: a Read By Type Response whose request the sniffer missed (the debug-key capture's 503, the central's
        // packet counter 10 never heard) has no type for tshark, which keeps the values raw; blescope reads them as the
        // characteristic declarations their shape and value handles show.
        if t.opcode == 0x09, t.requestFrame == nil, o.requestFrame == nil, o.value.isEmpty, !t.value.isEmpty,
            o.handles == Self.declarationHandles(t.handles, values: t.value)
        {
            return .declarationDecodedByBlescope
        }
        if t.opcode == 0x0F, t.value.isEmpty, !o.value.isEmpty, o.handles.isEmpty, let r = o.requestFrame, let request = ours[r],
            request.opcode == 0x0E, t.handles == request.handles
        {
            return .readMultipleSplitByTshark
        }
        if let theirRequest = t.requestFrame, o.requestFrame == nil, o.handles.isEmpty, let request = ours[theirRequest],
            request.direction == o.direction, t.handles == request.handles, t.value == o.value
        {
            return .unpairedForUnknownDirection
        }
        // tshark pairs two responses with one request: blescope pairs the first, as tshark does, and leaves this one
        // unpaired: it answers a request the capture does not hold.
        if let theirRequest = t.requestFrame, o.requestFrame == nil, o.handles.isEmpty, let request = ours[theirRequest],
            t.handles == request.handles, request.direction == o.direction.reversed,
            let answered = ours.values.first(where: { $0.requestFrame == theirRequest && $0.frame < o.frame && $0.opcode == o.opcode }),
            theirs[answered.frame]?.requestFrame == theirRequest
        {
            return .responseToMissedRequestPairedByTshark
        }
        return nil
    }

    /// Encrypted air captures that blescope decrypts (with keys it learns from the capture's own pairing):
    /// tshark cannot, so it reads blescope's decrypted copy (`convert --decrypt`: same records and frame
    /// numbers, payloads in the clear, MIC removed, flagged decrypted). The MIC that checked is what says the
    /// decryption is right; the comparison then checks everything above the link layer.
    /// PPI (LT 192) captures too: tshark 4.0 does not read LE packets inside PPI, so the copy carries them as
    /// LT 251 (the PPI header removed, nothing else changed).
    /// A Sample whose generator wrote no ATT PDU (its truth file's `capture.att_pdus` is 0: the BR/EDR pairing of
    /// `diag-ssp-missing-key` fails before any profile opens).
    static func sampleHoldsNoATT(_ path: String) -> Bool {
        guard path.hasPrefix(TestEnvironment.samplesDirectory + "/") else { return false }
        let name = String(path.split(separator: "/").last!.split(separator: ".").first!)
        guard let data = FileManager.default.contents(atPath: TestEnvironment.sample(name + ".truth.json")),
            let truth = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let capture = truth["capture"] as? [String: Any]
        else { return false }
        return capture["att_pdus"] as? Int == 0
    }

    static func decryptedCopy(_ path: String) throws -> String? {
        let capture = try CaptureFile.open(path: path)
        guard [251, 256, 272, 192].contains(Int(capture.datalink)) else { return nil }
        var decrypted: [Int: [UInt8]] = [:]
        _ = Analyzer.analyze(
            capture, options: AnalyzerOptions(timeline: false),
            configure: { a in
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
        let crcFailed = Self.crcFailures(
            reference ?? path, frames: theirs.values.filter { $0.crcUnchecked && ours[$0.frame] == nil }.map(\.frame))
        var cutFrames = Set<Int>(), unreadable = Set<Int>()
        let records = try CaptureFile.open(path: path)
        while let record = records.next() {
            if record.isTruncated { cutFrames.insert(record.frame) }
            // Cut before the log was written and not marked: the ACL header's Data Total Length is more than the record
            // holds (BTVS's filtered logs keep 7 bytes; tshark: "Length too short", and decodes the 7).
            let b = record.bytes
            if record.kind == .acl, b.count >= 4, Int(b[2]) | Int(b[3]) << 8 > b.count - 4 { cutFrames.insert(record.frame) }
            if record.kind == .linkLayer, (try? LLAirPacket(linkType: record.linkType, bytes: record.bytes)) == nil {
                unreadable.insert(record.frame)
            }
        }
        let afterLinkEnded = Self.afterLinkEnded(
            reference ?? path,
            frames: Dictionary(
                uniqueKeysWithValues: theirs.values.filter { $0.outsideSession && ours[$0.frame] == nil }.compactMap { r in
                    r.connection.map { (r.frame, $0) }
                }))
        var theirCounts: [Int: Int] = [:], ourCounts: [Int: Int] = [:]
        for r in theirs.values
        where ours[r.frame] != nil
            || Self.explainMissing(
                r, ours: ours, theirs: theirs, vendorTrace: vendorTrace, crcFailed: crcFailed, cutFrames: cutFrames,
                unreadable: unreadable, afterLinkEnded: afterLinkEnded) == nil
        {
            theirCounts[r.opcode, default: 0] += 1
        }
        // EATT PDUs tshark cannot read are counted from the SDUs its own L2CAP payloads make (below, per frame).
        for r in ours.values where events[r.frame]?.bearer != .eatt { ourCounts[r.opcode, default: 0] += 1 }
        #expect(ourCounts == theirCounts, "ATT opcode counts differ for \(path)")
        // tshark read ATT from every shared capture that has some (a check that it ran); corpus files may hold none
        // it can read (encrypted links without a key).
        #expect(
            !theirs.isEmpty || path.contains("classic") || path.contains("notes-only") || Self.sampleHoldsNoATT(path)
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
            tt?.crcUnchecked = false; tt?.notAcknowledged = false; tt?.sequenceNumber = nil; tt?.outsideSession = false
            if tt == oo { continue }
            if let t, let o, let why = Self.explain(t, o, ours: ours, theirs: theirs, event: events[frame]) {
                explained[why, default: 0] += 1
            } else if let t, o == nil,
                let why = Self.explainMissing(
                    t, ours: ours, theirs: theirs, vendorTrace: vendorTrace, crcFailed: crcFailed, cutFrames: cutFrames,
                    unreadable: unreadable, afterLinkEnded: afterLinkEnded)
            {
                explained[why, default: 0] += 1
            } else if t == nil, let o, let why = Self.explainEATT(o, event: events[frame], sdus: creditSDUs) {
                explained[why, default: 0] += 1
            } else {
                unexplained.append("frame \(frame): tshark \(String(describing: t)) blescope \(String(describing: o))")
            }
        }
        let ourEATT = events.values.filter { $0.bearer == .eatt }.count
        #expect(
            explained[.eattNotDecodedByTshark, default: 0] == ourEATT && creditSDUs.count == ourEATT,
            "EATT PDUs: \(ourEATT) for blescope, \(creditSDUs.count) SDUs from tshark's L2CAP payloads")
        var perBearer: [String: Int] = [:]
        for e in events.values { perBearer[e.bearer?.rawValue ?? "none", default: 0] += 1 }
        print(
            "tshark differential \(path.split(separator: "/").last!): \(theirs.count) ATT PDUs, ours by bearer \(perBearer.sorted { $0.key < $1.key }), explained \(explained.map { "\($0.key.rawValue)=\($0.value)" }.sorted())"
        )
        #expect(unexplained.isEmpty, "\(unexplained.count) unexplained disagreements, first: \(unexplained.prefix(5))")
    }
}

/// Dynamic channels: every L2CAP PDU tshark attributes to a PSM (it follows the same Connection Requests) is
/// attributed to the same PSM by blescope, on every capture with BR/EDR or LE signalling that opens channels.
@Suite struct TsharkChannelDifferentialTests {
    static let profilePSMs: [Layer: Int] = [.sdp: 0x0001, .rfcomm: 0x0003, .avrcp: 0x0017, .avdtp: 0x0019, .a2dp: 0x0019]

    @Test(.enabled(if: TestEnvironment.tsharkPath != nil), arguments: TsharkDifferentialTests.captures)
    func dynamicChannelsHaveTsharksPSM(_ path: String) throws {
        guard FileManager.default.fileExists(atPath: path),
            let out = TestEnvironment.tshark([
                "-n", "-r", path, "-Y", "btl2cap.cid >= 0x40 && btl2cap.psm && !btatt", "-T", "fields",
                "-e", "frame.number", "-e", "btl2cap.psm",
            ])
        else { return }
        var theirs: [Int: Int] = [:]
        for line in out.split(separator: "\n") {
            let f = line.split(separator: "\t").map(String.init)
            guard f.count == 2, let frame = Int(f[0]), let psm = Int(f[1].dropFirst(2), radix: 16) else { continue }
            theirs[frame] = psm
        }
        var ours: [Int: Int] = [:]
        // LE credit-based channels: one "LE Credit Based SDU" event per SDU, at its last K-frame, saying
        // "cid=0x0040 spsm=0x0080 65 bytes from frame 73": every K-frame of that CID from the first to the last gets the PSM.
        var sdus: [(cid: Int, psm: Int, first: Int, last: Int)] = []
        _ = Analyzer.analyze(
            try CaptureFile.open(path: path), options: AnalyzerOptions(timeline: true),
            configure: { analyzer in
                analyzer.onEvent = { e in
                    if e.layer == .l2cap, e.name == "LE Credit Based SDU", let code = e.code {
                        let words = e.summary.split(separator: " ")
                        if let p = words.first(where: { $0.hasPrefix("spsm=0x") }), let psm = Int(p.dropFirst(7), radix: 16),
                            let first = words.last.flatMap({ Int($0) })
                        {
                            sdus.append((Int(code), psm, first, e.frame))
                        }
                        return
                    }
                    // A BR/EDR profile's PDU (issue 46): its layer names its PSM (SDP 0x0001, RFCOMM 0x0003, AVCTP 0x0017,
                    // AVDTP signalling and media 0x0019).
                    if let psm = Self.profilePSMs[e.layer] {
                        ours[e.frame] = psm
                        return
                    }
                    // OBEX over an L2CAP channel (GOEP 2.0, a dynamic PSM): the packet's event names the channel's PSM.
                    if e.layer == .obex, let psm = e.fields?.first(where: { $0.0 == "psm" })?.1 {
                        ours[e.frame] = Int(psm)
                        return
                    }
                    // "CID 0x0041 RFCOMM (0x0003)" or "CID 0x0041 PSM 0x1001": the PSM is the last hex number of the name.
                    guard e.layer == .l2cap, let code = e.code, code >= 0x40, e.name.hasPrefix("CID "),
                        let hexPart = e.name.split(separator: " ").last?.trimmingCharacters(in: CharacterSet(charactersIn: "()")),
                        hexPart.hasPrefix("0x"), e.name.split(separator: " ").count > 2
                    else { return }
                    ours[e.frame] = Int(hexPart.dropFirst(2), radix: 16)
                }
            })
        // Where tshark gives no PSM and blescope does, three reasons, each checked on tshark's own fields:
        // an ERTM supervisory frame (S-frame: tshark names the channel's service but writes no btl2cap.psm); an ERTM
        // I-frame carrying a segment of an SDU (SAR start, end or continuation, Core Spec Vol 3, Part A, 3.3.2: tshark
        // writes no btl2cap.psm there either; blescope's OBEX packet event is at the end segment, the Honda log's 31
        // 1024-byte responses on PSM 0x1001), when tshark gives the PSM to the channel's frame before it; and a PDU
        // between a Disconnection Request and its Response (tshark forgets the channel at the request; the channel stays
        // open until the response, Core Spec Vol 3, Part A, 4.6–4.7).
        func frames(_ filter: String) -> Set<Int> {
            Set(
                (TestEnvironment.tshark(["-n", "-r", path, "-Y", filter, "-T", "fields", "-e", "frame.number"]) ?? "")
                    .split(separator: "\n").compactMap { Int($0) })
        }
        let sFrames = frames("btl2cap.control_supervisory"), segments = frames("btl2cap.control_sar > 0")
        var disconnections: [(frame: Int, code: Int, cids: Set<Int>)] = []
        for line
            in (TestEnvironment.tshark([
                "-n", "-r", path, "-Y", "btl2cap.cmd_code == 0x06 || btl2cap.cmd_code == 0x07", "-T", "fields",
                "-e", "frame.number", "-e", "btl2cap.cmd_code", "-e", "btl2cap.dcid", "-e", "btl2cap.scid",
            ]) ?? "")
            .split(separator: "\n")
        {
            let f = line.split(separator: "\t").map(String.init)
            guard f.count == 4, let frame = Int(f[0]), let code = Int(f[1].dropFirst(2), radix: 16) else { continue }
            disconnections.append((frame, code, Set([f[2], f[3]].compactMap { Int($0.dropFirst(2), radix: 16) })))
        }
        var cids: [Int: Int] = [:]
        for line
            in (TestEnvironment.tshark([
                "-n", "-r", path, "-Y", "btl2cap.cid >= 0x40", "-T", "fields", "-e", "frame.number", "-e", "btl2cap.cid",
            ]) ?? "")
            .split(separator: "\n")
        {
            let f = line.split(separator: "\t").map(String.init)
            if f.count == 2, let frame = Int(f[0]), let cid = Int(f[1].dropFirst(2), radix: 16) { cids[frame] = cid }
        }
        for sdu in sdus {
            for (frame, cid) in cids where cid == sdu.cid && (sdu.first...sdu.last).contains(frame) && theirs[frame] != nil {
                ours[frame] = sdu.psm
            }
        }
        var explained = (sFrame: 0, segment: 0, disconnecting: 0)
        for (frame, psm) in ours.sorted(by: { $0.key < $1.key }) where theirs[frame] == nil {
            if sFrames.contains(frame) { explained.sFrame += 1; theirs[frame] = ours[frame]; continue }
            if segments.contains(frame), let cid = cids[frame],
                theirs.filter({ $0.key < frame && cids[$0.key] == cid }).max(by: { $0.key < $1.key })?.value == psm
            {
                explained.segment += 1
                theirs[frame] = psm
                continue
            }
            guard let cid = cids[frame],
                let request = disconnections.last(where: { $0.frame < frame && $0.code == 0x06 && $0.cids.contains(cid) }),
                !disconnections.contains(where: { $0.code == 0x07 && $0.frame > request.frame && $0.frame < frame && $0.cids.contains(cid) }
                )
            else { continue }
            explained.disconnecting += 1
            theirs[frame] = ours[frame]
        }
        print(
            "tshark channel differential \(path.split(separator: "/").last!): \(theirs.count) PDUs on channels tshark knows by PSM, "
                + "\(ours.count) for blescope; explained: S-frames \(explained.sFrame), SDU segments \(explained.segment), "
                + "after a Disconnection Request \(explained.disconnecting)"
        )
        #expect(ours == theirs)
    }
}
