import BLECapture
import BLECore
import BLEProtocols

/// The items a ``CompletenessTracker`` gives at the end of its pass: what the reader met, what the capturer did to the
/// records, what the controller lost, and connections whose start or end the log does not hold.
extension CompletenessTracker {
    /// The verdict, given the file's format name (`btsnooz`, `btsnoop`, …).
    /// The verdict; `readerFindings` (``CaptureFile/findings``) add what the reader met: a file cut inside a record, a
    /// corrupt record length, a read error. A cut file is never "complete".
    public func result(format: String, readerFindings: [Finding] = []) -> CaptureCompleteness {
        var result = CaptureCompleteness(
            items: Self.readerItems(readerFindings) + recordItems(format: format) + onlySentItems() + controllerItems() + connectionItems(),
            gaps: gapList)
        for s in sleep.sleeps { result.hostAsleep[s.gapFrame] = s.sleepFrame }
        result.payloadsCutByLogger = aclCut > 0 && aclCutByLogger == aclCut
        result.recordsRead = recordsRead
        let firstReset = resets.first ?? .max
        result.endedBeforeLog = endedUnseen.filter { $0.frame < firstReset }.map { end in
            var e = CaptureCompleteness.EndedBeforeLog(handle: end.handle, frame: end.frame, reason: HCIStatus(rawValue: end.reason))
            if let again = endedAgain.first(where: { $0.firstFrame == end.frame }) {
                e.again = .init(frame: again.frame, reason: HCIStatus(rawValue: again.reason))
            }
            return e
        }
        result.staleACL = staleACL.filter { !$0.adopted }
        // Among the log's first records (PacketLogger's notes come before it), so "from" it is the log's start.
        if let reset = resets.first, reset <= 20, !resetsWithLinks.contains(reset),
            [firstACLFrame, firstWorkFrame].compactMap({ $0 }).min().map({ reset < $0 }) ?? true
        {
            result.startsAtReset = reset
        }
        if result.startsAtReset == nil, resets.isEmpty, startedBefore.isEmpty, endedUnseen.isEmpty, let c = firstCommand, c.frame <= 20,
            c.opcode.ogf == 0x04, [firstACLFrame, firstWorkFrame].compactMap({ $0 }).min().map({ c.frame < $0 }) ?? true
        {
            result.startsAtSetUp = .init(frame: c.frame, command: c.opcode.name ?? "an Informational Parameters command")
        }
        return result
    }

    /// What the capture reader met: a file cut inside a record, a corrupt record length, a read error.
    static func readerItems(_ readerFindings: [Finding]) -> [CaptureCompleteness.Item] {
        var items: [CaptureCompleteness.Item] = []
        for f in readerFindings {
            switch f.kind.code {
            case .captureTruncatedFile:
                items.append(
                    .init(
                        code: .fileCut, severity: .warning,
                        message:
                            "the file is cut: \(f.message)\(f.offset.map { " (byte offset \($0))" } ?? ""); nothing after it is in the log",
                        frame: f.frame))
            case .captureSnifferClockWrap:
                // Corrected, so nothing is missing: said because the times differ from the file's (and tshark's).
                items.append(.init(code: .snifferClockWrap, severity: .info, message: f.message, frame: f.frame))
            case .captureMillisecondClock:
                // Read as milliseconds: said because every time is inferred and differs from the file's (and tshark's).
                items.append(.init(code: .millisecondClock, severity: .info, message: f.message, frame: f.frame))
            case .captureInvalidRecordLength, .captureReadError:
                items.append(
                    .init(
                        code: .fileCorrupt, severity: .warning,
                        message: "the file cannot be read past a point: \(f.message)\(f.offset.map { " (byte offset \($0))" } ?? "")",
                        frame: f.frame))
            default:
                break
            }
        }
        return items
    }

    /// Where the records the file marks whole hold fewer bytes than their headers say, the headers whole
    /// (``RecordShortfall/cutByLogger``).
    static let loggerCut = "cut before the log was written: headers whole, payloads left out, nothing marked cut in the file"

