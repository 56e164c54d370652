import BLECore
import BLEProtocols

/// BR-10: the hands-free service level connection failed (HFP 1.9, 4.2): an SLC command answered ERROR, or the RFCOMM
/// channel closed before the SLC was up. Without it the headset cannot take calls.
struct BR10HFPConnectionFailed: DiagnosisRule {
    static let id = "BR-10"
    static let group = RuleGroup.classic
    static let severity = DiagnosisSeverity.critical
    static let title = "The hands-free service level connection failed"
    static let evidence =
        "HFP AT+BRSF, AT+BAC, AT+CIND, AT+CMER, AT+CHLD or AT+BIND answered ERROR / +CME ERROR, or the RFCOMM DLC closed (DISC, DM) before the SLC's last step was answered OK"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.connections.compactMap { c -> Diagnosis? in
            guard c.isBREDR, let h = c.profiles?.hfp, let f = h.slcFailure else { return nil }
            let name = e.deviceName(c)
            return Diagnosis(
                rule: id, severity: severity, frame: f.frame,
                message:
                    "The hands-free connection with \(name) never came up: \(f.command) got \(f.why) (frame \(f.frame)), so calls cannot use the headset.",
                headline: "HFP service level connection with \(name) failed at \(f.command)",
                supporting: h.availableCodecsFrame.map { [CitedFrame($0, "AT+BAC")] } ?? [],
                causes: [
                    "the gateway does not support what the headset asked (its features, indicators or codecs)",
                    "one side closed the RFCOMM channel (a profile conflict, an unanswered command)",
                ], device: c.peerAddress, connection: c.number, foldKey: "BR-10 \(name)")
        }
    }
}
