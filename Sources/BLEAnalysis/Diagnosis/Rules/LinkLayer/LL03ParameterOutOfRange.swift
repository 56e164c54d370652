import BLECore
import BLEProtocols

/// LL-03: a CONNECT_IND or LL_CONNECTION_UPDATE_IND timing parameter outside its range (Core Spec Vol 6, Part B,
/// 2.3.3.1 and 5.1.1): interval 7.5 ms–4 s, latency ≤ 499, supervision timeout 100 ms–32 s and more than
/// (1 + latency) × interval × 2, transmit window 1.25 ms–min(10 ms, interval − 1.25 ms), hop 5–16. A peripheral must
/// not act on such a request; one that does may lose the link or crash (SweynTooth's invalid connection requests).
struct LL03ParameterOutOfRange: DiagnosisRule {
    static let id = "LL-03"
    static let group = RuleGroup.linkLayer
    static let severity = DiagnosisSeverity.warning
    static let title = "Connection parameter out of range"
    static let evidence = "CONNECT_IND and LL_CONNECTION_UPDATE_IND Interval, Latency, Timeout, WinSize, WinOffset, Hop (air captures)"
    static let anchor = "SweynTooth (Invalid Connection Request, CVE-2019-19193 family)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var out: [Diagnosis] = []
        for ev in e.events {
            guard case .linkLayerNonCompliance(let n) = ev.kind, case let .parameter(pdu, field, value, allowed) = n.kind else { continue }
            let c = e.connection(ev.connection)
            if let i = out.firstIndex(where: { $0.frame == ev.frame }) {
                out[i].message = out[i].message.replacingOccurrences(of: " (allowed", with: ", \(field) \(value) (allowed \(allowed)) (allowed")
                continue
            }
            let device = e.deviceName(c)
            out.append(
                Diagnosis(
                    rule: id, severity: severity, frame: ev.frame,
                    message:
                        "\(pdu) at frame \(ev.frame) (link #\(c?.number ?? 0) with \(device)) sets \(field) \(value) (allowed \(allowed)): outside the specification's range; a peripheral should ignore it.",
                    headline: "\(pdu) \(field) \(value) out of range (\(device))",
                    causes: ["a fuzzer or attack tool (SweynTooth)", "a central's parameter bug"],
                    device: c?.peerAddress, connection: c?.number, foldKey: "LL-03 \(device) \(pdu) \(field)"))
        }
        return out
    }
}
