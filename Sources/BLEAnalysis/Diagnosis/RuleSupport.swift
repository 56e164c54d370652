import BLECore
import BLEProtocols

/// A disconnection as the rules read it: the event, its connection, and whether this side asked for it.
package struct DisconnectionStory {
    package var event: EvidenceEvent
    package var handle: UInt16
    package var status: HCIStatus
    package var reason: HCIStatus
    package var connection: Connection?
    /// The host's HCI Disconnect for the handle since the connection opened, if any.
    package var localCommand: EvidenceEvent?
    /// The LL_TERMINATE_IND sender on air captures.
    package var airSender: EvidenceEvent.Sender?

    package var frame: Int { event.frame }
    package var byThisSide: Bool { localCommand != nil || airSender == .local }
    /// How long the link was up, µs (nil when it started before the capture).
    package var connectedMicroseconds: Int64? {
        guard let c = connection, !c.inferred else { return nil }
        return event.timestamp.microseconds(since: c.startTime)
    }
}

/// Codes a controller reports when it ended the link itself (Core Spec Vol 1, Part F: the peer went silent, a
/// procedure timed out, an instant passed, a MIC failed, the first packets never came).
package let controllerEndedReasons: Set<HCIStatus> = [
    .connectionTimeout, .llResponseTimeout, .instantPassed, .connectionTerminatedMICFailure, .connectionFailedToBeEstablished,
]
/// Codes a peer gives when it ends the link (user, low resources, power off), or refusing us.
package let remoteEndedReasons: Set<HCIStatus> = [.remoteUserTerminatedConnection, .remoteLowResources, .remotePowerOff]

extension Evidence {
    /// Every disconnection, in frame order, with its connection and the local command that asked for it.
    package var disconnections: [DisconnectionStory] {
        var stories: [DisconnectionStory] = []
        var commands: [UInt16: EvidenceEvent] = [:]
        for e in events {
            switch e.kind {
            case .connectionComplete(let h, let status, _) where status == .success:
                commands[h] = nil
            case .disconnectCommand(let h, _):
                commands[h] = e
            case .commandFailed(.disconnect, _, let commandFrame?):
                // Refused (7.7.15): the controller never started it, so the end that follows is not this side's.
                if let h = commands.first(where: { $0.value.frame == commandFrame })?.key { commands[h] = nil }
            case .disconnectionComplete(let h, let status, let reason):
                guard status == .success else { continue }
                stories.append(
                    DisconnectionStory(
                        event: e, handle: h, status: status, reason: reason, connection: connection(e.connection),
                        localCommand: commands[h]))
                commands[h] = nil
            case .linkTerminated(let sender, let reason):
                let c = connection(e.connection)
                stories.append(
                    DisconnectionStory(
                        event: e, handle: c?.handle ?? 0, status: .success, reason: reason, connection: c, localCommand: nil,
                        airSender: sender))
            default:
                break
            }
        }
        return stories
    }

    /// Events of `connection` between two frames (exclusive), in order.
    package func events(of connection: Int?, from start: Int, to end: Int) -> [EvidenceEvent] {
        events.filter { $0.frame > start && $0.frame < end && (connection == nil || $0.connection == connection) }
    }

    /// The quality reports of `connection`, in order.
    package func qualityReports(of connection: Int?) -> [EvidenceEvent] {
        events.filter {
            guard $0.connection == connection, case .qualityReport = $0.kind else { return false }
            return true
        }
    }
}

/// `0x08 Connection Timeout`.
package func codeName(_ s: HCIStatus) -> String { "\(hex(s.rawValue)) \(s)" }

/// `12.3 s`, `420 ms`, `2 min 5 s`.
package func duration(_ microseconds: Int64) -> String {
    let ms = Double(microseconds) / 1000
    if ms < 1000 { return "\(Int(ms.rounded())) ms" }
    let s = ms / 1000
    if s < 120 { return "\(String(fractionDigits: s < 10 ? 2 : 1, s)) s" }
    let whole = Int(s.rounded())
    return "\(whole / 60) min \(whole % 60) s"
}

/// `C5:34:1A:…`: an address shortened for a folded line.
package func shortAddress(_ a: String) -> String { a.count > 9 ? String(a.prefix(8)) + "…" : a }

