import BLECore
import Testing

@testable import BLEAnalysis

/// The sink every machine of a pass writes into: events in frame order behind a request that waits for its response,
/// a bound said once, evidence only when the pass gathers it, findings in frame order at the end.
@Suite struct AnalysisSinkTests {
    static func event(_ frame: Int) -> TimelineEvent {
        TimelineEvent(
            frame: frame, timestamp: Timestamp(microseconds: Int64(frame) * 1000), connection: 0x40, direction: .tx, layer: .att,
            code: nil, name: "e\(frame)", summary: "")
    }

    @Test func eventsWaitBehindARequestUntilItIsAnswered() {
        let sink = AnalysisSink(timeline: true, evidence: true, queueCapacity: 16)
        var handedOut: [Int] = []
        sink.onEvent = { handedOut.append($0.frame) }
        // Nothing waiting: handed out at once, not queued (-1).
        #expect(sink.emit(Self.event(1)) == -1)
        let request = sink.emit(Self.event(2), waiting: true)
        #expect(request >= 0)
        sink.emit(Self.event(3))
        sink.drain(now: Timestamp(microseconds: 3000))
        #expect(handedOut == [1])
        // The response fills in the request's frame, and both go out in frame order.
        sink.queue.update(request) { $0.responseFrame = 4 }
        sink.queue.settle(request)
        sink.drain(now: Timestamp(microseconds: 4000))
        #expect(handedOut == [1, 2, 3])
    }

    @Test func aRequestNeverAnsweredGoesOutAtTheTimeoutOrTheEnd() {
        let sink = AnalysisSink(timeline: true, evidence: true, queueCapacity: 16)
        var handedOut: [Int] = []
        sink.onEvent = { handedOut.append($0.frame) }
        sink.emit(Self.event(1), waiting: true)
        sink.emit(Self.event(2))
        // 30 s of capture time (the ATT transaction timeout, Core Spec Vol 3, Part F, 3.3.3) not yet passed.
        sink.drain(now: Timestamp(microseconds: 29_000_000))
        #expect(handedOut.isEmpty)
        sink.drain(now: Timestamp(microseconds: 31_002_000))
        #expect(handedOut == [1, 2])
        sink.emit(Self.event(3), waiting: true)
        sink.drain(now: nil, force: true)
        #expect(handedOut == [1, 2, 3])
    }

    @Test func aLimitIsSaidOnceAndFindingsEndInFrameOrder() {
        let sink = AnalysisSink(timeline: false, evidence: true, queueCapacity: 16)
        sink.findings.append(Finding(.info, .commandUnanswered, frame: 9))
        sink.noteLimit(.heldBytes(32 << 20), frame: 5)
        sink.noteLimit(.heldBytes(32 << 20), frame: 7)
        sink.finishFindings()
        #expect(sink.findings.map(\.frame) == [5, 9])
        #expect(sink.findings.map(\.kind.code.id) == ["limit.held-bytes", "hci.command-unanswered"])
    }

    @Test func evidenceIsRecordedOnlyWhenThePassGathersIt() {
        let gathering = AnalysisSink(timeline: false, evidence: true, queueCapacity: 16)
        gathering.evidence(.reset, frame: 3, timestamp: Timestamp(microseconds: 0), controller: 1)
        #expect(gathering.evidenceLog.events.map(\.frame) == [3])
        #expect(gathering.evidenceLog.events.first?.controller == 1)
        let statistics = AnalysisSink(timeline: false, evidence: false, queueCapacity: 16)
        statistics.evidence(.reset, frame: 3, timestamp: Timestamp(microseconds: 0))
        #expect(statistics.evidenceLog.events.isEmpty)
    }
}
