import BLEAnalysis
import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Foundation
import Testing

/// Runs the tracker over owned records, reassembling L2CAP; collects everything the tests look at.
struct LLRun {
    var tracker = LinkLayerTracker()
    var findings: [Finding] = []
    var controls: [LLControlEvent] = []
    var starts: [LLConnectionInfo] = []
    var ends: [LLConnectionEnded] = []
    var changes: [LLParametersChanged] = []
    var encryptionStarts: [LLEncryptionStarted] = []
    var linkChanges: [LLLinkChange] = []
    var malformed: [LLMalformedPDU] = []
    var advertising = 0
    /// (last frame, ATT opcode, handle or nil) of every reassembled ATT PDU.
    var att: [(frame: Int, opcode: UInt8, handle: UInt16?)] = []
    var pdus: [[UInt8]] = []
    var reassemblers: [ACLStreamKey: L2CAPReassembler] = [:]

    mutating func feed(_ recs: [TinyPcap.Rec]) {
        var t = tracker
        var llFindings: [Finding] = []
        for r in recs {
            r.bytes.withUnsafeBytes { raw in
                let rec = CaptureRecord(
                    frame: r.frame, timestamp: Timestamp(microseconds: r.micros), direction: .unknown, kind: .linkLayer,
                    originalLength: r.origLen, includedLength: r.bytes.count, fileOffset: 0, linkType: r.linkType, bytes: raw)
                // Outputs are handled inside the callback (borrowed payloads).
                t.process(rec, findings: &llFindings) { o in handle(o) }
            }
        }
        t.finish(findings: &llFindings, frame: recs.count, timestamp: Timestamp(microseconds: 0)) { o in handle(o) }
        tracker = t
        findings.append(contentsOf: llFindings)
        for k in reassemblers.keys { reassemblers[k]!.finish(findings: &findings, frame: recs.count) }
    }

    mutating func handle(_ o: LinkLayerOutput) {
        switch o {
        case .advertising: advertising += 1
        case .connectionStarted(let i): starts.append(i)
        case .connectionEnded(let e): ends.append(e)
        case .control(let c): controls.append(c)
        case .parametersChanged(let p): changes.append(p)
        case .encryptionStarted(let e): encryptionStarts.append(e)
        case .linkChanged(let c): linkChanges.append(c)
        case .malformed(let m): malformed.append(m)
        case .l2capFragment(let f):
            reassemblers[f.streamKey, default: L2CAPReassembler()].feed(f.fragment, findings: &findings) { pdu in
                pdus.append(Array(pdu.bytes))
                if pdu.channel == 4, pdu.bytes.count >= 5 {
                    let p = pdu.payload
                    // The first handle field: bytes 1–2 for most PDUs; after the request opcode (Error Response),
                    // the length (Read By Type / Read By Group Type Response) or the format (Find Information Response).
                    let at = [0x01, 0x05, 0x09, 0x11].contains(p[0]) ? 2 : 1
                    att.append((pdu.lastFrame, p[0], p.count >= at + 2 ? UInt16(p[at]) | UInt16(p[at + 1]) << 8 : nil))
                }
            }
        }
    }
}

@Suite struct LinkLayerTrackerTests {
    @Test func fragmentsReassembleIntoATT() {
        var b = NordicBuilder()
        b.connect()
        let pdu = NordicBuilder.attPDU(Array(0..<40))
        b.data(.start, Array(pdu[0..<27]), central: false, event: 1)
        b.data(.continuation, [], central: true, event: 2)
        b.data(.continuation, Array(pdu[27...]), central: false, sn: true, event: 2)
        var run = LLRun()
        run.feed(b.records)
        #expect(run.starts.count == 1 && run.starts[0].central?.value == 0x1122_3344_5566 && !run.starts[0].inferred)
        #expect(run.pdus == [pdu])
        #expect(run.att.map(\.frame) == [4] && run.att.map(\.opcode) == [0x1B] && run.att.map(\.handle) == [0x002A])
        let s = run.tracker.connections[0].stats
        #expect(s.packets == 3 && s.emptyPDUs == 1 && s.events == 2 && s.maxPacketsPerEvent == 2 && s.dataPDUsPeripheralToCentral == 2)
        #expect(run.findings.isEmpty)
    }

