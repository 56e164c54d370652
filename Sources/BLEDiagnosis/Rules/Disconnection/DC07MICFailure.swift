import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let micFailure = FindingCode(
        "DC-07", layer: .link, severity: .critical,
        title: "Link dropped: MIC failure",
        explain: .init(
            meaning:
                "An encrypted packet failed its integrity check (MIC), so the link was dropped: the two sides did not use the same key.",
            advice: "Remove the bond on both devices and pair again; check how the firmware stores and selects keys."),
        fold: .device)
}

/// DC-07: encrypted packets failed their integrity check (0x3D Connection Terminated due to MIC Failure), most often
/// right after encryption started on a reconnection: the two sides hold different keys.
struct DC07MICFailure: DiagnosisRule {
    static let code = FindingCode.micFailure
    static let group = RuleGroup.disconnection
    static let evidence = "Disconnection Complete 0x3D; the Encryption Change before it and how long before"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.disconnections.filter { $0.reason == .connectionTerminatedMICFailure }.map { d in
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
                rule: Self.code, severity: severity, frame: d.frame, message: sentence,
                headline: "link to \(device) dropped on a MIC failure (0x3D)", supporting: supporting,
                causes: [
                    "one side re-paired or reset its keys", "an LTK/EDIV/Rand mix-up (Secure Connections vs legacy key handling)",
                    "a controller bug after pausing and resuming encryption",
                ],
                device: c?.peerAddress, connection: c?.number, fold: "\(device)")
        }
    }
}
