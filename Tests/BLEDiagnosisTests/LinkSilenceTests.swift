import BLEAnalysis
import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Foundation
import Testing

/// An air link the capture shows no end of (``LinkSilence``): how the tracker ends it from what the capture goes on to
/// show, from typed packets, and on every real air capture against tshark.
@Suite struct LinkSilenceTests {
    /// NordicBuilder's CONNECT_IND: interval 24 (30 ms), supervision timeout 72 (720 ms), this advertiser.
    static let peripheral = LLDeviceAddress(0xC0FF_EE00_0001)
    static let stranger = LLDeviceAddress(0x0A0B_0C0D_0E0F)

    /// The tracker's ends, the capture ending at its last record's time (as the analyzer ends it).
    static func ends(_ b: NordicBuilder) -> [LLConnectionEnded] {
        var tracker = LinkLayerTracker()
        var findings: [Finding] = []
        var ends: [LLConnectionEnded] = []
        for r in b.records {
            r.bytes.withUnsafeBytes { raw in
                let rec = CaptureRecord(
                    frame: r.frame, timestamp: Timestamp(microseconds: r.micros), direction: .unknown, kind: .linkLayer,
                    originalLength: r.origLen, includedLength: r.bytes.count, fileOffset: 0, linkType: r.linkType, bytes: raw)
                tracker.process(rec, findings: &findings) { if case .connectionEnded(let e) = $0 { ends.append(e) } }
            }
        }
        let last = Timestamp(microseconds: b.records.last?.micros ?? 0)
        tracker.finish(findings: &findings, frame: b.records.count, timestamp: last) {
            if case .connectionEnded(let e) = $0 { ends.append(e) }
        }
        return ends
    }

    static func advertise(_ b: inout NordicBuilder, _ who: LLDeviceAddress, after dt: Int64) {
        b.add(
            aa: .advertising, pdu: LLAdvertisingPacketPDU(.advInd(advertiser: who, data: [])).bytes, crcInit: 0x55_5555, data: false, dt: dt
        )
    }

    /// A link of three connection events (empty PDUs both ways), its last packet at frame 7.
    static func link() -> NordicBuilder {
        var b = NordicBuilder()
        b.connect()
        for event: UInt16 in 0..<3 {
            b.data(.continuation, [], central: true, sn: event & 1 == 1, event: event)
            b.data(.continuation, [], central: false, sn: event & 1 == 1, event: event)
        }
        return b
    }

    static func silence(_ e: LLConnectionEnded?) -> LinkSilence? {
        if case .silent(let s) = e?.reason { return s }
        return nil
    }