    /// Time going backwards on one clock (a warning past ``jitterLimit``, jitter under it) and records of one interface
    /// dated behind another's (two clocks, a note).
    func timeOrderItems() -> [CaptureCompleteness.Item] {
        var items: [CaptureCompleteness.Item] = []
        if backwards > 0 {
            // Jitter is a note: nothing is missing from the log (issue 35: "incomplete" is kept for what is missing).
            let jitter = largestStepBack <= Self.jitterLimit
            let times = "\(backwards) time\(backwards == 1 ? "" : "s")"
            items.append(
                .init(
                    code: .timeBackwards, severity: jitter ? .info : .warning,
                    message: jitter
                        ? "timestamps step back \(times) by at most \(largestStepBack < 1000 ? "\(largestStepBack) µs" : "\(largestStepBack / 1000) ms") (first at frame \(backwardsFirstFrame ?? 0)): clock jitter, no record is missing"
                        : "timestamps go backwards \(times) (first at frame \(backwardsFirstFrame ?? 0)): durations across those points are wrong",
                    frame: backwardsFirstFrame, count: backwards))
        }
        if interfaceOffsets > 0 {
            let offset = largestInterfaceOffset
            items.append(
                .init(
                    code: .timeBackwards, severity: .info,
                    message:
                        "\(interfaceOffsets) record\(interfaceOffsets == 1 ? " is" : "s are") dated up to \(offset < 1000 ? "\(offset) µs" : "\(offset / 1000) ms") before another interface's record before \(interfaceOffsets == 1 ? "it" : "them") (first at frame \(interfaceOffsetFirstFrame ?? 0)), each in time order on its own interface: the interfaces keep different clocks (a sniffer's own, the host's), no record is missing",
                    frame: interfaceOffsetFirstFrame, count: interfaceOffsets))
        }
        return items
    }

    /// What the capturer did to the records: payloads cut, records truncated or dropped, time going back or pausing.
    func recordItems(format: String) -> [CaptureCompleteness.Item] {
        var items: [CaptureCompleteness.Item] = []
        if aclCut > 0 {
            let filtered = aclCut * 10 >= aclRecords * 9
            let source =
                aclCutByLogger == aclCut
                ? Self.loggerCut
                : format == "btsnooz"
                    ? "btsnooz log from a bug report"
                    : filtered ? "Android filtered snoop log" : "cut by the capturer"
            let impossible =
                "ATT values, codec decoding, transfers, OTA image checks and per-characteristic throughput cannot be checked"
                + "; HCI events, connections, link parameters, packet counts and byte totals (original lengths) are whole"
            items.append(
                .init(
                    code: .aclPayloadCut, severity: .warning,
                    message:
                        "ACL payloads cut to at most \(max(0, aclCutMaxKept)) bytes in \(aclCut) of \(aclRecords) ACL records (\(source)): \(impossible)",
                    frame: aclCutFirstFrame, count: aclCut))
        }
        if otherCut > 0 {
            items.append(
                .init(
                    code: .truncatedRecords, severity: .warning,
                    message: otherCutByLogger == otherCut
                        ? "\(otherCut) non-ACL record\(otherCut == 1 ? "" : "s") (frame \(otherCutFirstFrame ?? 0)\(otherCut == 1 ? "" : ", …")) \(Self.loggerCut)"
                        : "\(otherCut) non-ACL record\(otherCut == 1 ? "" : "s") truncated by the capturer", frame: otherCutFirstFrame,
                    count: otherCut))
        }
        if lastDrops > 0 {
            items.append(
                .init(
                    code: .drops, severity: .warning,
                    message:
                        "the capturer dropped \(lastDrops) packet\(lastDrops == 1 ? "" : "s") (first counted at frame \(dropsFirstFrame ?? 0))",
                    frame: dropsFirstFrame, count: Int(lastDrops)))
        }
        if let text = nordicSkips.text {
            // A note: most nRF Sniffer captures skip values (14 of the corpus's 16 that follow a device: packets of other
            // devices it did not write, the firmware's own events), so the skip alone cannot tell a lost packet.
            var item = CaptureCompleteness.Item(
                code: .drops, severity: .info, message: text, frame: nordicSkips.firstFrame, count: nordicSkips.skipped)
            // The Log line's few words: the full reading (where, the largest skip, the clocks) stays in `info`; four
            // lines of a routine note on every nRF capture's first screen pushed its story down.
            item.brief = "the nRF Sniffer's packet counter skipped \(Story.plural(nordicSkips.skipped, "value"))"
            items.append(item)
        }
        items += timeOrderItems()
        if damaged > 0 {
            let frames = damagedFrames.map(String.init).joined(separator: ", ") + (damaged > damagedFrames.count ? ", …" : "")
            items.append(
                .init(
                    code: .damagedRecords, severity: .warning,
                    message:
                        "\(damaged) record\(damaged == 1 ? " is" : "s are") shorter than \(damaged == 1 ? "its" : "their") own header says, with nothing cut by the capturer (frame\(damaged == 1 ? "" : "s") \(frames)): damaged in the log, set aside; what \(damaged == 1 ? "it" : "they") carried is missing",
                    frame: damagedFrames.first, count: damaged))
        }
        if timedRecords >= 2 && !clockMoved {
            items.append(
                .init(
                    code: .noTiming, severity: .info,
                    message:
                        "all \(timedRecords) records carry the same time stamp: the log keeps their order but no timing; durations, timeouts, gaps and rates cannot be told from it",
                    frame: nil, count: timedRecords))
        }
        if gaps > 0 {
            items.append(
                .init(
                    code: .timeGap, severity: .info,
                    message:
                        "\(gaps) gap\(gaps == 1 ? "" : "s") of \(gapThreshold / 1_000_000) s or more without a record, the longest \(formatSeconds(largestGap)) before frame \(largestGapFrame ?? 0): \(sleep.explanation(largest: largestGapFrame, gaps: gaps))",
                    frame: largestGapFrame, count: gaps))
        }
        return items
    }