extension Connection {
    /// The supervision timeout in force, µs, with where it came from.
    package var supervisionTimeout: (microseconds: Int64, fact: UsedFact)? {
        // BR/EDR: the timeout the host wrote (Write Link Supervision Timeout, slots of 0.625 ms, Core Vol 4 Part E
        // 7.3.42); nothing when the log holds none (the controller's default 20 s may have been changed unseen).
        if let classic = link.classic {
            guard let slots = classic.supervisionTimeout.value, slots > 0 else { return nil }
            let ms = Int(slots) * 625 / 1000
            return (Int64(slots) * 625, UsedFact("supervision timeout", "\(ms) ms", classic.supervisionTimeout.source))
        }
        guard let p = link.parameters.value else { return nil }
        let ms = ConnectionTiming.supervisionTimeoutMilliseconds(p.timeout)
        return (Int64(ms) * 1000, UsedFact("supervision timeout", "\(ms) ms", link.parameters.source))
    }
}

/// A stream the throughput rules judge: one of the throughput tracker's (``Observing/diagnosis``: every command that
/// diagnoses runs it), so its packets, bytes, rate and verdict are the ones `throughput` prints. None when no tracker
/// ran.
package struct JudgedStream {
    package var connection: Connection?
    package var handle: UInt16?
    package var kind: ValueKind
    package var packets: Int
    package var valueBytes: Int
    package var firstFrame: Int
    /// The verdict of the busiest of ``periods`` steady link periods (``ThroughputStream/verdict``): its rate is that
    /// period's when there are several.
    package var verdict: ThroughputVerdict
    package var periods: Int
    /// The share of the stream's time spent in gaps over the idle threshold (0…1): a sender that paused.
    package var idleShare: Double = 0
}

extension Evidence {
    package static func idleShare(_ periods: [ThroughputPeriod]) -> Double {
        let total = periods.reduce(Int64(0)) { $0 + $1.durationMicroseconds }
        return total > 0 ? Double(periods.reduce(Int64(0)) { $0 + $1.idleMicroseconds }) / Double(total) : 0
    }

    package var judgedStreams: [JudgedStream] {
        (throughput ?? []).map {
            JudgedStream(
                connection: connection($0.key.connectionNumber), handle: $0.key.handle, kind: $0.key.kind, packets: $0.packets,
                valueBytes: $0.valueBytes, firstFrame: $0.firstFrame, verdict: $0.verdict, periods: $0.periods.count,
                idleShare: Self.idleShare($0.periods))
        }
    }
}

extension Evidence {
    /// Why a disconnection is the device rebooting after a firmware update, if it is: a probable update in a protocol not
    /// known ended by it (``Scenarios``, SC-01), an update on the connection
    /// succeeded within 15 s before (when the pass followed updates), or else the connection's last write went to an
    /// update protocol's command characteristic (not its image-packet one: a link lost mid-image is a failure).
    package func expectedReboot(_ d: DisconnectionStory) -> CitedFrame? {
        guard let c = d.connection else { return nil }
        // A run of same-size writes no known protocol claimed, ended by this link's end (SC-01).
        if let u = scenarios?.update(endingAt: d.frame, connection: c.number) {
            return CitedFrame(u.lastFrame, u.rebootText)
        }
        if let sessions = otaSessions {
            // A successful update that this link's end falls in (a session told across the reboot, MCUmgr's test and
            // confirm) or that ended on it at most 15 s before.
            let done = sessions.last { s in
                s.result == .success && s.startFrame <= d.frame
                    && (s.endFrame >= d.frame
                        || (s.connectionNumber == c.number && d.event.timestamp.microseconds(since: s.endTime) <= 15_000_000))
            }
            return done.map {
                CitedFrame(
                    $0.endFrame,
                    $0.endFrame > d.frame
                        ? "\($0.protocolName.rawValue) update, which went on after the reboot and succeeded"
                        : "\($0.protocolName.rawValue) update succeeded")
            }
        }
        let writes = c.activity.written
        guard let last = writes.max(by: { $0.value.last < $1.value.last }), last.value.last < d.frame,
            let uuid = c.gatt.uuid(for: last.key), let endpoint = OTATracker.endpoint(of: uuid), endpoint != .packet
        else { return nil }
        return CitedFrame(last.value.last, "last command to the firmware-update service (\(uuid))")
    }
}
