import BLECore
import BLEProtocols

extension FindingCode {
    static let createRefused = FindingCode(
        "CE-03", layer: .link, severity: .error,
        title: "The controller refused to start a connection",
        explain: .init(
            meaning:
                "The controller refused the command that starts a connection (busy with another attempt, bad parameters, or too many links).",
            advice: "Read the status code: serialize connection attempts and check the parameters the app passes."),
        fold: .value)
}

/// CE-03: the controller refused to start a connection: Command Status ≠ 0 for LE (Extended) Create Connection.
struct CE03CreateRefused: DiagnosisRule {
    static let code = FindingCode.createRefused
    static let group = RuleGroup.establishment
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
                switch status {
                case .commandDisallowed: "another connection attempt was already pending, or scanning/advertising conflicted"
                case .memoryCapacityExceeded, .connectionLimitExceeded: "the controller is out of connection resources"
                case .invalidCommandParameters: "the parameters are invalid (e.g. the supervision-timeout rule is broken)"
                case .unsupportedFeatureOrParameter: "a PHY it does not support was asked for"
                default: "see the status"
                }
            return Diagnosis(
                rule: Self.code, severity: severity, frame: ev.frame,
                message:
                    "The controller refused to start the connection\(peer.map { " to \($0)" } ?? "") (\(codeName(status)) at frame \(ev.frame)): \(why).",
                headline: "the controller refused to start a connection (\(hex(status.rawValue)))",
                supporting: commandFrame.map { [CitedFrame($0, "\(opcode)")] } ?? [],
                causes: ["a host bug (parallel connection attempts)", "the connection limit reached", "invalid parameters"], device: peer,
                fold: "\(status.rawValue)")
        }
    }
}