    /// A CONNECT_IND cut short still names its access address and, from 28 octets on, its timing (Core Spec Vol 6,
    /// Part B, 2.3.3.1): malformed, said so, and a link, which the peripheral may answer (SweynTooth's CC2540 capture:
    /// Length 28 at frame 14, an Empty PDU on 0x9a328370 at 17). Under 19 octets the access address is not there.
    @Test(arguments: [(28, true), (19, true), (18, false)])
    func aConnectIndCutShortOpensTheLinkItNames(_ length: Int, _ opens: Bool) {
        var b = NordicBuilder()
        let c = LLConnectInd(
            initiator: LLDeviceAddress(0x1122_3344_5566, isRandom: true), advertiser: LLDeviceAddress(0xC0FF_EE00_0001),
            parameters: LLConnectionParameters(accessAddress: NordicBuilder.aa, crcInit: NordicBuilder.crcInit, interval: 16, timeout: 50))
        let whole = LLAdvertisingPacketPDU(.connectInd(c)).bytes
        #expect(whole.count == 2 + 34)
        b.add(aa: .advertising, pdu: [whole[0], UInt8(length)] + whole[2..<(2 + length)], crcInit: 0x55_5555, data: false)
        b.data(.continuation, [], central: false, event: 0)
        var run = LLRun()
        run.feed(b.records)
        #expect(run.findings.map(\.kind.code.id).prefix(1) == ["ll.malformed"])
        #expect(run.starts.filter { !$0.inferred }.count == (opens ? 1 : 0))
        guard opens, let link = run.starts.first else { return }
        #expect(link.accessAddress == NordicBuilder.aa && link.startFrame == 1 && link.peripheral?.value == 0xC0FF_EE00_0001)
        #expect(link.connectParameters == nil && link.parameters.channelMap == nil)
        #expect(link.parameters.interval == (length >= 28 ? 16 : nil) && link.parameters.timeout == (length >= 28 ? 50 : nil))
        #expect(run.tracker.connections[0].stats.packets == 1)
    }

    @Test func continuationWithoutStartAndStartThatNeverCompletes() {
        var b = NordicBuilder()
        b.connect()
        b.data(.continuation, [1, 2, 3], event: 1)  // no start before it
        b.data(.start, Array(NordicBuilder.attPDU(Array(0..<40))[0..<27]), central: false, event: 1)  // never completed
        var run = LLRun()
        run.feed(b.records)
        #expect(run.pdus.isEmpty)
        #expect(run.findings.map(\.kind.code.id) == ["l2cap.unexpected-continuation", "l2cap.cut-by-end"])
        #expect(run.findings.first?.frame == 2)
    }

    @Test func retransmissionsCrcErrorsAndEncryptionAreCountedNotDecoded() {
        var b = NordicBuilder()
        b.connect()
        let pdu = NordicBuilder.attPDU([1, 2])
        b.data(.start, pdu, event: 1)
        b.data(.start, pdu, event: 2)  // same SN, same bytes: retransmission
        b.data(.start, pdu, sn: true, event: 3, crcOK: false)  // bad CRC
        b.data(.start, pdu, sn: true, event: 4, encrypted: true)  // encrypted, MIC not ok: not decrypted
        b.data(.control, LLControlPacket(.terminateInd(errorCode: 0x13)).bytes, central: false, event: 5)
        var run = LLRun()
        run.feed(b.records)
        #expect(run.pdus == [pdu])
        let s = run.ends.first?.stats
        #expect(s?.retransmissions == 1 && s?.crcErrors == 1 && s?.encryptedUndecrypted == 1 && s?.events == 5)
        #expect(run.ends.count == 1 && run.ends[0].reason == .terminated(errorCode: 0x13) && run.ends[0].frame == 6)
        #expect(run.controls.map(\.opcode) == [.terminateInd])
    }

    /// A PDU sent again after the peer acknowledged it, by a sender that never received that acknowledgement (its NESN
    /// still expects the acknowledging PDU, Core Spec Vol 6, Part B, 4.5.9): a retransmission, decoded once (the WHAD
    /// pairing capture, frames 1525–1527, whose copy at 1527 failed its MIC when taken for a new PDU). The near miss: the
    /// sender's NESN shows it received the acknowledgement, so the same bytes with the same SN are a new PDU (the events
    /// between were not captured).
    @Test(arguments: [false, true])
    func repeatAfterAnAcknowledgementTheSenderMissedIsARetransmission(_ senderGotTheAck: Bool) {
        var b = NordicBuilder()
        b.connect()
        let pdu = NordicBuilder.attPDU([1, 2])
        let ll = { (nesn: Bool, sn: Bool, payload: [UInt8], llid: LLID) in LLDataPDU(llid: llid, nesn: nesn, sn: sn, payload: payload).bytes
        }
        b.add(aa: NordicBuilder.aa, pdu: ll(false, false, pdu, .start), crcInit: NordicBuilder.crcInit, data: true, central: true, event: 1)
        // The peripheral's empty PDU, SN 0, NESN 1: acknowledges the central's SN 0.
        b.add(
            aa: NordicBuilder.aa, pdu: ll(true, false, [], .continuation), crcInit: NordicBuilder.crcInit, data: true, central: false,
            event: 1)
        b.add(
            aa: NordicBuilder.aa, pdu: ll(senderGotTheAck, false, pdu, .start), crcInit: NordicBuilder.crcInit, data: true, central: true,
            event: 2)
        var run = LLRun()
        run.feed(b.records)
        #expect(run.pdus == (senderGotTheAck ? [pdu, pdu] : [pdu]))
        #expect(run.tracker.connections[0].stats.retransmissions == (senderGotTheAck ? 0 : 1))
    }

