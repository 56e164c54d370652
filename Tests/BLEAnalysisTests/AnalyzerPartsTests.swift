import BLEAnalysisTestSupport
import BLECore
import BLEProtocols
import Testing

@testable import BLEAnalysis

/// The small state machines the analyzer wires together: command pairing, bounded findings, controller buffers and the
/// held-bytes budget. Expected values are worked out by hand from the inputs each test feeds.
@Suite struct AnalyzerPartsTests {
    static func at(_ frame: Int, _ us: Int64 = 0, event: Int? = nil) -> HCICommandPairing.Pending {
        .init(frame: frame, timestamp: Timestamp(microseconds: us), eventID: event)
    }

    @Test func commandsPairPerControllerAndOpcode() {
        var p = HCICommandPairing()
        #expect(p.feed(.reset, controller: 0, Self.at(1)).unanswered == nil)
        #expect(p.feed(.reset, controller: 1, Self.at(2)).unanswered == nil)  // another controller: its own command
        #expect(p.feed(.leReadBufferSize, controller: 0, Self.at(3)).unanswered == nil)
        #expect(p.answer(.reset, controller: 1)?.frame == 2)
        #expect(p.answer(.reset, controller: 1) == nil)  // answered once
        // Sent again before its answer: the first was never answered.
        let again = p.feed(.reset, controller: 0, Self.at(4))
        #expect(again.unanswered?.frame == 1 && !again.refused)
        #expect(p.takeUnanswered().map(\.frame) == [3, 4])
        #expect(p.takeUnanswered().isEmpty)
    }

    @Test func pendingCommandsAreBounded() {
        var p = HCICommandPairing()
        for i in 0..<HCICommandPairing.maxPending {
            #expect(!p.feed(HCICommand(rawValue: UInt16(i)), controller: 0, Self.at(i + 1)).refused)
        }
        let over = p.feed(HCICommand(rawValue: 0xFFFF), controller: 0, Self.at(5000, event: 7))
        #expect(over.refused && over.unanswered == nil)
        #expect(p.answer(HCICommand(rawValue: 0xFFFF), controller: 0) == nil)
    }

