import BLECore
import BLEProtocols

/// DC-07: encrypted packets failed their integrity check (0x3D Connection Terminated due to MIC Failure), most often
/// right after encryption started on a reconnection: the two sides hold different keys.
struct DC07MICFailure: DiagnosisRule {
    static let id = "DC-07"
    static let group = RuleGroup.disconnection
    static let severity = DiagnosisSeverity.critical
    static let title = "Link dropped: MIC failure"
    static let evidence = "Disconnection Complete 0x3D; the Encryption Change before it and how long before"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.disconnections.filter { $0.reason.rawValue == 0x3D }.map { d in
            let c = d.connection
            let device = e.deviceName(c)
            let enc = e.last(before: d.frame) { ev in
                guard ev.connection == d.event.connection, case .encryptionChange(_, .success, true) = ev.kind else { return false }
                return true
            }
            var sentence = "Encrypted packets with \(device) failed their integrity check (0x3D MIC Failure, frame \(d.frame))"
            var supporting: [CitedFrame] = []
            if let enc {
                let after = d.event.timestamp.microseconds(since: enc.timestamp)
                sentence += ", \(duration(after)) after encryption started (frame \(enc.frame))"
                supporting.append(CitedFrame(enc.frame, "encryption started"))
            }
            sentence += ": the two sides most likely hold different keys."
            return Diagnosis(
                rule: id, severity: severity, frame: d.frame, message: sentence,
                headline: "link to \(device) dropped on a MIC failure (0x3D)", supporting: supporting,
                causes: [
                    "one side re-paired or reset its keys", "an LTK/EDIV/Rand mix-up (Secure Connections vs legacy key handling)",
                    "a controller bug after pausing and resuming encryption",
                ],
                device: c?.peerAddress, connection: c?.number, foldKey: "DC-07 \(device)")
        }
    }
}