    /// A link whose file kept only packets with payload (the Ph0wn H-Band watch capture: 301 packets, no empty PDU; the
    /// watch's same Error Response at 29 and 31, SN 0 both times, the second dropped as a retransmission and the request
    /// 30 left unanswered, a false GATT-02): past its first 16 packets, a PDU with the SN and bytes of the one before
    /// it is kept. The near miss: one empty PDU at the start shows the sniffer keeps them, and the same repeat is a
    /// retransmission, counted and not decoded.
    @Test(arguments: [false, true]) func aRepeatOnALinkWithoutEmptyPDUsIsKept(_ emptyAtStart: Bool) {
        var b = NordicBuilder()
        b.connect()
        if emptyAtStart { b.data(.continuation, [], central: false, nesn: true, event: 1) }
        for i in 0..<16 { b.data(.start, NordicBuilder.attPDU([UInt8(i)]), sn: i % 2 == 1, event: UInt16(i + 2)) }
        let repeated = NordicBuilder.attPDU([15])
        b.data(.start, repeated, sn: true, event: 18)
        var run = LLRun()
        run.feed(b.records)
        #expect(run.pdus.count == (emptyAtStart ? 16 : 17) && run.pdus.last == repeated)
        #expect(run.tracker.connections[0].stats.retransmissions == (emptyAtStart ? 1 : 0))
    }

    /// Advertising whose CRC failed is not decoded but said: all 4 bad → a warning naming the first (frame 1); 1 bad of
    /// 10 → info.
    @Test func advertisingWithBadCRCsIsSaidNotDropped() {
        func adverts(bad: Set<Int>, of n: Int) -> [Finding] {
            var b = NordicBuilder()
            for i in 1...n {
                let pdu = LLAdvertisingPacketPDU(.advInd(advertiser: LLDeviceAddress(0xC0FF_EE00_0001), data: [0x02, 0x01, 0x06])).bytes
                b.add(aa: .advertising, pdu: pdu, crcInit: 0x55_5555, data: false, crcOK: !bad.contains(i))
            }
            var run = LLRun()
            run.feed(b.records)
            return run.findings.filter { $0.kind.code.id == "ll.advertising-crc" }
        }
        let all = adverts(bad: [1, 2, 3, 4], of: 4)
        #expect(all.count == 1 && all.first?.severity == .warning && all.first?.frame == 1)
        #expect(all.first?.message.hasPrefix("all 4 of 4 advertising packets failed their CRC") == true)
        let few = adverts(bad: [7], of: 10)
        #expect(few.count == 1 && few.first?.severity == .info && few.first?.frame == 7)
        #expect(adverts(bad: [], of: 3).isEmpty)
    }

    @Test func phyUpdateAppliesAtItsInstant() {
        var b = NordicBuilder()
        b.connect()
        b.data(.control, LLControlPacket(.phyUpdateInd(centralToPeripheralPHY: 2, peripheralToCentralPHY: 2, instant: 6)).bytes, event: 3)
        b.data(.continuation, [], central: false, event: 5)
        b.data(.continuation, [], sn: true, event: 6)
        var run = LLRun()
        run.feed(b.records)
        #expect(run.changes.count == 1 && run.changes.first?.frame == 4 && run.changes.first?.parameters.centralToPeripheralPHY == .le2M)
    }

    // MARK: - Differential against tshark on real air captures