    /// Resets and hardware errors that lost the state before them.
    func controllerItems() -> [CaptureCompleteness.Item] {
        var items: [CaptureCompleteness.Item] = []
        // A reset before any data or work is the controller's bring-up (nothing lost); one after them means the state
        // before it is gone. A reset with no link open drops nothing (a Bluetooth toggle between connections): a note.
        let inUse = [firstACLFrame, firstWorkFrame].compactMap { $0 }.min()
        let idle = resets.filter { r in (inUse.map { r > $0 } ?? false) && !resetsWithLinks.contains(r) }
        if let first = idle.first {
            items.append(
                .init(
                    code: .controllerReset, severity: .info,
                    message:
                        "controller reset at frame \(first)\(idle.count > 1 ? " (+\(idle.count - 1) more)" : "") with no link open: nothing was dropped",
                    frame: first, count: idle.count))
        }
        let midResets = resets.filter { r in (firstACLFrame.map { r > $0 } ?? false) && resetsWithLinks.contains(r) }
        if let first = midResets.first {
            items.append(
                .init(
                    code: .controllerReset, severity: .warning,
                    message:
                        "controller reset at frame \(first)\(midResets.count > 1 ? " (+\(midResets.count - 1) more)" : ""): every connection before it was dropped",
                    frame: first, count: midResets.count))
        }
        if let first = hardwareErrors.first {
            items.append(
                .init(
                    code: .hardwareError, severity: .warning,
                    message:
                        "controller hardware error at frame \(first)\(hardwareErrors.count > 1 ? " (+\(hardwareErrors.count - 1) more)" : "")",
                    frame: first, count: hardwareErrors.count))
        }
        return items
    }

