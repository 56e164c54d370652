import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let failedToEstablish = FindingCode(
        "CE-02", layer: .link, severity: .critical,
        title: "Connection failed to be established (0x3E)",
        explain: .init(
            meaning:
                "The connection request was sent but the peripheral never answered on the first connection events, so the link was never established (0x3E).",
            advice:
                "Usually radio range or interference, or a peripheral that stopped advertising just then: retry, move closer, check the peripheral's advertising interval."
        ),
        fold: .device)
}

/// CE-02: the connection was never established: the controller reported it created, then Disconnection Complete 0x3E
/// (Connection Failed to be Established) because the peripheral answered none of the first 6 connection events (Core
/// Spec Vol 6, Part B, 4.5.2). Android reports it to the app as status 62 or 133.
struct CE02FailedToEstablish: DiagnosisRule {
    static let code = FindingCode.failedToEstablish
    static let group = RuleGroup.establishment
    static let evidence = "LE Connection Complete 0x00 then Disconnection Complete 0x3E (or a Connection Complete with status 0x3E)"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var out: [Diagnosis] = []
        for d in e.disconnections where d.reason == .connectionFailedToBeEstablished {
            let c = d.connection
            let device = e.deviceName(c)
            var supporting: [CitedFrame] = []
            var sentence = "The connection to \(device) failed to be established (0x3E at frame \(d.frame))"
            if let c, !c.inferred {
                supporting.append(CitedFrame(c.startFrame, "Connection Complete"))
                for ev in e.events(of: c.number, from: c.startFrame, to: d.frame) {
                    if case .readRemoteFeaturesComplete(_, let s) = ev.kind {
                        supporting.append(CitedFrame(ev.frame, "remote features: \(codeName(s))"))
                    }
                }
                sentence += ", \(duration(d.event.timestamp.microseconds(since: c.startTime))) after the controller reported it created"
            }
            sentence += ": the peripheral answered none of the first connection events."
            out.append(
                Diagnosis(
                    rule: Self.code, severity: severity, frame: d.frame, message: sentence,
                    headline: "failed to be established (0x3E) to \(c?.peerAddress.map(shortAddress) ?? device)",
                    supporting: supporting, causes: causes, device: c?.peerAddress, connection: c?.number,
                    fold: "\(device)"))
        }
        for ev in e.events {
            guard case .connectionComplete(_, let status, let peer) = ev.kind, status == .connectionFailedToBeEstablished else { continue }
            let device = peer ?? "the device"
            out.append(
                Diagnosis(
                    rule: Self.code, severity: severity, frame: ev.frame,
                    message: "The connection to \(device) failed to be established (Connection Complete 0x3E at frame \(ev.frame)).",
                    headline: "failed to be established (0x3E) to \(peer.map(shortAddress) ?? device)", causes: causes, device: peer,
                    fold: "\(device)"))
        }
        return out
    }

    static let causes = [
        "interference, or the peripheral missed the connect request", "the peripheral was busy (scanning, flash writes) or not ready",
        "sleep-clock accuracy or a controller bug; a retry usually works",
    ]
}
