import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Foundation
import Testing

/// Every air capture the tests find (Samples, `../shared/captures`, `BLESCOPE_CORPUS`): per connection, the link facts
/// blescope reports (connection parameters, PHY, data length after each update, whether and from which frame the link
/// is encrypted) equal what tshark's `btle.control.*` fields say, worked out here from the specification's rules; and
/// the connections are the CONNECT_INDs with a good CRC plus the links the sniffer joined whose traffic is answered.
/// Encrypted links blescope decrypts are read by tshark on blescope's `convert --decrypt` copy (the MIC vouches for it).
@Suite struct AirLinkFactsTests {
    /// One btle packet as tshark reads it.
    struct Row {
        var frame: Int
        var time: Double
        var accessAddress: UInt32
        var length: Int
        var opcode: Int?
        /// LL_LENGTH_REQ/RSP: max rx octets, rx time, tx octets, tx time.
        var lengths: [Int]
        /// LL_CONNECTION_UPDATE_IND: interval, latency, timeout.
        var parameters: [Int]
        var instant: Int?
        var phys: (centralToPeripheral: Int, peripheralToCentral: Int)?
        /// nRF Sniffer: 1 central → peripheral, 0 back; nil when the capture does not say.
        var fromCentral: Bool?
        var event: Int?
        var bad: Bool
        /// The SN of a data PDU; set by ``markRetransmissions(_:)``: the same PDU sent again (Core Spec Vol 6, Part B,
        /// 4.5.9: same SN, same content). tshark's own "Retransmission" note is not used: it marks the first PDU of
        /// each side on some SweynTooth captures (cypress frame 264, an LL_LENGTH_RSP answering frame 263).
        var sequenceNumber: Int?
        var retransmission = false
        var encryptedFlag: Bool
        /// nRF Sniffer: encrypted and its MIC not checked, so what tshark reads there is ciphertext.
        var undecrypted: Bool
        var rejectedOpcode: Int?
        /// CONNECT_IND: the access address and the parameters it sets.
        var connectAccessAddress: UInt32?
        var connectParameters: [Int]
    }

    static let fields = [
        "frame.number", "frame.time_epoch", "btle.access_address", "btle.length", "btle.control_opcode",
        "btle.control.max_rx_octets", "btle.control.max_rx_time", "btle.control.max_tx_octets", "btle.control.max_tx_time",
        "btle.control.interval", "btle.control.latency", "btle.control.timeout", "btle.control.instant",
        "btle.control.m_to_s_phy", "btle.control.s_to_m_phy", "nordic_ble.direction", "nordic_ble.event_counter",
        "btle.crc.incorrect", "nordic_ble.crcok", "_ws.expert.message", "btle.advertising_header.pdu_type",
        "btle.link_layer_data.access_address", "btle.link_layer_data.interval", "btle.link_layer_data.latency",
        "btle.link_layer_data.timeout", "nordic_ble.encrypted", "btle.control.reject_opcode", "btle.control.unknown_type",
        "btle.data_header.sequence_number", "nordic_ble.micok",
    ]

    static func rows(_ path: String) -> [Row]? {
        guard
            let out = TestEnvironment.tshark(
                ["-n", "-r", path, "-Y", "btle", "-T", "fields", "-E", "separator=/t"] + fields.flatMap { ["-e", $0] })
        else { return nil }
        func int(_ s: String) -> Int? {
            let first = String(s.split(separator: ",").first ?? "")
            return first.hasPrefix("0x") ? Int(first.dropFirst(2), radix: 16) : Int(first)
        }
        return out.split(separator: "\n").compactMap { line in
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard f.count >= fields.count, let frame = Int(f[0]), let aa = int(f[2]) else { return nil }
            let pduType = int(f[20])
            return Row(
                frame: frame, time: Double(f[1]) ?? 0, accessAddress: UInt32(aa), length: int(f[3]) ?? 0,
                opcode: pduType == nil ? int(f[4]) : nil,
                lengths: f[5...8].compactMap(int), parameters: f[9...11].compactMap(int), instant: int(f[12]),
                phys: int(f[13]).flatMap { m in int(f[14]).map { (m, $0) } }, fromCentral: int(f[15]).map { $0 == 1 },
                event: int(f[16]), bad: !f[17].isEmpty || f[18] == "0", sequenceNumber: int(f[28]),
                encryptedFlag: f[25] == "1", undecrypted: f[25] == "1" && f[29] != "1", rejectedOpcode: int(f[26]) ?? int(f[27]),
                connectAccessAddress: pduType == 5 ? int(f[21]).map(UInt32.init) : nil,
                connectParameters: pduType == 5 ? f[22...24].compactMap(int) : [])
        }
    }

