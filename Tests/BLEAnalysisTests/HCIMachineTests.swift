import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import Testing

@testable import BLEAnalysis

/// The HCI machine against a connection table of its own (``HCILinks``): what each event asks of the links, read from
/// event bytes written here from Core Spec 6.0 Vol 4, Part E, 7.7.
@Suite struct HCIMachineTests {
    /// A connection table that records what the machine asks: links opened, inputs fed, packets completed.
    final class Links: HCILinks {
        var open: [UInt16: Int] = [:]
        var connections: [Connection] = []
        var fed: [(input: LinkInput, link: Int, frame: Int)] = []
        var completions: [(packets: Int, handle: UInt16, frame: Int)] = []
        var emitted: [TimelineEvent] = []

        func link(controller: UInt16, handle: UInt16, frame: Int, timestamp: Timestamp, infer: Bool) -> Int? { open[handle] }
        func openLink(
            controller: UInt16, handle: UInt16, frame: Int, timestamp: Timestamp, isLE: Bool, configure: (inout Connection) -> Void
        ) {
            var c = Connection(
                number: connections.count + 1, handle: handle, controller: controller, inferred: false, startFrame: frame,
                startTime: timestamp)
            _ = c.machine.feed(.transport(isLE ? .le : .bredr), frame: frame, timestamp: timestamp)
            configure(&c)
            open[handle] = connections.count
            connections.append(c)
        }
        func feed(_ input: LinkInput, link: Int, frame: Int, timestamp: Timestamp, source: FactSource?) {
            fed.append((input, link, frame))
        }
        func withMachine(_ link: Int, _ body: (inout LinkMachine) -> Void) { body(&connections[link].machine) }
        func completed(_ packets: Int, controller: UInt16, handle: UInt16, at moment: LinkActivity.Moment) {
            completions.append((packets, handle, moment.frame))
        }
        func peripheralAddress(link: Int) -> UInt64? { nil }
        func qualitySampleCount(link: Int) -> Int { connections[link].linkQuality.count }
        func number(controller: UInt16, handle: UInt16) -> Int? { open[handle].map { connections[$0].number } }
        func link(controller: UInt16, peer: String) -> Int? { connections.indices.last { connections[$0].peerAddress == peer } }
        func connectionNumber(link: Int) -> Int { connections[link].number }
        func peer(link: Int) -> String? { connections[link].peerAddress }
        func openLinks(controller: UInt16) -> [Int] { open.values.sorted() }
        func emit(_ event: consuming TimelineEvent, waiting: Bool) -> Int {
            emitted.append(event)
            return -1
        }
    }

    let links = Links()
    let sink = AnalysisSink(timeline: false, evidence: true, queueCapacity: 64)
    let machine: HCIMachine

    init() {
        machine = HCIMachine(keyStore: LinkKeyStore(LinkKeyMaterial()), links: links, sink: sink)
    }

