import BLECapture
import BLECore

extension CompletenessTracker {
    /// Time going backwards (and by how much) and gaps between records. Notes and headers are not records in time
    /// (``CaptureStatistics/firstTimestamp``): an iOS log's header notes dated days before its first HCI record are no
    /// gap, nor a power note a few ms behind the record before it a step back.
    @inline(__always) mutating func noteTime(_ record: CaptureRecord) {
        guard record.kind != .text else { return notePower(record) }
        let t = record.timestamp
        timedRecords &+= 1
        let stream = Self.clockStream(record)
        if let p = previous {
            if t != p { clockMoved = true }
            if t < p {
                // Behind the record before it: on its own clock when that record was of the same interface, else against
                // its interface's last record (none yet: nothing to go back from).
                let own = stream == previousStream ? p : previousByStream[stream]
                if let own, t < own {
                    backwards += 1
                    largestStepBack = max(largestStepBack, own.microseconds(since: t))
                    if backwardsFirstFrame == nil { backwardsFirstFrame = record.frame }
                } else {
                    interfaceOffsets += 1
                    largestInterfaceOffset = max(largestInterfaceOffset, p.microseconds(since: t))
                    if interfaceOffsetFirstFrame == nil { interfaceOffsetFirstFrame = record.frame }
                }
            } else {
                let gap = t.microseconds(since: p)
                if gap >= gapThreshold {
                    gaps += 1
                    if gapList.count < 1000 { gapList.append(.init(frame: record.frame, microseconds: gap)) }
                    if gap > largestGap { largestGap = gap; largestGapFrame = record.frame }
                    noteSleepGap(before: record.frame, from: p)
                }
            }
        }
        if stream != previousStream {
            if let previous { previousByStream[previousStream] = previous }
            previousStream = stream
        }
        previous = t
    }

    /// The clock a record is dated by: one per pcapng interface for air and other non-HCI records (a sniffer's own clock,
    /// the host's for an Ethernet interface beside it), one for every HCI record (the host's, whichever controller).
    @inline(__always) static func clockStream(_ record: CaptureRecord) -> UInt32 {
        record.kind == .linkLayer || record.kind == .other ? UInt32(record.controllerIndex) : 0x1_0000
    }
}