    static var airCaptures: [String] {
        let candidates =
            TestEnvironment.sampleNames.flatMap { name in ["pcap"].map { TestEnvironment.sample("\(name).\($0)") } }
            + TestEnvironment.realCaptures
        return candidates.filter { path in
            guard let capture = try? CaptureFile.open(path: path) else { return false }
            return [251, 256, 272, 192].contains(Int(capture.datalink))
        }
    }

    /// What tshark says of one connection: where it starts and the facts after each procedure.
    struct Expected {
        var startFrame: Int
        var accessAddress: UInt32
        var rows: [Row] = []
        var parameters: [(frame: Int?, after: Int, value: ConnectionParameters)] = []
        var phy: [(frame: Int?, after: Int, value: PHYPair)] = []
        /// The data length; `ordered` false when the capture does not say which side is the central.
        var dataLength: [(frame: Int, value: DataLength, ordered: Bool)] = []
        /// Each encryption start (LL_START_ENC_REQ) and where the link is encrypted from, by what tshark reads of the
        /// first two non-empty PDUs after it: both LL_START_ENC_RSPs (the procedure's end, observed at the second);
        /// the central's then a data PDU (the peripheral's missed: inferred at the data PDU); the central's then
        /// anything else (the procedure never ended: not encrypted); an unreadable first one (no key: inferred there).
        var starts: [(request: Int, from: Int?, observed: Bool)] = []
    }

    static let advertisingAccessAddress: UInt32 = 0x8E89_BED6

    /// The connections tshark shows: one per CONNECT_IND with a good CRC, one per access address no CONNECT_IND named
    /// whose packets both sides sent (the next packet there goes the other way, or within 1 ms when the capture gives
    /// no direction: T_IFS is 150 µs, Core Spec Vol 6, Part B, 4.5.1).
    static func connections(_ rows: [Row]) -> [Expected] {
        var out: [Expected] = []
        var current: [UInt32: Int] = [:]
        var lastAt: [UInt32: Row] = [:]
        for r in rows {
            if r.accessAddress == advertisingAccessAddress {
                if let aa = r.connectAccessAddress, !r.bad {
                    var e = Expected(startFrame: r.frame, accessAddress: aa)
                    if r.connectParameters.count == 3 {
                        let p = r.connectParameters.map(UInt16.init)
                        e.parameters.append((r.frame, r.frame, ConnectionParameters(interval: p[0], latency: p[1], timeout: p[2])))
                    }
                    current[aa] = out.count
                    out.append(e)
                }
                continue
            }
            // A bad packet still counts its connection event (the sniffer's counter), so it stays with its link.
            if let i = current[r.accessAddress] {
                out[i].rows.append(r)
                continue
            }
            guard !r.bad else { continue }
            if let previous = lastAt[r.accessAddress] {
                let answered =
                    r.fromCentral == nil || previous.fromCentral == nil
                    ? r.time - previous.time < 0.001 : r.fromCentral != previous.fromCentral
                if answered {
                    current[r.accessAddress] = out.count
                    out.append(Expected(startFrame: previous.frame, accessAddress: r.accessAddress, rows: [previous, r]))
                    continue
                }
            }
            lastAt[r.accessAddress] = r
        }
        return out.map { procedures(markRetransmissions($0)) }
    }