    func event(_ hex: String, frame: Int) throws {
        let record = OwnedRecord(
            frame: frame, timestamp: Timestamp(microseconds: Int64(frame) * 1000), direction: .rx, kind: .event,
            bytes: try #require(bytes(fromHex: hex)))
        record.withRecord { machine.event($0) }
    }

    func command(_ hex: String, frame: Int) throws {
        let record = OwnedRecord(
            frame: frame, timestamp: Timestamp(microseconds: Int64(frame) * 1000), direction: .tx, kind: .command,
            bytes: try #require(bytes(fromHex: hex)))
        record.withRecord { machine.command($0) }
    }

    /// LE Connection Complete opens the link with its role, peer and parameters; later events on its handle become
    /// its inputs; Disconnection Complete is its end.
    @Test func eventsBecomeLinkInputs() throws {
        // LE Connection Complete (7.7.65.1): success, handle 0x0040, central, public peer 00:11:22:33:44:55,
        // interval 0x0028 (50 ms), latency 0, timeout 0x00C8 (2 s).
        try event("3E 13 01 00 40 00 00 00 55 44 33 22 11 00 28 00 00 00 C8 00 00", frame: 1)
        #expect(links.connections.count == 1)
        let c = try #require(links.connections.first)
        #expect(c.handle == 0x0040 && c.isLE && c.role == .central)
        #expect(c.peerAddress == "00:11:22:33:44:55")
        #expect(c.currentParameters == ConnectionParameters(interval: 0x28, latency: 0, timeout: 0xC8))
        // LE Data Length Change (7.7.65.7): 251 octets / 2120 µs each way.
        try event("3E 0B 07 40 00 FB 00 48 08 FB 00 48 08", frame: 2)
        // LE PHY Update Complete (7.7.65.12): 2M both ways.
        try event("3E 06 0C 00 40 00 02 02", frame: 3)
        // Encryption Change (7.7.8): on.
        try event("08 04 00 40 00 01", frame: 4)
        // Disconnection Complete (7.7.5): Remote User Terminated (0x13).
        try event("05 04 00 40 00 13", frame: 5)
        let length = DataLength(maxTxOctets: 251, maxTxTime: 2120, maxRxOctets: 251, maxRxTime: 2120)
        // Each LE event says first that the link is LE (a link up before the capture learns it there).
        let transport = links.fed.filter { $0.input == .transport(.le) }
        #expect(transport.map(\.frame) == [2, 3])
        links.fed.removeAll { $0.input == .transport(.le) }
        #expect(
            links.fed.map(\.input) == [
                .dataLengthChanged(length), .phyChanged(PHYPair(tx: .le2M, rx: .le2M)),
                .encryption(.changed(status: .success, enabled: true)),
                // Its Encryption_Enabled value (1: AES-CCM on LE) for the link's security record.
                .security(.encryptionDetails(enabledValue: 1, keySize: nil)),
                .lifecycle(.disconnected(status: .success, reason: HCIStatus(0x13), frame: 5, timestamp: Timestamp(microseconds: 5000))),
            ])
        #expect(links.fed.map(\.frame) == [2, 3, 4, 4, 5])
        // The evidence names the connection the handle belongs to.
        let kinds = sink.evidenceLog.events.map(\.kind)
        #expect(kinds.contains(.disconnectionComplete(handle: 0x0040, status: .success, reason: HCIStatus(0x13))))
        #expect(sink.evidenceLog.events.allSatisfy { $0.connection == 1 })
    }

    /// Number Of Completed Packets (7.7.19), read in place without a timeline: one call per entry, nothing decoded.
    @Test func completedPacketsInPlace() throws {
        // Two entries: handle 0x0040 3 packets, handle 0x0041 2 packets.
        try event("13 09 02 40 00 03 00 41 00 02 00", frame: 7)
        #expect(links.completions.map(\.packets) == [3, 2])
        #expect(links.completions.map(\.handle) == [0x0040, 0x0041])
        #expect(links.completions.map(\.frame) == [7, 7])
        #expect(sink.findings.isEmpty)
    }

    /// A vendor quality report naming a handle no link has opens nothing; it is held for traffic to claim.
    @Test func qualityReportOpensNoLink() throws {
        // Android BQR (vendor event 0xFF, sub-event 0x58), Monitoring report (0x01): packet type 0x02, handle 0x0002,
        // the rest of its fields zero.
        var report: [UInt8] = [0x58, 0x01, 0x02, 0x02, 0x00]
        report += [UInt8](repeating: 0, count: 60)
        try event("FF \(hexString([UInt8(report.count)])) " + hexString(report), frame: 9)
        #expect(links.connections.isEmpty)
        #expect(links.fed.isEmpty)
        let held = machine.vendorTally.takeReports(controller: 0, handle: 0x0002, claim: true)
        #expect(held.map(\.frame) == [9])
    }

    /// A command waits for its answer; Read Local Version Information's names the controller's maker.
    @Test func commandsAndTheirAnswers() throws {
        // Read Local Version Information (0x1001, 7.4.1), then its Command Complete: HCI 5.2 (0x0B), revision 0x0100,
        // LMP 0x0B, manufacturer 0x000F (Broadcom), subversion 0x2209.
        try command("01 10 00", frame: 1)
        try event("0E 0C 01 01 10 00 0B 00 01 0B 0F 00 09 22", frame: 2)
        #expect(machine.identities[0]?.manufacturer == ControllerManufacturer(0x000F))
        #expect(machine.identities[0]?.frame == 2)
        // LE Create Connection Cancel (0x200E) is never answered: said at the end, with its evidence.
        try command("0E 20 00", frame: 3)
        machine.finish()
        #expect(sink.findings.map(\.kind.code.id) == ["hci.command-unanswered"])
        #expect(sink.findings.map(\.frame) == [3])
    }

    /// What each unanswered command is worth (record times: frame × 1 ms; the time-out is 2 s).
    func unanswered() -> [(frame: Int?, severity: Finding.Severity, message: String)] {
        sink.findings.filter { $0.kind.code.id == "hci.command-unanswered" }.map { ($0.frame, $0.severity, $0.message) }
    }
    var unansweredEvidence: [Int] {
        sink.evidenceLog.events.compactMap { if case .commandUnanswered(_, let f) = $0.kind { f } else { nil } }
    }

    /// LE Rand (0x2018) logged twice 2 ms apart with one Command Complete (a corpus Android btsnooz log, frames 63, 65,
    /// 66): nothing hung, so it is said at info, with no evidence for HH-01. Sent again after 3 s, it hung: a warning.
    @Test func aCommandSentAgainWithinTheTimeOutIsNotAHang() throws {
        try command("18 20 00", frame: 1)
        try command("18 20 00", frame: 3)
        try event("0E 0C 01 18 20 00 01 02 03 04 05 06 07 08", frame: 4)
        try command("18 20 00", frame: 10)
        try command("18 20 00", frame: 3010)
        machine.finish(lastTimestamp: Timestamp(microseconds: 3_011_000))
        #expect(unanswered().map(\.frame) == [1, 10, 3010])
        #expect(unanswered().map(\.severity) == [.info, .warning, .info])
        // 3010 is the capture's last command, 1 ms before its end: cut short by it, its evidence kept for CQ-03.
        #expect(unanswered()[0].message.contains("before the same command again at frame 3, one answer for both"))
        #expect(unansweredEvidence == [10, 3010])
    }

    /// An HCI Reset ends what its controller owed: a command 500 ms before it was cut short (info); one 3 s before it
    /// was never answered, the reset likely the recovery (warning, with evidence).
    @Test func anHCIResetSettlesWhatItsControllerOwed() throws {
        try command("18 20 00", frame: 100)
        try command("03 0C 00", frame: 600)
        try event("0E 04 01 03 0C 00", frame: 601)
        try command("0E 20 00", frame: 1000)
        try command("03 0C 00", frame: 4000)
        try event("0E 04 01 03 0C 00", frame: 4001)
        machine.finish(lastTimestamp: Timestamp(microseconds: 9_000_000))
        #expect(unanswered().map(\.frame) == [100, 1000] && unanswered().map(\.severity) == [.info, .warning])
        #expect(unanswered()[0].message.contains("before the HCI Reset at frame 600"))
        #expect(unansweredEvidence == [1000])
    }

    /// A command the log ends 1 ms after cannot show its answer (info); one the log outlives by 10 s was never answered
    /// (a warning).
    @Test func theEndOfTheCaptureIsNotANoAnswer() throws {
        try command("06 04 03 40 00 13", frame: 5)
        machine.finish(lastTimestamp: Timestamp(microseconds: 6_000))
        #expect(unanswered().map(\.severity) == [.info] && unanswered()[0].message.contains("before the end of the capture"))
        try command("06 04 03 40 00 13", frame: 20)
        machine.finish(lastTimestamp: Timestamp(microseconds: 10_020_000))
        // Both keep their evidence: CQ-03 tells of the first, HH-01 of the second.
        #expect(unanswered().map(\.severity) == [.info, .warning] && unansweredEvidence == [5, 20])
    }
}
