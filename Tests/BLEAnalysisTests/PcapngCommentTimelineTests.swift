import BLETestSupport
import Testing

@testable import BLEAnalysis
@testable import BLECapture

/// A pcapng packet's comment (`opt_comment`, as Wireshark and nRF Sniffer save them) is a note in the timeline on the
/// packet's frame, after its own events; its `epb_flags` direction is the event's. A packet without one gets no note.
struct PcapngCommentTimelineTests {
    @Test func commentsAreNotesOnTheirFrames() throws {
        var b = PcapngBuilder()
        b.section(bigEndian: false)
        b.interface(linkType: 187)
        b.enhancedPacket(
            interface: 0, units: 1_000, data: [0x01, 0x03, 0x0C, 0x00], options: b.comment("reset here") + b.flags(direction: 2))
        b.enhancedPacket(interface: 0, units: 2_000, data: [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])
        let file = try CaptureFile.open(bytes: b.bytes, name: "commented.pcapng")
        let analyzer = Analyzer(options: AnalyzerOptions(timeline: true))
        var events: [TimelineEvent] = []
        analyzer.onEvent = { events.append($0) }
        var record = CaptureRecord.empty
        while file.next(into: &record) { analyzer.process(record) }
        analyzer.finish()
        let notes = events.filter { $0.layer == .note }
        #expect(notes.map(\.frame) == [1])
        #expect(notes.map(\.name) == ["Comment"])
        #expect(notes.map(\.summary) == ["reset here"])
        #expect(notes.map(\.direction) == [.tx])
        // The command's own event comes first on its frame.
        #expect(events.firstIndex { $0.frame == 1 && $0.layer != .note }! < events.firstIndex { $0.layer == .note }!)
    }
}
