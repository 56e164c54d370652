import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let dhKeyCheckSkipped = FindingCode(
        "SEC-18", layer: .security, severity: .error,
        title: "Encryption before the DHKey Checks",
        explain: .init(
            meaning:
                "In an LE Secure Connections pairing, encryption started before both DHKey Checks were exchanged: a side that never proved it knows the DHKey got an encrypted link (SweynTooth's DHCheck Skip).",
            advice: "The peripheral must not accept LL_ENC_REQ before it has checked the central's DHKey Check; update its stack."),
        fold: .device, traits: .weakness)
}

/// SEC-18: LE Secure Connections encryption started before both DHKey Checks were exchanged (Core Spec Vol 3, Part H,
/// 2.3.5.6.5: the central starts encryption only after checking the peripheral's DHKey Check), and whether the
/// peripheral encrypted anyway: the shape of SweynTooth's DHCheck Skip (the CC2640 case), which lets a central that
/// never proved it knows the DHKey encrypt. On an air capture only when neither check is there: the sniffer may have
/// lost one (a packet with a bad CRC is not decoded), never both with the PDUs around them.
struct SEC18DHKeyCheckSkipped: DiagnosisRule {
    static let code = FindingCode.dhKeyCheckSkipped
    static let group = RuleGroup.security
    static let evidence = "LE Secure Connections pairing, its DHKey Check PDUs, and the encryption start that follows"
    static let anchor = "SweynTooth (DHCheck Skip, CVE-2019-17520 family)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.securedLinks.compactMap { c, record in
            for s in record.sessions {
                guard case .pairing(let f)? = s.origin, let start = s.startFrame,
                    let p = record.pairings.last(where: { $0.frame == f }), p.procedure == .leSecureConnections,
                    p.dhKeyChecks.count < (e.isAirCapture ? 1 : 2), p.responseFrame != nil
                else { continue }
                let missing = [EvidenceEvent.Sender.local, .peer].filter { p.dhKeyChecks[$0] == nil }
                    .map { $0 == .local ? e.sides(.local) : "the peer's" }
                let device = e.deviceName(c)
                let accepted = s.onFrame ?? s.acceptedFrame
                let outcome =
                    s.onFrame.map { "the link encrypted anyway at frame \($0)" }
                    ?? s.acceptedFrame.map { "the peripheral accepted the key anyway (frame \($0))" } ?? "the capture shows no acceptance"
                return Diagnosis(
                    rule: Self.code, severity: accepted == nil ? .warning : severity, frame: start,
                    message:
                        "\(e.linkName(c).capitalizedFirst): encryption started at frame \(start) in the LE Secure Connections pairing of frame \(p.frame) without \(missing.joined(separator: " and ")) DHKey Check; \(outcome). This is the shape of SweynTooth's DHCheck Skip.",
                    headline: "encryption before the DHKey Check with \(device)", supporting: [CitedFrame(p.frame, "pairing")],
                    causes: ["a fuzzer or attack tool skipping the check", "a peripheral that does not wait for the DHKey Check"],
                    device: c.peerAddress, connection: c.number, fold: "\(device)")
            }
            return nil
        }
    }
}