    /// A non-empty PDU with the SN and content of the previous one its side sent is a retransmission. When the capture
    /// gives no direction, only a copy right after the original is taken as one: both LL_START_ENC_RSPs carry the same
    /// SN and byte, and only their senders tell them apart (crackle PIN capture, frames 166 and 169).
    static func markRetransmissions(_ e: Expected) -> Expected {
        var e = e
        func same(_ a: Row, _ b: Row) -> Bool {
            a.sequenceNumber == b.sequenceNumber && a.length == b.length && a.opcode == b.opcode && a.lengths == b.lengths
                && a.parameters == b.parameters && a.instant == b.instant && a.rejectedOpcode == b.rejectedOpcode
        }
        var lastBySide: [Bool: Row] = [:]
        for k in e.rows.indices where e.rows[k].length > 0 && !e.rows[k].bad {
            let r = e.rows[k]
            if let side = r.fromCentral {
                e.rows[k].retransmission = lastBySide[side].map { same($0, r) } ?? false
                lastBySide[side] = r
            } else if k > 0 {
                e.rows[k].retransmission = same(e.rows[k - 1], r)
            }
        }
        return e
    }

    /// The facts each procedure sets, by the specification: updates at their instant (5.1.1, 5.1.10), the data length
    /// once LL_LENGTH_RSP answers the other side's LL_LENGTH_REQ (5.1.9; a rejected request is dropped; each direction
    /// the smaller of what its sender sends and its receiver takes, 4.5.10), encryption from the peripheral's
    /// LL_START_ENC_RSP, the second non-empty PDU after LL_START_ENC_REQ (5.1.3.1).
    static func procedures(_ e: Expected) -> Expected {
        var e = e
        var requests: [Bool?: [Int]] = [:]
        var latestRequest: (from: Bool?, lengths: [Int])?
        var pendingUpdates: [(row: Row, apply: (inout Expected, Int?) -> Void)] = []
        var unreadableFrom: Int?
        var lastLength: DataLength?
        for (k, r) in e.rows.enumerated() {
            if let ev = r.event {
                let due = pendingUpdates.filter { p in p.row.instant.map { (ev - $0) & 0xFFFF < 0x8000 } ?? true }
                for p in due { p.apply(&e, r.frame) }
                pendingUpdates.removeAll { p in due.contains { $0.row.frame == p.row.frame } }
            }
            guard let op = r.opcode, unreadableFrom == nil, !r.bad, !r.retransmission else { continue }
            // A control PDU longer or shorter than its opcode's parameters is invalid (Vol 6, Part B, 2.4.2) and changes
            // nothing; tshark reads the fields it expects from it (SweynTooth cypress frame 410, a 23-byte
            // LL_CONNECTION_UPDATE_IND in a record cut short).
            if let size = Self.controlSizes[op], size != r.length { continue }
            switch op {
            case 0x00 where r.parameters.count == 3:
                let p = r.parameters.map(UInt16.init)
                let value = ConnectionParameters(interval: p[0], latency: p[1], timeout: p[2])
                pendingUpdates.append((r, { e, frame in e.parameters.append((frame, r.frame, value)) }))
            case 0x18:
                guard let (cp, pc) = r.phys, cp != 0 || pc != 0 else { break }
                pendingUpdates.append(
                    (
                        r,
                        { e, frame in
                            let last = e.phy.last?.value ?? PHYPair(tx: .le1M, rx: .le1M)
                            e.phy.append((frame, r.frame, PHYPair(tx: phy(cp) ?? last.tx, rx: phy(pc) ?? last.rx)))
                        }
                    ))
            case 0x14 where r.lengths.count == 4:
                requests[r.fromCentral] = r.lengths
                latestRequest = (r.fromCentral, r.lengths)
            case 0x11 where r.rejectedOpcode == 0x14, 0x07 where r.rejectedOpcode == 0x14:
                requests[r.fromCentral.map { !$0 }] = nil
                if latestRequest?.from != r.fromCentral { latestRequest = nil }
            case 0x15 where r.lengths.count == 4:
                let request = r.fromCentral == nil ? latestRequest?.lengths : requests[!r.fromCentral!]
                guard let request else { break }
                requests[r.fromCentral.map { !$0 }] = nil
                latestRequest = nil
                let (central, peripheral) = r.fromCentral == false ? (request, r.lengths) : (r.lengths, request)
                // [rx octets, rx time, tx octets, tx time]
                let value = DataLength(
                    maxTxOctets: UInt16(max(27, min(central[2], peripheral[0]))),
                    maxTxTime: UInt16(max(328, min(central[3], peripheral[1]))),
                    maxRxOctets: UInt16(max(27, min(peripheral[2], central[0]))),
                    maxRxTime: UInt16(max(328, min(peripheral[3], central[1]))))
                // Said when it changes (as the HCI event), and the first time.
                if value != lastLength { e.dataLength.append((r.frame, value, r.fromCentral != nil)) }
                lastLength = value
            case 0x04:
                // LL_ENC_RSP, then the peripheral's LL_START_ENC_REQ (one octet, in the clear); when the sniffer missed it,
                // the two LL_START_ENC_RSPs come next: one octet each on a decrypted copy, five (with the MIC) in
                // ciphertext. Only a clear LL_START_ENC_REQ, a rejection (2–3 octets) or a termination (2) may come there
                // otherwise (Vol 6, Part B, 5.1.3.1).
                // An nRF Sniffer flags each encrypted packet itself (nordic_ble.encrypted), and is read by that (below).
                guard r.event == nil else { break }
                let after = e.rows[(k + 1)...].filter { $0.length > 0 && !$0.bad && !$0.retransmission }
                guard let first = after.first, !(first.opcode == 0x05 && first.length == 1) else { break }
                if first.opcode == 0x06 && first.length == 1 {
                    // As after a captured LL_START_ENC_REQ (below): the peripheral's LL_START_ENC_RSP ends it, a data PDU
                    // in its place means it was missed.
                    let second = after.dropFirst().first
                    if let second, second.opcode == 0x06 || second.opcode == nil {
                        e.starts.append((r.frame, second.frame, second.opcode == 0x06))
                    } else {
                        e.starts.append((r.frame, nil, false))
                    }
                } else if first.length >= 5 {
                    e.starts.append((r.frame, first.frame, false))
                    unreadableFrom = r.frame
                }
            case 0x05:
                let after = e.rows[(k + 1)...].filter { $0.length > 0 && !$0.bad && !$0.retransmission }
                let first = after.first, second = after.dropFirst().first
                guard let first else { break }
                if first.undecrypted || (first.opcode != 0x06 && (first.fromCentral == nil || first.encryptedFlag)) {
                    e.starts.append((r.frame, first.frame, false))
                    unreadableFrom = r.frame
                } else if first.opcode != 0x06 {
                    // The sniffer says the PDU after LL_START_ENC_REQ went in the clear and it is no LL_START_ENC_RSP
                    // (SweynTooth Telink and Cypress fuzzing: 0x52, 0xA1, 0x85): the start never ended.
                    e.starts.append((r.frame, nil, false))
                } else if second?.opcode == 0x06 {
                    e.starts.append((r.frame, second?.frame, true))
                } else if let second, second.opcode == nil {
                    e.starts.append((r.frame, second.frame, false))
                } else {
                    e.starts.append((r.frame, nil, false))
                }
            default: break
            }
        }
        // Updates whose instant the capture never reached: no frame, only their value once the capture shows it.
        for p in pendingUpdates { p.apply(&e, nil) }
        return e
    }

