import BLECore

// A controller answers every command and counts every packet it sent (Number of Completed Packets, Core Spec Vol 4,
// Part E, 7.7.19), so an HCI log with packets sent and not a single event was filtered before it was saved (a
// one-direction export): the answers were not missing on the link, only from the file.
extension CompletenessTracker {
    /// The item for a log of sent ACL packets only: at least two sent, none received, no event.
    func onlySentItems() -> [CaptureCompleteness.Item] {
        guard aclSent >= 2, aclReceived == 0, eventRecords == 0 else { return [] }
        return [
            .init(
                code: .onlySentPackets, severity: .warning,
                message:
                    "only the packets this side sent are in the log (\(aclSent) ACL packets sent; none received, no HCI event): the peer's answers and the controller's events were left out before the file was saved, so whether a request was answered cannot be told",
                frame: nil, count: aclSent)
        ]
    }
}

extension CaptureCompleteness {
    /// Whether the log holds only this side's sent packets (``CompletenessTracker/onlySentItems()``): a request without
    /// an answer in it tells nothing.
    public var onlySentPackets: Bool { items.contains { $0.code == .onlySentPackets } }
}

extension Evidence {
    /// Whether the peer's answers could be in the log: not when it holds only sent packets (``CaptureCompleteness/
    /// onlySentPackets``), where no request is unanswered, late or overlapping another as far as anyone can tell.
    public var answersInLog: Bool { !(completeness?.onlySentPackets ?? false) }
}