    @Test func aPeripheralAdvertisingBeforeTheNextEventLeftTheLink() throws {
        var b = Self.link()
        Self.advertise(&b, Self.peripheral, after: 1_000)  // frame 8, 1 ms after the last packet: within one 30 ms interval
        for _ in 0..<10 { Self.advertise(&b, Self.stranger, after: 100_000) }  // the capture goes on 1 s
        let s = try #require(Self.silence(Self.ends(b).first))
        #expect(s.lastFrame == 7 && s.carriedPackets && s.readvertised?.frame == 8)
        #expect(s.supervisionTimeout == 720_000 && s.interval == 30_000)
        let end = s.ending
        #expect(end.endedBy == .peer && end.code == nil && end.reason == LinkSilence.peripheralLeft && end.frame == 7)
        #expect(
            end.inferredFrom
                == "the peripheral was advertising again at frame 8 (its advertisement), 1 ms after the link's last packet (frame 7)")
    }

    @Test func advertisingAfterTheNextEventCannotTellATerminateMissedFromALoss() throws {
        var b = Self.link()
        Self.advertise(&b, Self.peripheral, after: 200_000)  // 200 ms: past the 30 ms interval, within the 720 ms timeout
        for _ in 0..<10 { Self.advertise(&b, Self.stranger, after: 100_000) }
        let end = try #require(Self.silence(Self.ends(b).first)).ending
        #expect(end.endedBy == .unknown && end.reason == LinkSilence.endedUnseen && end.code == nil)
    }

    @Test func noPacketAfterTheConnectRequestAndTheAdvertiserBackIsAFailedEstablishment() throws {
        var b = NordicBuilder()
        b.connect()
        Self.advertise(&b, Self.peripheral, after: 98_000)
        for _ in 0..<10 { Self.advertise(&b, Self.stranger, after: 100_000) }
        let s = try #require(Self.silence(Self.ends(b).first))
        #expect(!s.carriedPackets && s.lastFrame == 1 && s.readvertised?.frame == 2)
        let end = s.ending
        #expect(end.endedBy == .link && end.code?.rawValue == 0x3E && end.frame == 1)
        // Its 720 ms timeout never ran: the diagnosis says the failed establishment (DC-10), not a short timeout (LP-02),
        // which a link that carried packets with the same request still gets.
        let diagnosis = try RuleTest.diagnose(air: b)
        #expect(diagnosis.of("DC-10").map(\.frame) == [1] && diagnosis.of("LP-02").isEmpty)
        var carried = Self.link()
        for _ in 0..<10 { Self.advertise(&carried, Self.stranger, after: 100_000) }
        #expect(try RuleTest.diagnose(air: carried).of("LP-02").map(\.frame) == [1])
    }

    /// Silence alone may be the sniffer's (it lost the hopping): no end is inferred; the sniffer followed the link until
    /// its last packet, and nothing is claimed after it (issue 49, point 7).
    @Test func silenceWithoutTheAdvertiserInfersNoEnd() throws {
        var b = Self.link()
        Self.advertise(&b, Self.peripheral, after: 500)  // advertising while the link still runs: not its end
        b.data(.continuation, [], central: true, event: 3)  // frame 9, the last packet
        for _ in 0..<10 { Self.advertise(&b, Self.stranger, after: 100_000) }
        #expect(Self.ends(b).map(\.reason) == [.notFollowed] && Self.ends(b).map(\.frame) == [9])
        let c = try #require(Analyzer.analyze(try RuleTest.airCapture(b.records), options: AnalyzerOptions()).connections.first)
        #expect(c.lifecycle.ending == nil && c.lifecycle.followedUntil?.frame == 9)
    }

    @Test func aCaptureThatEndsWithinTheTimeoutLeavesTheLinkOpen() {
        var b = Self.link()
        for _ in 0..<5 { Self.advertise(&b, Self.stranger, after: 100_000) }  // 500 ms < 720 ms
        #expect(Self.ends(b).map(\.reason) == [.captureEnded])
    }

    /// Every real air capture the tests find: each link blescope ends by inference, against tshark's packets — its last
    /// good packet on the access address is the frame cited, and the first ADV_IND, ADV_DIRECT_IND or SCAN_REQ naming
    /// the peripheral after it is the advertising cited.
    @Test func everyInferredEndIsWhatTsharkShows() throws {
        guard TestEnvironment.tsharkPath != nil else {
            print("LinkSilenceTests: tshark not installed; skipped")
            return
        }
        var checked = 0
        for path in TestEnvironment.realCaptures {
            guard let capture = try? CaptureFile.open(path: path) else { continue }
            let analyzer = Analyzer.analyze(capture, options: AnalyzerOptions(timeline: false))
            let inferred = analyzer.connections.filter { $0.lifecycle.ending?.inferredFrom != nil }
            guard !inferred.isEmpty else { continue }
            let rows = try #require(
                TestEnvironment.tsharkFields(
                    ClassicPcapHeaders.tsharkOptions(path) + [
                        "-r", path, "-T", "fields", "-e", "frame.number", "-e", "btle.access_address", "-e", "btle.crc.incorrect",
                        "-e", "nordic_ble.crcok", "-e", "btle.advertising_header.pdu_type", "-e", "btle.advertising_address",
                        "-e", "btle.data_header.llid", "-e", "btle.data_header.length",
                    ]))
            // A PPI pcapng's user DLT 147 is set only for classic pcap headers (`ClassicPcapHeaders`): tshark reads no
            // link layer there, so there is nothing to hold blescope to.
            guard rows.contains(where: { $0.count >= 2 && !$0[1].isEmpty }) else {
                print("LinkSilenceTests: tshark reads no link layer in \(path); skipped")
                continue
            }
            for c in inferred {
                let end = try #require(c.lifecycle.ending)
                let aa = try #require(
                    c.accessAddress.flatMap { UInt32($0.lowercased().replacingOccurrences(of: "0x", with: ""), radix: 16) })
                let peer = String(try #require(c.peerAddress).prefix(17)).lowercased()  // without " (random)"
                let good = rows.filter { r in
                    r.count >= 6 && UInt32(r[1].replacingOccurrences(of: "0x", with: ""), radix: 16) == aa && r[2].isEmpty
                        && (r[3].isEmpty || r[3] == "1")
                }
                let last = good.compactMap { Int($0[0]) }.max() ?? c.startFrame
                if end.reason == LinkSilence.encryptedTerminateReason {
                    // The link's last exchange: a control PDU of 6 octets on air (an LL_TERMINATE_IND's 2 and the MIC), then
                    // at most its acknowledgement.
                    let frames = good.compactMap { Int($0[0]) }.filter { $0 >= end.frame }
                    let terminate = good.first { Int($0[0]) == end.frame }
                    #expect(terminate?.count ?? 0 >= 8 && terminate?[6] == "0x03" && terminate?[7] == "6", "\(path) #\(c.number)")
                    #expect(frames.count <= 2 && frames.last == last, "\(path) #\(c.number): after \(end.frame): \(frames)")
                } else {
                    #expect(end.frame == last, "\(path) #\(c.number): blescope \(end.frame), tshark \(last)")
                }
                let again = rows.first { r in
                    r.count >= 6 && (Int(r[0]) ?? 0) > last && ["0x00", "0x01", "0x03", "0", "1", "3"].contains(r[4])
                        && r[5].lowercased() == peer
                }.flatMap { Int($0[0]) }
                #expect(again != nil, "\(path) #\(c.number): tshark shows no advertising after frame \(last)")
                if let again {
                    #expect(end.inferredFrom?.contains("at frame \(again) (") == true, "\(path) #\(c.number): \(end.inferredFrom ?? "")")
                }
                checked += 1
            }
        }
        // The SweynTooth ATSAMB11 capture in ../shared/captures ends its link this way.
        if TestEnvironment.sharedCaptures != nil { #expect(checked >= 1) }
        print("LinkSilenceTests: \(checked) inferred ends checked against tshark")
    }
}
