import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let commandTimeout = FindingCode(
        "HH-01", layer: .hci, severity: .critical,
        title: "HCI command time-out",
        explain: .init(
            meaning: "The controller did not answer an HCI command within 2 s: the controller or its transport is hung.",
            advice: "Check the controller's firmware and the transport (UART flow control); a reset usually follows."),
        fold: .value)
}

/// HH-01: the controller stopped answering: an HCI command got no Command Status or Complete within 2 s (Android's
/// `kHciTimeoutMs`; the stack then asks for debug info and restarts after 5 s), or none at all while the capture went on.
struct HH01CommandTimeout: DiagnosisRule {
    static let code = FindingCode.commandTimeout
    static let group = RuleGroup.controller
    static let evidence =
        "An HCI command answered more than 2 s later, or not at all while the capture goes on for 2 s more; a Reset or restart after it"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.events.compactMap { ev in
            let opcode: HCICommand
            let commandFrame: Int
            let text: String
            switch ev.kind {
            case .commandLate(let op, let f, let us):
                (opcode, commandFrame, text) = (op, f, "was answered only after \(duration(us)) (frame \(ev.frame))")
            case .commandUnanswered(let op, let f):
                guard let end = e.lastTime, end.microseconds(since: ev.timestamp) > hciCommandTimeoutMicroseconds else { return nil }
                (opcode, commandFrame, text) = (op, f, "was never answered")
            default:
                return nil
            }
            let reset = e.first(after: commandFrame) { if case .reset = $0.kind { true } else { false } }
            var sentence = "The controller stopped answering commands: \(opcode) (frame \(commandFrame)) \(text)"
            if let reset { sentence += ", and the stack reset the controller at frame \(reset.frame)" }
            return Diagnosis(
                rule: Self.code, severity: severity, frame: commandFrame, message: sentence + ".",
                headline: "controller did not answer \(opcode) in time",
                supporting: reset.map { [CitedFrame($0.frame, "HCI Reset")] } ?? [],
                causes: ["a controller firmware hang", "a transport (UART/USB/SDIO) fault", "power management"],
                fold: "\(opcode.rawValue)")
        }
    }
}
