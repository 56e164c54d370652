import BLECore
import BLEProtocols

extension FindingCode {
    static let roleOrSniffRefused = FindingCode(
        "BR-06", layer: .classic, severity: .warning,
        title: "A BR/EDR role switch or sniff request refused",
        explain: .init(
            meaning:
                "The peer or the controller refused a role switch or a power-saving mode (sniff) on a Classic link. The link goes on in its current role and mode; this only matters when a link loss follows.",
            advice: "Nothing to do unless the link was lost right after; then look at the peer's link policy and the controller's logs."),
        fold: .device)
}

/// BR-06: a role switch or a low-power mode (sniff, hold) refused on a BR/EDR link: Role Change or Mode Change with an
/// error status, or Switch Role, Sniff Mode, Exit Sniff Mode refused by the controller. Context (info): the link goes
/// on in its role and mode; a warning when the link was lost within 5 s after.
struct BR06RoleOrSniffRefused: DiagnosisRule {
    static let code = FindingCode.roleOrSniffRefused
    static let group = RuleGroup.classic
    static let evidence =
        "Role Change (0x12) or Mode Change (0x14) with status ≠ 0; Command Status ≠ 0 for Switch Role (0x080B), Sniff Mode (0x0803), Exit Sniff Mode (0x0804), Sniff Subrating (0x0811); info unless a link loss follows within 5 s"
    static let anchor = "none"
    static let opcodes: [UInt16: String] = [
        0x080B: "role switch", 0x0803: "sniff request", 0x0804: "exit from sniff", 0x0811: "sniff subrating",
    ]

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.events.compactMap { ev in
            let what: String, status: HCIStatus
            switch ev.kind {
            case .roleChange(_, let s, _) where s != .success: (what, status) = ("role switch", s)
            case .modeChange(_, let s, _) where s != .success: (what, status) = ("mode change (sniff/hold)", s)
            case .commandFailed(let op, let s, _) where opcodes[op.rawValue] != nil: (what, status) = (opcodes[op.rawValue]!, s)
            default: return nil
            }
            var peer: String? = nil
            if case .roleChange(let p, _, _) = ev.kind { peer = p }
            let name = peer ?? ev.connection.map { e.deviceName(e.connection($0)) } ?? "a BR/EDR device"
            let loss = e.first(after: ev.frame) { next in
                guard next.timestamp.microseconds(since: ev.timestamp) <= 5_000_000,
                    case .disconnectionComplete(_, .success, let r) = next.kind, controllerEndedReasons.contains(r)
                else { return false }
                return ev.connection == nil || next.connection == ev.connection
            }
            let within = loss.flatMap { $0.timestamp.microseconds(since: ev.timestamp) <= 5_000_000 ? $0 : nil }
            var text = "The \(what) with \(name) was refused (\(codeName(status)) at frame \(ev.frame))"
            text += within.map { ", and the link was lost at frame \($0.frame)." } ?? ": the link went on as it was."
            return Diagnosis(
                rule: Self.code, severity: within == nil ? .info : severity, frame: ev.frame, message: text,
                headline: "\(what) with \(name) refused (\(hex(status.rawValue)))",
                supporting: within.map { [CitedFrame($0.frame, "the link was lost")] } ?? [],
                causes: ["the peer's policy or link state does not allow it (\(status))"], device: peer, connection: ev.connection,
                fold: "\(name) \(what) \(status.rawValue)")
        }
    }
}
