import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let authenticatedPayloadTimeout = FindingCode(
        "SEC-07", layer: .security, severity: .warning,
        title: "Authenticated payload time-out expired",
        explain: .init(
            meaning: "No authenticated packet arrived within the authenticated payload timeout on an encrypted link.",
            advice: "Usually a sign of a weak link; a link with little traffic needs a longer timeout or keep-alive traffic."),
        fold: .device)
}

/// SEC-07: no valid MIC-protected packet arrived within the authenticated payload time-out (Authenticated Payload
/// Timeout Expired, event 0x57; Core Spec Vol 6, Part B, 5.4).
struct SEC07AuthenticatedPayloadTimeout: DiagnosisRule {
    static let code = FindingCode.authenticatedPayloadTimeout
    static let group = RuleGroup.security
    static let evidence = "Authenticated Payload Timeout Expired event (0x57)"
    static let anchor = "hcidoc (AuthenticatedPayloadTimeoutExpired)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.events.compactMap { ev in
            guard case .authenticatedPayloadTimeout = ev.kind else { return nil }
            let c = e.connection(ev.connection)
            let device = e.deviceName(c)
            return Diagnosis(
                rule: Self.code, severity: severity, frame: ev.frame,
                message: "No valid encrypted packet from \(device) within the authenticated payload time-out (frame \(ev.frame)).",
                headline: "authenticated payload time-out with \(device)", causes: ["a degraded link", "LE ping not supported or failing"],
                device: c?.peerAddress, connection: c?.number, fold: "\(device)")
        }
    }
}
