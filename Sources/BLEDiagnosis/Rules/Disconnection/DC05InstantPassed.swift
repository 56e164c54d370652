import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let instantPassed = FindingCode(
        "DC-05", layer: .link, severity: .critical,
        title: "Link lost: an update's instant had passed",
        explain: .init(
            meaning:
                "A connection or PHY update named a future connection event (its instant) that had already passed when the peer received it, so the link broke (0x28).",
            advice: "A timing bug or a lossy link: updates need enough events of margin; check the peripheral's firmware."),
        fold: .device)
}

/// DC-05: the instant of a connection update, channel map or PHY update had passed when the peer got it (0x28 Instant
/// Passed, Core Spec Vol 6, Part B, 5.5.1): usually a lossy link and an instant set too close.
struct DC05InstantPassed: DiagnosisRule {
    static let code = FindingCode.instantPassed
    static let group = RuleGroup.disconnection
    static let evidence = "Disconnection Complete 0x28; the last connection or PHY update before it"
    static let anchor = "none (Wireshark shows the fields)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.disconnections.filter { $0.reason == .instantPassed }.map { d in
            let c = d.connection
            let device = e.deviceName(c)
            let update = e.last(before: d.frame) { ev in
                guard ev.connection == d.event.connection else { return false }
                switch ev.kind {
                case .connectionUpdateComplete, .phyUpdateComplete: return true
                default: return false
                }
            }
            var supporting: [CitedFrame] = []
            if let u = update { supporting.append(CitedFrame(u.frame, "last parameter or PHY update before the loss")) }
            return Diagnosis(
                rule: Self.code, severity: severity, frame: d.frame,
                message:
                    "Link to \(device) dropped because an update's instant had already passed when the peer got it (0x28 Instant Passed, frame \(d.frame))."
                    + (update.map { " The last update before it was at frame \($0.frame)." } ?? ""),
                headline: "link to \(device) dropped: instant passed (0x28)", supporting: supporting,
                causes: ["a lossy link and an instant too few connection events ahead (frequent channel-map updates)", "a controller bug"],
                device: c?.peerAddress, connection: c?.number, fold: "\(device)")
        }
    }
}
