import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let hfpConnectionFailed = FindingCode(
        "BR-10", layer: .classic, severity: .error,
        title: "The hands-free service level connection failed",
        explain: .init(
            meaning:
                "The hands-free service level connection (the AT-command setup between phone and headset) failed, so the headset cannot take or make calls.",
            advice:
                "Read the command that failed and its answer; check the features both sides announced (AT+BRSF / +BRSF) and the indicators."
        ),
        fold: .device)
}

/// BR-10: the hands-free service level connection failed (HFP 1.9, 4.2): an SLC command answered ERROR, or the RFCOMM
/// channel closed before the SLC was up. Without it the headset cannot take calls (an error: it fails silently, and
/// every call will fail to reach the headset).
struct BR10HFPConnectionFailed: DiagnosisRule {
    static let code = FindingCode.hfpConnectionFailed
    static let group = RuleGroup.classic
    static let evidence =
        "HFP AT+BRSF, AT+BAC, AT+CIND, AT+CMER, AT+CHLD or AT+BIND answered ERROR / +CME ERROR, or the RFCOMM DLC closed (DISC, DM) before the SLC's last step was answered OK"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.connections.compactMap { c -> Diagnosis? in
            guard c.isBREDR, let h = c.profiles?.hfp, let f = h.slcFailure else { return nil }
            let name = e.deviceName(c)
            return Diagnosis(
                rule: Self.code, severity: severity, frame: f.frame,
                message:
                    "The hands-free connection with \(name) never came up: \(f.command) got \(f.why) (frame \(f.frame)), so calls cannot use the headset.",
                headline: "HFP service level connection with \(name) failed at \(f.command)",
                supporting: h.availableCodecsFrame.map { [CitedFrame($0, "AT+BAC")] } ?? [],
                causes: [
                    "the gateway does not support what the headset asked (its features, indicators or codecs)",
                    "one side closed the RFCOMM channel (a profile conflict, an unanswered command)",
                ], device: c.peerAddress, connection: c.number, fold: "\(name)")
        }
    }
}
