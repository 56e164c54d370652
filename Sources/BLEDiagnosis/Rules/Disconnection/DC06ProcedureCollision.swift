import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let procedureCollision = FindingCode(
        "DC-06", layer: .link, severity: .error,
        title: "Link-layer procedure collision",
        explain: .init(
            meaning: "Both sides started link-layer procedures at the same time and the controllers could not resolve it (0x23/0x2A).",
            advice: "Avoid starting parameter, PHY or data-length updates from both sides at once (delay one side's request)."),
        fold: .device)
}

/// DC-06: both sides started link-layer procedures at once and the collision was not resolved (0x23 LL Procedure
/// Collision, 0x2A Different Transaction Collision; Core Spec Vol 6, Part B, 5.3), in a disconnection or as a
/// procedure's completion status, or (air captures) an LL_REJECT_EXT_IND / LL_REJECT_IND.
struct DC06ProcedureCollision: DiagnosisRule {
    static let code = FindingCode.procedureCollision
    static let group = RuleGroup.disconnection
    static let evidence =
        "Disconnection Complete, Connection Update Complete or PHY Update Complete with 0x23 or 0x2A; air: LL_REJECT_EXT_IND / LL_REJECT_IND with them"
    static let anchor = "W (control_proc_* expert infos)"
    static let codes: Set<HCIStatus> = [.llProcedureCollision, .differentTransactionCollision]

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.events.compactMap { ev in
            let status: HCIStatus
            let what: String
            switch ev.kind {
            case .disconnectionComplete(_, .success, let reason) where codes.contains(reason):
                status = reason
                what = "the link dropped"
            case .connectionUpdateComplete(_, let s, _) where codes.contains(s):
                status = s
                what = "a connection update failed"
            case .phyUpdateComplete(_, let s, _) where codes.contains(s):
                status = s
                what = "a PHY update failed"
            case .linkLayerRejected(let sender, let procedure, let s?, _) where codes.contains(s):
                status = s
                what = "\(sender == .peer ? "the peripheral" : "the central") rejected \(procedure)"
            default:
                return nil
            }
            let c = e.connection(ev.connection)
            let device = e.deviceName(c)
            // A collision resolved as the spec intends (Vol 6, Part B, 5.3): the procedure redone and completed a few
            // seconds later is context, not a failure.
            if let redone = redone(ev, c, e) {
                return Diagnosis(
                    rule: Self.code, severity: .info, frame: ev.frame,
                    message:
                        "Both sides started link-layer procedures at the same time with \(device) and \(what) (\(codeName(status)), frame \(ev.frame)); resolved: \(redone.text) (frame \(redone.frame)).",
                    headline: "link-layer procedure collision with \(device), resolved (\(hex(status.rawValue)))",
                    supporting: [redone], device: c?.peerAddress, connection: c?.number, fold: "redone \(device)")
            }
            return Diagnosis(
                rule: Self.code, severity: severity, frame: ev.frame,
                message:
                    "Both sides started link-layer procedures at the same time with \(device) and \(what) (\(codeName(status)), frame \(ev.frame)).",
                headline: "link-layer procedure collision with \(device) (\(hex(status.rawValue)))",
                causes: [
                    "the peripheral asked for a parameter update while the central ran a PHY, length or encryption procedure",
                    "a collision-handling bug in one link layer",
                ],
                device: c?.peerAddress, connection: c?.number, fold: "\(device) \(status.rawValue)")
        }
    }

    /// How long after a collision a completed procedure counts as the same one redone.
    static let redoWindow: Int64 = 10_000_000

    /// The frame where the collided procedure completed after all (a successful Connection Update or PHY Update
    /// Complete; on air, the link's data length, PHY or parameters changing), within ``redoWindow``.
    static func redone(_ ev: EvidenceEvent, _ c: Connection?, _ e: Evidence) -> CitedFrame? {
        func soon(_ t: Timestamp) -> Bool { t.microseconds(since: ev.timestamp) <= redoWindow }
        switch ev.kind {
        case .connectionUpdateComplete:
            let done = e.first(after: ev.frame) { x in
                guard x.connection == ev.connection, soon(x.timestamp), case .connectionUpdateComplete(_, .success, _) = x.kind else {
                    return false
                }
                return true
            }
            return done.map { CitedFrame($0.frame, "LE Connection Update Complete: success") }
        case .phyUpdateComplete:
            let done = e.first(after: ev.frame) { x in
                guard x.connection == ev.connection, soon(x.timestamp), case .phyUpdateComplete(_, .success, _) = x.kind else {
                    return false
                }
                return true
            }
            return done.map { CitedFrame($0.frame, "LE PHY Update Complete: success") }
        case .linkLayerRejected(_, let procedure, _, _):
            guard let link = c?.link else { return nil }
            let frames: [(Int, Timestamp)]
            if procedure.contains("LENGTH") {
                frames = link.dataLength.changes.map { ($0.frame, $0.timestamp) }
            } else if procedure.contains("PHY") {
                frames = link.phy.changes.map { ($0.frame, $0.timestamp) }
            } else if procedure.contains("CONNECTION") || procedure.contains("PARAM") {
                frames = link.parameters.changes.map { ($0.frame, $0.timestamp) }
            } else {
                return nil
            }
            if let done = frames.first(where: { $0.0 > ev.frame && soon($0.1) }) {
                return CitedFrame(done.0, "\(procedure) procedure completed")
            }
            return wentOn(ev, c, e)
        default:
            return nil
        }
    }

    /// On an air capture whose link state does not show the procedure completing: the link went on (no end within
    /// ``redoWindow``, data after it), which is what a resolved collision leaves (the procedure's own PDUs are not evidence).
    static func wentOn(_ ev: EvidenceEvent, _ c: Connection?, _ e: Evidence) -> CitedFrame? {
        guard let c else { return nil }
        if let end = c.lifecycle.ending, end.timestamp.microseconds(since: ev.timestamp) <= redoWindow { return nil }
        // The last data the link carried: its throughput streams (notifications, writes) on air captures, where the
        // HCI-side moments are not kept.
        var moments = [c.activity.lastReceived, c.activity.lastSent].compactMap { $0 }.map { ($0.frame, $0.timestamp) }
        for s in e.throughput ?? [] where s.key.connectionNumber == c.number && s.packets > 0 {
            moments.append((s.lastFrame, s.lastTime))
        }
        guard let last = moments.max(by: { $0.0 < $1.0 }), last.0 > ev.frame, last.1.microseconds(since: ev.timestamp) > redoWindow
        else { return nil }
        return CitedFrame(last.0, "the link went on, its data until this frame")
    }
}
