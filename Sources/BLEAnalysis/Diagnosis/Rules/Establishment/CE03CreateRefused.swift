import BLECore
import BLEProtocols

/// CE-03: the controller refused to start a connection: Command Status ≠ 0 for LE (Extended) Create Connection.
struct CE03CreateRefused: DiagnosisRule {
    static let id = "CE-03"
    static let group = RuleGroup.establishment
    static let severity = DiagnosisSeverity.error
    static let title = "The controller refused to start a connection"
    static let evidence = "Command Status ≠ 0 for LE Create Connection (0x200D) or LE Extended Create Connection (0x2043, 0x2085)"
    static let anchor = "hcidoc (\"Failing command status\", \"Dangling LE connection attempt\")"
    static let opcodes: Set<HCICommand> = [.leCreateConnection, .leExtendedCreateConnection, .leExtendedCreateConnectionV2]

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.events.compactMap { ev in
            guard case .commandFailed(let opcode, let status, let commandFrame) = ev.kind, opcodes.contains(opcode) else { return nil }
            // The command's own event (other events can share its frame: the first record of a controller announces it).
            var peer: String? = nil
            for create in e.events where create.frame == commandFrame {
                if case .createConnection(_, let p) = create.kind { peer = p }
            }
            let why: String =
                switch status.rawValue {
                case 0x0C: "another connection attempt was already pending, or scanning/advertising conflicted"
                case 0x07, 0x09: "the controller is out of connection resources"
                case 0x12: "the parameters are invalid (e.g. the supervision-timeout rule is broken)"
                case 0x11: "a PHY it does not support was asked for"
                default: "see the status"
                }
            return Diagnosis(
                rule: id, severity: severity, frame: ev.frame,
                message:
                    "The controller refused to start the connection\(peer.map { " to \($0)" } ?? "") (\(codeName(status)) at frame \(ev.frame)): \(why).",
                headline: "the controller refused to start a connection (\(hex(status.rawValue)))",
                supporting: commandFrame.map { [CitedFrame($0, "\(opcode)")] } ?? [],
                causes: ["a host bug (parallel connection attempts)", "the connection limit reached", "invalid parameters"], device: peer,
                foldKey: "CE-03 \(status.rawValue)")
        }
    }
}
