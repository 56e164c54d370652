import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let remoteFeaturesFailed = FindingCode(
        "CE-05", layer: .link, severity: .warning,
        title: "Remote-feature exchange failed",
        explain: .init(
            meaning:
                "Reading the peer's link-layer features failed, so the stack cannot know which procedures (data length, 2M PHY) the peer supports.",
            advice: "Usually harmless once; repeated, it points at an unstable link or a peer firmware bug."),
        fold: .device)
}

/// CE-05: the exchange of the peer's link-layer features failed (LE Read Remote Features with an error status).
struct CE05RemoteFeaturesFailed: DiagnosisRule {
    static let code = FindingCode.remoteFeaturesFailed
    static let group = RuleGroup.establishment
    static let evidence = "LE Read Remote Features: Command Status or LE Read Remote Features Complete with status ≠ 0"
    static let anchor = "hcidoc (RemoteFeatureError / RemoteFeatureNoReply)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.events.compactMap { ev in
            let status: HCIStatus
            switch ev.kind {
            case .readRemoteFeaturesComplete(_, let s): status = s
            case .commandFailed(.leReadRemoteFeatures, let s, _): status = s
            default: return nil
            }
            // The link itself failed (0x3E, 0x08): the feature exchange is a casualty, cited by CE-02 / DC-01.
            guard !controllerEndedReasons.contains(status) else { return nil }
            let c = e.connection(ev.connection)
            let device = e.deviceName(c)
            return Diagnosis(
                rule: Self.code, severity: severity, frame: ev.frame,
                message: "Reading the link-layer features of \(device) failed (\(codeName(status)) at frame \(ev.frame)).",
                headline: "reading the features of \(device) failed", causes: ["a peer controller bug", "the link was already failing"],
                device: c?.peerAddress, connection: c?.number, fold: "\(device)")
        }
    }
}