    /// The length of the control PDUs this test reads (opcode and parameters, Core Spec Vol 6, Part B, 2.4.2).
    static let controlSizes: [Int: Int] = [
        0x00: 12, 0x03: 23, 0x04: 13, 0x05: 1, 0x06: 1, 0x07: 2, 0x11: 3, 0x14: 9, 0x15: 9, 0x18: 5,
    ]

    static func phy(_ bits: Int) -> LEPHY? {
        switch bits {
        case 1: .le1M
        case 2: .le2M
        case 4: .leCoded
        default: nil
        }
    }

    @Test(.enabled(if: TestEnvironment.tsharkPath != nil), arguments: airCaptures)
    func linkFactsAgreeWithTshark(_ path: String) throws {
        let reference = try TsharkDifferentialTests.decryptedCopy(path)
        defer { if let reference { try? FileManager.default.removeItem(atPath: reference) } }
        let rows = try #require(Self.rows(reference ?? path))
        let expected = Self.connections(rows)
        let analyzer = Analyzer.analyze(try CaptureFile.open(path: path), options: AnalyzerOptions(timeline: false))
        let ours = analyzer.connections
        let name = (path as NSString).lastPathComponent
        #expect(ours.count == expected.count, "\(name): connections")
        #expect(ours.map(\.startFrame) == expected.map(\.startFrame), "\(name): connection starts")
        let facts = expected.map { e in
            "\(hex(e.accessAddress)) from \(e.startFrame): parameters \(e.parameters.map { "\($0.frame.map(String.init) ?? "?")" }), "
                + "PHY \(e.phy.map { "\($0.frame.map(String.init) ?? "?")" }), data length \(e.dataLength.map(\.frame)), "
                + "encryption \(e.starts.map { s in s.from.map { s.observed ? "\($0)" : "~\($0)" } ?? "never" })"
        }
        print("\(name): \(expected.count) connections; " + facts.joined(separator: "; "))
        for (c, e) in zip(ours, expected) where c.startFrame == e.startFrame {
            let label = "\(name) connection #\(c.number) (\(hex(e.accessAddress)))"
            #expect(c.accessAddress == hex(e.accessAddress), "\(label): access address")
            Self.compare(c.link.parameters, e.parameters, label + " parameters")
            Self.compare(c.link.phy, e.phy, label + " PHY")
            let lengths = c.link.dataLength.changes
            #expect(lengths.map(\.frame) == e.dataLength.map(\.frame), "\(label): data length frames")
            for (ours, theirs) in zip(lengths, e.dataLength) {
                let swapped = DataLength(
                    maxTxOctets: theirs.value.maxRxOctets, maxTxTime: theirs.value.maxRxTime, maxRxOctets: theirs.value.maxTxOctets,
                    maxRxTime: theirs.value.maxTxTime)
                #expect(ours.value == theirs.value || (!theirs.ordered && ours.value == swapped), "\(label): data length at \(ours.frame)")
            }
            Self.compareEncryption(c.link.encryption, e, rows: rows, label: label)
        }
    }

