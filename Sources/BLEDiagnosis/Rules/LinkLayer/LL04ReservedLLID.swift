import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let reservedLLID = FindingCode(
        "LL-04", layer: .link, severity: .error,
        title: "Data PDU with the reserved LLID",
        explain: .init(
            meaning:
                "A data PDU with a good CRC carried the LLID 0b00, which the specification reserves: no Link Layer sends it, and a receiver must ignore it. Stacks that did not have hung or crashed on it (SweynTooth's LLID Deadlock). Error when the link ended soon after it, not by its sender.",
            advice:
                "The sender is a fuzzer or test tool, or a controller with a data-header bug; the receiver should drop the PDU and go on."),
        fold: .value)
}

/// LL-04: a CRC-good data PDU with the reserved LLID 0b00 (Core Spec Vol 6, Part B, 2.4: 0b01 continuation or empty, 0b10
/// start, 0b11 control), per link and sender, with what followed on the link (``LLShapeAftermath``). The shape of
/// SweynTooth's LLID Deadlock (the NXP capture, frame 22; the Cypress one, 488, 3104, 4504, 8946). A bad-CRC packet is
/// not one: its header may be noise, and the tracker drops it before reading the LLID.
struct LL04ReservedLLID: DiagnosisRule {
    static let code = FindingCode.reservedLLID
    static let group = RuleGroup.linkLayer
    static let evidence = "data PDU header LLID of CRC-good PDUs; the link's end (air captures)"
    static let anchor = "SweynTooth (LLID Deadlock, CVE-2019-17060, CVE-2019-17061)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var found: [String: [(ev: EvidenceEvent, length: Int)]] = [:]
        var order: [(key: String, sender: EvidenceEvent.Sender)] = []
        for ev in e.events {
            guard case .linkLayerNonCompliance(let n) = ev.kind, case let .reservedLLID(sender, length) = n.kind else { continue }
            let key = "\(ev.connection ?? 0) \(sender.rawValue)"
            if found[key] == nil { order.append((key, sender)) }
            found[key, default: []].append((ev, length))
        }
        return order.map { key, sender in
            let pdus = found[key]!
            let first = pdus[0].ev, last = pdus[pdus.count - 1].ev
            let c = e.connection(first.connection)
            let device = e.deviceName(c)
            let who = sender == .local ? "the central" : "the peripheral \(device)"
            let then = LLShapeAftermath.after(c, lastFrame: last.frame, lastTime: last.timestamp, sender: sender, senderName: who)
            let frames = pdus.prefix(6).map { "\($0.ev.frame) (\($0.length) octet\($0.length == 1 ? "" : "s"))" }.joined(separator: ", ")
            let count = pdus.count == 1 ? "a data PDU" : "\(pdus.count) data PDUs"
            var d = Diagnosis(
                rule: Self.code, severity: then.lost ? .error : .warning, frame: first.frame,
                message:
                    "\(who.capitalizedFirst) sent \(count) with the reserved LLID 0b00 on link #\(c?.number ?? 0) (seen, CRC good: frame\(pdus.count == 1 ? "" : "s") \(frames)\(pdus.count > 6 ? ", …" : "")): no Link Layer sends it, and the receiver must ignore it (Core Spec Vol 6, Part B, 2.4); the SweynTooth LLID Deadlock shape"
                    + then.text,
                headline: "reserved LLID 0b00 from \(sender == .local ? "the central" : device)",
                supporting: (pdus.count > 1 ? [CitedFrame(last.frame, "last")] : []) + then.cited,
                causes: ["a fuzzer or attack tool (SweynTooth LLID Deadlock)", "a controller's data-header bug"],
                device: c?.peerAddress, connection: c?.number, fold: key)
            d.occurrences = pdus.map(\.ev.frame)
            return d
        }
    }
}