    /// Connections whose start or end the capture does not hold.
    func connectionItems() -> [CaptureCompleteness.Item] {
        var items: [CaptureCompleteness.Item] = []
        if let first = startedBefore.first {
            let handles = startedBefore.prefix(5).map { hex($0.handle, width: 4) }.joined(separator: ", ")
            items.append(
                .init(
                    code: .startedBeforeCapture, severity: .info,
                    message:
                        "\(startedBefore.count) connection\(startedBefore.count == 1 ? "" : "s") started before the capture (traffic on \(handles)\(startedBefore.count > 5 ? ", …" : "") from frame \(first.frame) without a Connection Complete): parameters and MTU before it are unknown",
                    frame: first.frame, count: startedBefore.count))
        }
        if let first = endedUnseen.first {
            let reset = lastReset.flatMap { r in
                r.frame < first.frame
                    ? ", \(formatMilliseconds(first.time.microseconds(since: r.time))) after the HCI Reset at frame \(r.frame)" : nil
            }
            let more = endedUnseen.count > 1 ? " (+\(endedUnseen.count - 1) more)" : ""
            items.append(
                .init(
                    code: .linkBeforeLogEnded, severity: .info,
                    message:
                        "\(endedUnseen.count) link\(endedUnseen.count == 1 ? "" : "s") from before the log ended: a Disconnection Complete for handle \(hex(first.handle, width: 4)) (\(HCIStatus(rawValue: first.reason)), frame \(first.frame)\(reset ?? ""))\(more) names no link the log holds anything else of; nothing else is known of it",
                    frame: first.frame, count: endedUnseen.count))
        }
        if let first = staleAfterReset.first {
            let more = staleAfterReset.count > 1 ? " (+\(staleAfterReset.count - 1) more)" : ""
            items.append(
                .init(
                    code: .staleAfterReset, severity: .info,
                    message:
                        "a Connection Complete for handle \(hex(first.handle, width: 4)) at frame \(first.frame)\(more) came before the HCI Reset at frame \(first.reset) completed: a connection from before the reset, which ended it; no link is counted",
                    frame: first.frame, count: staleAfterReset.count))
        }
        if let first = staleEvents.first {
            let listed = staleEvents.prefix(3).map { "\($0.name) \($0.frame)" }.joined(separator: ", ")
            let handles = Set(staleEvents.map(\.handle)).sorted().prefix(3).map { hex($0, width: 4) }.joined(separator: ", ")
            let n = staleEvents.count, one = Set(staleEvents.map(\.handle)).count == 1
            // Queued before the reset when they come while it completes; later, of a link no Connection Complete opened.
            let whose =
                first.after <= StaleAfterReset.window
                ? "for no link the log holds: the controller's from before the reset, which ended \(one ? "that link" : "those links")"
                : "for no link the log holds: no Connection Complete opened \(one ? "that handle" : "those handles") since the reset, which ended every link"
            items.append(
                .init(
                    code: .staleAfterReset, severity: .info,
                    message:
                        "\(n) event\(n == 1 ? "" : "s") for \(handles) came \(formatMilliseconds(first.after)) after the HCI Reset at frame \(first.reset) (\(listed)\(n > 3 ? ", …" : "")), \(whose); no link is counted and nothing is claimed of \(one ? "it" : "them")",
                    frame: first.frame, count: n))
        }
        if let item = staleACLItem() { items.append(item) }
        if !open.isEmpty {
            let first = open.values.min()!
            items.append(
                .init(
                    code: .openAtEnd, severity: .info,
                    message:
                        "\(open.count) connection\(open.count == 1 ? "" : "s") still open when the capture ends (no Disconnection Complete; the first opened at frame \(first))",
                    frame: first, count: open.count))
        }
        return items
    }
}

extension CompletenessTracker {
    /// ACL after this side's HCI Reset on handles no link held since (``CaptureCompleteness/StaleACL``): said once.
    func staleACLItem() -> CaptureCompleteness.Item? {
        let stale = staleACL.filter { !$0.adopted }
        guard let first = stale.first else { return nil }
        let packets = stale.reduce(0) { $0 + $1.packets }
        let handles = stale.prefix(3).map { hex($0.handle, width: 4) }.joined(separator: ", ") + (stale.count > 3 ? ", …" : "")
        // A handle whose link ended by its own Disconnection Complete after the reset: that end, not the reset (the
        // nexxtender .cfa's 0x0004 at 10932, closed at 6098; the reset at frame 1 was the controller's bring-up).
        if stale.count == 1, let closed = first.closedFrame, closed > first.reset {
            return .init(
                code: .staleAfterReset, severity: .info,
                message:
                    "\(packets) ACL packet\(packets == 1 ? "" : "s") on \(handles) (from frame \(first.firstFrame)) came after its link ended at frame \(closed) (Disconnection Complete), with no Connection Complete for the handle since: no link is counted and nothing is claimed of one",
                frame: first.firstFrame, count: packets)
        }
        return .init(
            code: .staleAfterReset, severity: .info,
            message:
                "\(packets) ACL packet\(packets == 1 ? "" : "s") on \(handles) (from frame \(first.firstFrame)) came after the HCI Reset at frame \(first.reset) with no Connection Complete for \(stale.count == 1 ? "its handle" : "their handles") since: the reset ended every link, so no link is counted and nothing is claimed of one",
            frame: first.firstFrame, count: packets)
    }
}