    /// Updates: each one tshark shows that changes the value in force, at the frame its instant reached.
    static func compare<V: Hashable>(_ fact: LinkFact<V>, _ theirs: [(frame: Int?, after: Int, value: V)], _ label: String) {
        var inForce = fact.initial
        var changes: [(frame: Int?, after: Int, value: V)] = []
        for t in theirs where t.value != inForce {
            changes.append(t)
            inForce = t.value
        }
        #expect(fact.changes.map(\.value) == changes.map(\.value), "\(label): values")
        for (ours, t) in zip(fact.changes, changes) {
            if let frame = t.frame {
                #expect(ours.frame == frame, "\(label): frame")
            } else {
                #expect(ours.frame > t.after, "\(label): after \(t.after)")
            }
        }
    }

    /// Encrypted from the peripheral's LL_START_ENC_RSP when blescope read it (and tshark on its decrypted copy shows
    /// both), from the first encrypted PDU, inferred, when no key opened it; a link already encrypted when the capture
    /// began, from a PDU the sniffer flagged encrypted.
    static func compareEncryption(_ fact: LinkFact<Bool>, _ e: Expected, rows: [Row], label: String) {
        let ons = fact.changes.filter { $0.value }
        let offs = fact.changes.filter { !$0.value }.map(\.frame)
        #expect(offs.isEmpty, "\(label): an encryption pause (LL_PAUSE_ENC_RSP) at \(offs): none in the captures this test was written on")
        if e.starts.isEmpty {
            for on in ons {
                #expect(on.source == .inferred(.encryptedPDU(frame: on.frame)), "\(label): encryption without a start")
                #expect(rows.first { $0.frame == on.frame }?.encryptedFlag == true, "\(label): flagged encrypted at \(on.frame)")
            }
            return
        }
        let theirs = e.starts.filter { $0.from != nil }
        #expect(ons.count == theirs.count, "\(label): encryption starts")
        for (on, start) in zip(ons, theirs) {
            let source: FactSource = start.observed ? .observed(frame: on.frame) : .inferred(.encryptedPDU(frame: on.frame))
            #expect(on.frame == start.from && on.source == source, "\(label): encrypted at \(on.frame) (\(on.source))")
        }
    }
}
