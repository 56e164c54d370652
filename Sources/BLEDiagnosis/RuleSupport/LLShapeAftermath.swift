import BLEAnalysis
import BLECore

/// What followed a link-layer PDU of a forbidden shape on its link (LL-04…LL-06): the severity is what the user lost.
/// The link ending within ``window`` of the last such PDU by its receiver or by the link's loss (not by its own sender's
/// LL_TERMINATE_IND, nor by an end no side is known to have caused, such as a new CONNECT_IND on its access address) is
/// a link lost to it (SweynTooth's NXP Length Overflow capture: the last overlong PDU at 282, the peripheral advertising again
/// at 288, 13 ms after the link's last packet); a link that went on, or that the sender itself ended, is not.
struct LLShapeAftermath {
    /// The link ended soon after, not by the sender's own choice.
    var lost: Bool
    /// "; link #1 ended 95 ms after the last one (frame 287: …)", or "; the link went on (…)".
    var text: String
    var cited: [CitedFrame]

    /// How long after the last such PDU an end is taken as its consequence, µs.
    static let window: Int64 = 10_000_000

    static func after(
        _ c: Connection?, lastFrame: Int, lastTime: Timestamp, sender: EvidenceEvent.Sender, senderName: String
    ) -> LLShapeAftermath {
        guard let c else { return LLShapeAftermath(lost: false, text: ".", cited: []) }
        guard let end = c.lifecycle.ending, end.frame >= lastFrame else {
            return LLShapeAftermath(lost: false, text: "; the link was still open when the capture ended.", cited: [])
        }
        let after = end.timestamp.microseconds(since: lastTime)
        let by: ConnectionLifecycle.EndedBy = sender == .local ? .local : .peer
        let when = "\(formatDuration(microseconds: max(0, after))) after the last one"
        if end.endedBy == by {
            return LLShapeAftermath(
                lost: false, text: "; \(senderName) itself ended the link \(when) (frame \(end.frame)).",
                cited: [CitedFrame(end.frame, "the sender ended the link")])
        }
        guard after <= window else {
            return LLShapeAftermath(
                lost: false, text: "; the link went on, ending \(formatDuration(microseconds: after)) later (frame \(end.frame)).",
                cited: [])
        }
        // An end no side is known to have caused (the central reusing the access address for a new CONNECT_IND) is not
        // one the PDU is known to have caused either.
        return LLShapeAftermath(
            lost: end.endedBy != .unknown, text: "; link #\(c.number) ended \(when) (frame \(end.frame): \(end.text)).",
            cited: [CitedFrame(end.frame, "the link ended")])
    }
}
