import BLECapture
import BLECore

extension Analyzer {
    /// A packet's comment (pcapng `opt_comment`, as Wireshark and nRF Sniffer write them) in the timeline: a note on the
    /// packet's frame, after the packet's own events.
    func emitComment(_ record: CaptureRecord) {
        let text = String(decoding: record.comment, as: UTF8.self)
        table.emit(
            TimelineEvent(
                frame: record.frame, timestamp: record.timestamp, connection: nil, direction: record.direction,
                layer: .note, code: nil, name: "Comment", summary: text), waiting: false)
    }
}