    static let capturesDir: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.deletingLastPathComponent().appendingPathComponent("shared/captures").path
    }()

    static let airCaptures = [
        "nrfsniffer-lt272_surplife-led-ll-fragmentation.pcapng",
        "nrfsniffer-lt272_sweyntooth-atsamb11-invalid-l2cap-fragment.pcap",
        "lell-rf-lt256_crackle-lesc-pairing.pcapng",
        "lell-rf-lt256-pcapng-named-pcap_whad-gatt-discovery.pcap",
    ]

    static func tshark(_ args: [String]) -> [[String]]? { TestEnvironment.tsharkFields(args) }

    static var hasTshark: Bool { TestEnvironment.tsharkPath != nil }

    @Test(.enabled(if: FileManager.default.fileExists(atPath: capturesDir)), arguments: airCaptures)
    func agreesWithTshark(_ name: String) throws {
        let path = Self.capturesDir + "/" + name
        guard let recs = TinyPcap.read(path) else { return }  // capture absent: nothing to compare
        var run = LLRun()
        run.feed(recs)
        guard Self.hasTshark else { return }

        // Frames tshark treats as undecodable for us: CRC-bad (nRF flag) and frames we counted as encrypted.
        let crcBad = Set(
            (Self.tshark([
                "-r", path, "-Y", "nordic_ble.crcok == 0 || btle_rf.flags.crc_valid == 0 && btle_rf.flags.crc_checked == 1",
                "-T", "fields", "-e", "frame.number",
            ]) ?? []).compactMap { Int($0[0]) })
        // 1. CONNECT_IND count.
        // tshark also lists CONNECT_INDs whose CRC is bad (5 of the 6 in the Surplife file): only CRC-good ones count.
        let connectInds =
            (Self.tshark([
                "-r", path, "-Y", "btle.advertising_header.pdu_type == 5 && btle.link_layer_data", "-T", "fields", "-e", "frame.number",
            ]) ?? [])
            .compactMap { Int($0[0]) }.filter { !crcBad.contains($0) }
        #expect(run.starts.filter { !$0.inferred }.map(\.startFrame) == connectInds, "\(name): CONNECT_IND")

        // 2. CRC-bad packets. The crackle file (LT 256) carries no CRC verdict and tshark does not check data-channel CRCs
        // ("CRC unchecked"); we check them with the CONNECT_IND CRC init 0x2ED45D and find frames 132 and 212 bad
        // (confirmed independently by a Python CRC-24 over tshark's frame bytes).
        #expect(run.tracker.crcErrors == (name.hasPrefix("lell-rf-lt256_crackle") ? 2 : crcBad.count), "\(name): CRC errors")

        // 3. LL control opcodes: ours (retransmissions included, as tshark lists them) vs tshark's on CRC-good frames.
        // For LT 256 without a CRC verdict tshark decodes every frame; frames we found encrypted or CRC-bad are excluded.
        let ours = Dictionary(grouping: run.controls, by: \.frame).mapValues { $0[0].opcode.rawValue }
        var theirs: [Int: UInt8] = [:]
        for row in Self.tshark(["-r", path, "-Y", "btle.control_opcode", "-T", "fields", "-e", "frame.number", "-e", "btle.control_opcode"])
            ?? []
        {
            guard let f = Int(row[0]), let op = UInt8(row[1].dropFirst(2), radix: 16), !crcBad.contains(f) else { continue }
            theirs[f] = op
        }
        let onlyTheirs = theirs.filter { ours[$0.key] == nil }
        let onlyOurs = ours.filter { theirs[$0.key] == nil }
        // Known: crackle frames 167 and 170 are encrypted (after LL_START_ENC_REQ in 166): tshark shows their ciphertext as
        // opcodes 0x71 and 0x1d; we count them as encrypted-undecrypted. (Frame 61, opcode 0xff, has a good CRC: both report it.)
        let expectedOnlyTheirs: Set<Int> = name.hasPrefix("lell-rf-lt256_crackle") ? [167, 170] : []
        #expect(
            Set(onlyTheirs.keys) == expectedOnlyTheirs, "\(name): control frames only tshark has: \(onlyTheirs.sorted { $0.key < $1.key })")
        #expect(onlyOurs.isEmpty, "\(name): control frames only we have: \(onlyOurs)")
        for (f, op) in theirs where ours[f] != nil { #expect(ours[f] == op, "\(name) frame \(f)") }

        // 4. ATT PDUs: (frame, opcode, handle) after L2CAP reassembly of our fragments.
        // tshark decodes ATT in CRC-bad frames too (Surplife 13399 0x64, 13638, 16157 0x77 …): those are excluded.
        var tsATT: [Int: (UInt8, UInt16?)] = [:]
        var tsRetransmitted: Set<Int> = []
        for row in Self.tshark([
            "-r", path, "-Y", "btatt", "-T", "fields", "-e", "frame.number", "-e", "btatt.opcode", "-e", "btatt.handle",
            "-e", "btle.retransmit",
        ]) ?? [] {
            guard let f = Int(row[0]), let op = UInt8(row[1].dropFirst(2), radix: 16), !crcBad.contains(f) else { continue }
            if row[3] == "1" { tsRetransmitted.insert(f) }
            let h = row[2].split(separator: ",").first.flatMap { UInt16($0.dropFirst(2), radix: 16) }
            tsATT[f] = (op, h)
        }
        var ourATT: [Int: (UInt8, UInt16?)] = [:]
        for a in run.att { ourATT[a.frame] = (a.opcode, a.handle) }
        let missing = Set(tsATT.keys).subtracting(ourATT.keys).sorted()
        let extra = Set(ourATT.keys).subtracting(tsATT.keys).sorted()
        // Known: link-layer retransmissions (same SN, same bytes as the previous PDU in that direction) are dropped
        // here and decoded again by tshark: the frames tshark itself flags btle.retransmit whose bytes repeat (Surplife 29168),
        // and crackle frame 60 (repeats 59; tshark has no direction for LT 256 so it flags nothing).
        let expectedMissing = name.hasPrefix("lell-rf-lt256_crackle") ? [60] : missing.filter { tsRetransmitted.contains($0) }
        #expect(missing == expectedMissing, "\(name): ATT only tshark has: \(missing.map { ($0, tsATT[$0]!) })")
        #expect(extra.isEmpty, "\(name): ATT only we have: \(extra.map { ($0, ourATT[$0]!) })")
        for (f, v) in tsATT {
            guard let o = ourATT[f] else { continue }
            #expect(o.0 == v.0, "\(name) frame \(f) opcode")
            // Handles are compared where the PDU carries one at a fixed place; tshark also prints the handle of the
            // request for Read/Write Responses (0x0B, 0x0D, 0x13, …), which those PDUs do not carry.
            let withHandle: Set<UInt8> = [0x01, 0x05, 0x09, 0x0A, 0x0C, 0x11, 0x12, 0x16, 0x17, 0x1B, 0x1D, 0x52, 0xD2]
            if let h = v.1, withHandle.contains(v.0) { #expect(o.1 == h, "\(name) frame \(f) handle \(hex(v.0))") }
        }
        for f in run.findings { print("  finding: \(f)") }
        print(
            "[\(name)] records \(recs.count) connections \(run.starts.count) controls \(run.controls.count)/tshark \(theirs.count) ATT \(ourATT.count)/tshark \(tsATT.count) crc-bad \(run.tracker.crcErrors) findings \(run.findings.count)"
        )
        for c in run.tracker.connections { print("  \(c.info.handle) \(c.info.accessAddress) \(c.stats)") }
    }

    // MARK: - Performance

    /// ≥ 5 M records/s in a release build (the figure is printed; debug builds only check that it runs).
    @Test func trackerThroughput() {
        var b = NordicBuilder()
        b.connect()
        var event: UInt16 = 1
        for i in 0..<20_000 {
            if i % 4 == 0 { event &+= 1 }
            if i % 10 == 0 {
                b.data(
                    .start, NordicBuilder.attPDU([UInt8(truncatingIfNeeded: i), 1, 2, 3]), central: i % 20 == 0, sn: i % 40 < 20,
                    event: event)
            } else {
                b.data(.continuation, [], central: i % 2 == 0, sn: i % 4 < 2, event: event)
            }
        }
        let recs = b.records
        let buffers = recs.map(\.bytes)
        var tracker = LinkLayerTracker()
        var findings: [Finding] = []
        var fragments = 0
        let rounds = 25
        let start = ContinuousClock.now
        for _ in 0..<rounds {
            for (i, r) in recs.enumerated() {
                buffers[i].withUnsafeBytes { raw in
                    let rec = CaptureRecord(
                        frame: r.frame, timestamp: Timestamp(microseconds: r.micros), direction: .unknown, kind: .linkLayer,
                        originalLength: r.origLen, includedLength: raw.count, fileOffset: 0, linkType: 272, bytes: raw)
                    tracker.process(rec, findings: &findings) { o in if case .l2capFragment = o { fragments += 1 } }
                }
            }
        }
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = Double(recs.count * rounds) / seconds
        print("LinkLayerTracker: \(recs.count * rounds) records in \(seconds) s = \(String(fractionDigits: 2, rate / 1e6)) M records/s")
        #expect(fragments > 0)
    }
}
