import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let parameterOutOfRange = FindingCode(
        "LL-03", layer: .link, severity: .warning,
        title: "Connection parameter out of range",
        explain: .init(
            meaning:
                "A connect request or connection update carried a timing parameter outside the specification's range (interval, latency, supervision timeout, transmit window, hop).",
            advice: "The central is a fuzzer or buggy; the peripheral should ignore the request rather than act on it."),
        fold: .value)
}

/// LL-03: a CONNECT_IND or LL_CONNECTION_UPDATE_IND timing parameter outside its range (Core Spec Vol 6, Part B,
/// 2.3.3.1 and 5.1.1): interval 7.5 ms–4 s, latency ≤ 499, supervision timeout 100 ms–32 s and more than
/// (1 + latency) × interval × 2, transmit window 1.25 ms–min(10 ms, interval − 1.25 ms), hop 5–16. A peripheral must
/// not act on such a request; one that does may lose the link or crash (SweynTooth's invalid connection requests).
struct LL03ParameterOutOfRange: DiagnosisRule {
    static let code = FindingCode.parameterOutOfRange
    static let group = RuleGroup.linkLayer
    static let evidence = "CONNECT_IND and LL_CONNECTION_UPDATE_IND Interval, Latency, Timeout, WinSize, WinOffset, Hop (air captures)"
    static let anchor = "SweynTooth (Invalid Connection Request, CVE-2019-19193 family)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        // One finding per PDU, naming every field of it out of range.
        var byFrame: [(ev: EvidenceEvent, pdu: String, fields: [String])] = []
        for ev in e.events {
            guard case .linkLayerNonCompliance(let n) = ev.kind, case let .parameter(pdu, field, value, allowed) = n.kind else { continue }
            let text = "\(field) \(value) (allowed \(allowed))"
            if let i = byFrame.firstIndex(where: { $0.ev.frame == ev.frame && $0.pdu == pdu }) {
                byFrame[i].fields.append(text)
            } else {
                byFrame.append((ev, pdu, [text]))
            }
        }
        return byFrame.map { ev, pdu, fields in
            let c = e.connection(ev.connection)
            let device = e.deviceName(c)
            return Diagnosis(
                rule: Self.code, severity: severity, frame: ev.frame,
                message:
                    "\(pdu) at frame \(ev.frame) (link #\(c?.number ?? 0) with \(device)) sets \(fields.joined(separator: ", ")): outside the specification's range; a peripheral should ignore it.",
                headline: "\(pdu) \(fields[0].prefix { $0 != "(" })out of range (\(device))",
                causes: ["a fuzzer or attack tool (SweynTooth)", "a central's parameter bug"],
                device: c?.peerAddress, connection: c?.number, fold: "\(device) \(pdu) \(fields.joined())")
        }
    }
}