    @Test func findingsBeyondTheBoundAreCountedNotKept() {
        var bound = FindingsBound()
        bound.keptPerCode = 2
        let a = FindingKind(.l2capFrameTooLong, message: "a"), b = FindingKind(.l2capNoCredit, message: "b")
        var findings = (1...5).map { Finding(.warning, a, frame: $0) } + [Finding(.info, b, frame: 6)]
        bound.compact(&findings)
        #expect(findings.map(\.frame) == [1, 2, 6])
        #expect(bound.threshold == 3 + 10_000)
        // Later findings: the ones kept stay, the new ones are judged against what was kept.
        findings += [Finding(.warning, b, frame: 7), Finding(.warning, b, frame: 8)]
        bound.compact(&findings)
        #expect(findings.map(\.frame) == [1, 2, 6, 7])
        let notes = bound.omissions()
        #expect(
            notes.map(\.kind.message) == [
                "3 more l2cap.frame-too-long findings not listed (the first 2 are)",
                "1 more l2cap.no-credit findings not listed (the first 2 are)",
            ])
        #expect(notes.map(\.frame) == [3, 8])
        #expect(bound.firstTime(.tooManyPendingCommands(1)) && !bound.firstTime(.tooManyPendingCommands(1)))
    }

    @Test func aFullControllerBufferIsChargedToTheConnectionThatFilledIt() {
        var buffers = ControllerBuffers()
        buffers.bufferSize(controller: 0, length: 1021, packets: 8)  // BR/EDR
        buffers.leBufferSize(controller: 0, length: 251, packets: 3)  // LE wins
        buffers.bufferSize(controller: 0, length: 1021, packets: 8)  // and stays
        buffers.leBufferSize(controller: 1, length: 0, packets: 0)  // 0: LE shares the BR/EDR buffer, none known
        #expect(buffers.sizes[0]! == (251, 3) && buffers.sizes[1] == nil)
        #expect(buffers.sent(controller: 0, connection: 5, canCharge: true) == nil)
        #expect(buffers.sent(controller: 0, connection: 6, canCharge: true) == nil)
        #expect(buffers.sent(controller: 0, connection: 6, canCharge: true) == 3)  // the third of 3 fills it
        #expect(buffers.sent(controller: 0, connection: 5, canCharge: true) == nil)  // already full, charged to 6
        buffers.completed(controller: 0, packets: 1)
        #expect(buffers.roomAgain(controller: 0) == nil)  // 3 of 3 still in flight
        buffers.completed(controller: 0, packets: 2)
        #expect(buffers.roomAgain(controller: 0) == 6)
        #expect(buffers.roomAgain(controller: 0) == nil)
        #expect(buffers.sent(controller: 1, connection: 1, canCharge: true) == nil)  // no size known: never full
    }

    @Test func heldBytesAreCountedEveryEighthOfTheBudgetAndTheLargestGoFirst() {
        var budget = HeldBytesBudget(limit: 1 << 20)
        #expect(!budget.feed(100_000) && budget.feed(31_073))  // past 131,072 (1 MiB / 8)
        #expect(budget.check(held: 1 << 20) { [] } == nil)  // at the bound: within it
        let holders: [HeldBytesBudget.Holder] = [
            .init(bytes: 200_000, index: 0), .init(bytes: 700_000, index: 1),
            .init(bytes: 300_000, index: 2),
        ]
        // 1,200,000 held: dropping 700,000 leaves 500,000, under half of 1,048,576.
        let shed = budget.check(held: 1_200_000) { holders }
        #expect(shed?.holders == [1] && shed?.rest == false)
        #expect(budget.sheds == 1 && budget.dropped == 700_000)
        // Holders that do not free enough: everything else goes too.
        let all = budget.check(held: 1_100_000) { [.init(bytes: 100_000, index: 3)] }
        #expect(all?.holders == [3] && all?.rest == true)
        budget.droppedElsewhere(1_000_000)
        #expect(budget.sheds == 2 && budget.dropped == 1_800_000)
    }

    /// K-frames of an SDU on a credit-based channel: the first with the 2-byte SDU length, little-endian (Vol 3, Part A, 3.4.3).
    static func kframe(_ bytes: [UInt8], _ channel: inout CreditChannelState, frame: Int) -> CreditChannelState.Output {
        bytes.withUnsafeBytes { raw in
            channel.feed(
                .init(
                    payload: raw, l2capBytes: 4 + bytes.count, firstFrame: frame, frame: frame,
                    timestamp: Timestamp(microseconds: Int64(frame) * 1000)))
        }
    }

    @Test func creditChannelSDUsAreReassembledAndCreditsCounted() {
        var c = CreditChannelState(spsm: 0x0025, credits: 3)
        let sdu = Array("object transfer".utf8)  // 15 bytes = 0x000F
        #expect(Self.kframe([0x0F, 0x00] + sdu[0..<6], &c, frame: 10).sdu == nil)
        #expect(c.heldBytes == 6)
        #expect(Self.kframe(Array(sdu[6..<12]), &c, frame: 11).sdu == nil)
        let out = Self.kframe(Array(sdu[12...]), &c, frame: 12)  // the third credit: none left
        #expect(out.sdu?.bytes == sdu && out.sdu?.firstFrame == 10 && out.sdu?.kframeBytes == 12 + 10 + 7 && out.sdu?.announced == 15)
        #expect(!out.withoutCredit && c.heldBytes == 0)
        #expect(c.stalledSince?.frame == 12)
        let again = Self.kframe([0x01, 0x00, 0xAB], &c, frame: 13)
        #expect(again.withoutCredit && again.sdu?.bytes == [0xAB])
        // Credits end the stall that began at frame 12.
        #expect(c.credit(5)?.frame == 12)
        #expect(c.credit(1) == nil && c.credits == 6)
    }

    @Test func aFirstKFrameTooShortForTheLengthIsSkipped() {
        var c = CreditChannelState(spsm: 0x0080, credits: 10)
        #expect(Self.kframe([0x05], &c, frame: 1).tooShortToStart)
        // The next K-frame starts the SDU; more bytes than announced still end it (the analyzer says so).
        let out = Self.kframe([0x02, 0x00, 1, 2, 3], &c, frame: 2)
        #expect(out.sdu?.bytes == [1, 2, 3] && out.sdu?.announced == 2)
        _ = Self.kframe([0x08, 0x00, 1, 2], &c, frame: 3)
        c.drop()
        #expect(c.heldBytes == 0)
        #expect(Self.kframe([0x01, 0x00, 9], &c, frame: 4).sdu?.bytes == [9])
    }

    /// The bound on credit-based channels holds across connections: two connections' tables share one budget.
    @Test func creditChannelTableIsBoundedAndClosesWithItsConnection() {
        let budget = CreditChannelBudget()
        var tables = [CreditChannelTable(budget: budget), CreditChannelTable(budget: budget)]
        for cid in 0..<UInt16(CreditChannelTable.maxChannels) {
            let opened = tables[Int(cid % 2)].open(CreditKey(direction: .rx, cid: 0x0040 + cid), spsm: 0x0025, credits: 1)
            #expect(opened)
        }
        let overLimit = tables[0].open(CreditKey(direction: .tx, cid: 0x0040), spsm: 0x0025, credits: 1)
        let reopened = tables[0].open(CreditKey(direction: .rx, cid: 0x0040), spsm: 0x0027, credits: 9)  // no new one
        #expect(!overLimit && reopened)
        let key = CreditKey(direction: .rx, cid: 0x0041)
        let fed = [UInt8]([0x04, 0x00, 0xDE, 0xAD]).withUnsafeBytes { raw in
            tables[1].feed(key, .init(payload: raw, l2capBytes: 8, firstFrame: 3, frame: 3, timestamp: Timestamp(microseconds: 0)))
        }
        #expect(fed?.spsm == 0x0025 && fed?.output.sdu == nil)
        #expect(tables[1].heldBytes == 2)
        let stall = tables[1].credit(key, 2)  // its one credit went on that K-frame: stalled since frame 3
        #expect(stall?.frame == 3)
        tables[1].closeAll()
        #expect(tables[0].channels.count == CreditChannelTable.maxChannels / 2 && budget.open == CreditChannelTable.maxChannels / 2)
        // The closed connection's places are free again.
        let freed = tables[0].open(CreditKey(direction: .tx, cid: 0x0040), spsm: 0x0025, credits: 1)
        #expect(freed)
        let dropped = tables[0].dropAll()
        #expect(tables[0].heldBytes == 0 && dropped == 0)
        let closed = tables[1].feed(
            key,
            .init(
                payload: UnsafeRawBufferPointer(start: nil, count: 0), l2capBytes: 4, firstFrame: 4, frame: 4,
                timestamp: Timestamp(microseconds: 0)))
        #expect(closed == nil)
    }
}
