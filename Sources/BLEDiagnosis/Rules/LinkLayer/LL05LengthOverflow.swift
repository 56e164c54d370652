import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let lengthOverflow = FindingCode(
        "LL-05", layer: .link, severity: .error,
        title: "Data PDU longer than the link allows",
        explain: .init(
            meaning:
                "A data PDU with a good CRC carried more payload octets than the link's maximum that way: 27 until a Data Length Update raises it (LL_LENGTH_REQ and RSP), the negotiated maximum after. A receiver sizes its buffers by that maximum; stacks that trusted the Length instead have overflowed and crashed (SweynTooth's Link Layer Length Overflow). Error when the link ended soon after it, not by its sender.",
            advice: "The sender is a fuzzer or has a Data Length bug; the receiver must drop a PDU longer than its maximum, not copy it."),
        fold: .value)
}

/// LL-05: a CRC-good data PDU whose payload (MIC excluded) is longer than the link allows that way (Core Spec Vol 6,
/// Part B, 4.5.10: connEffectiveMaxTxOctets, 27 until a Data Length Update; 2.4: the Length counts the payload and a
/// MIC), on a link followed from its CONNECT_IND (``LLLengthLimits``: between an LL_LENGTH_REQ and its settling the
/// maximum is not known, and nothing is checked), per link and sender, with what followed (``LLShapeAftermath``). The
/// shape of SweynTooth's Link Layer Length Overflow: the NXP capture's Length 114 with no Data Length Update, frames
/// 14–282 (the sniffer checked the CRC over the 114 octets and kept 9 or 10; tshark: "Malformed Packet"), the link lost
/// at 287. A bad-CRC packet is not one (its Length may be noise): the tracker drops it first.
struct LL05LengthOverflow: DiagnosisRule {
    static let code = FindingCode.lengthOverflow
    static let group = RuleGroup.linkLayer
    static let evidence =
        "data PDU Length of CRC-good PDUs against the link's maximum (27, or the Data Length Update's); the link's end (air captures)"
    static let anchor = "SweynTooth (Link Layer Length Overflow, CVE-2019-16336, CVE-2019-17519)"

    typealias Long = (ev: EvidenceEvent, llid: UInt8, length: Int, maximum: Int, negotiated: Bool, carried: Int?)

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var found: [String: [Long]] = [:]
        var order: [(key: String, sender: EvidenceEvent.Sender)] = []
        for ev in e.events {
            guard case .linkLayerNonCompliance(let n) = ev.kind,
                case let .lengthOverMaximum(sender, llid, length, maximum, negotiated, carried) = n.kind
            else { continue }
            let key = "\(ev.connection ?? 0) \(sender.rawValue)"
            if found[key] == nil { order.append((key, sender)) }
            found[key, default: []].append((ev, llid, length, maximum, negotiated, carried))
        }
        return order.map { key, sender in diagnosis(found[key]!, sender: sender, key: key, e) }
    }

    static func diagnosis(_ pdus: [Long], sender: EvidenceEvent.Sender, key: String, _ e: Evidence) -> Diagnosis {
        let first = pdus[0], last = pdus[pdus.count - 1]
        let c = e.connection(first.ev.connection)
        let device = e.deviceName(c)
        let who = sender == .local ? "the central" : "the peripheral \(device)"
        let then = LLShapeAftermath.after(c, lastFrame: last.ev.frame, lastTime: last.ev.timestamp, sender: sender, senderName: who)
        let kind = first.llid == 3 ? "an LL control PDU" : first.llid == 0 ? "a data PDU with LLID 0b00" : "an L2CAP data PDU"
        let limit =
            first.negotiated
            ? "the Data Length Update's maximum, \(first.maximum) octets"
            : "\(first.maximum) octets, no Data Length Update since its CONNECT_IND"
        let kept = first.carried.map { "; the sniffer checked its CRC and kept \($0) octets of it (tshark: Malformed Packet)" } ?? ""
        let count = pdus.count == 1 ? "a data PDU" : "\(pdus.count) data PDUs"
        var d = Diagnosis(
            rule: Self.code, severity: then.lost ? .error : .warning, frame: first.ev.frame,
            message:
                "\(who.capitalizedFirst) sent \(count) longer than link #\(c?.number ?? 0) allows (seen, CRC good; first at frame \(first.ev.frame), \(kind) of \(first.length) octets where the link allows \(limit)\(kept)\(pdus.count > 1 ? "; last at \(last.ev.frame)" : "")): a receiver sizes its buffer by the maximum (Core Spec Vol 6, Part B, 4.5.10); the SweynTooth Link Layer Length Overflow shape"
                + then.text,
            headline:
                "\(first.length)-octet PDU over the \(first.maximum)-octet maximum from \(sender == .local ? "the central" : device)",
            supporting: (pdus.count > 1 ? [CitedFrame(last.ev.frame, "last")] : []) + then.cited,
            causes: ["a fuzzer or attack tool (SweynTooth Link Layer Length Overflow)", "a controller ignoring the Data Length Update"],
            device: c?.peerAddress, connection: c?.number, fold: key)
        d.occurrences = pdus.map(\.ev.frame)
        return d
    }
}
