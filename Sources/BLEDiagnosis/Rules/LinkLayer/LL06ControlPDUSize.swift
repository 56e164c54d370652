import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let controlPDUSize = FindingCode(
        "LL-06", layer: .link, severity: .error,
        title: "LL control PDU of the wrong size",
        explain: .init(
            meaning:
                "An LL control PDU with a good CRC was longer or shorter than its opcode's parameters: each opcode's CtrData has a fixed size. No conforming Link Layer sends one; a receiver that reads the parameters by the opcode reads past or short of the PDU, and fuzzers send them to find stacks that do. Error when the link ended soon after it, not by its sender.",
            advice:
                "The sender is a fuzzer or buggy; the receiver should answer LL_UNKNOWN_RSP or ignore the PDU, and not act on its parameters."
        ),
        fold: .value)
}

/// LL-06: an LL control PDU of a defined opcode whose CtrData is not the size the opcode gives (Core Spec Vol 6, Part B,
/// 2.4.2; ``LLControlTable``), CRC good and decrypted where the link was encrypted (a MIC is not CtrData), per link and
/// sender, with what followed (``LLShapeAftermath``). A fuzzer's shape (the SweynTooth Cypress capture: LL_FEATURE_REQ of
/// 12 octets at 487, LL_PAUSE_ENC_RSP of 15 at 3527, LL_REJECT_EXT_IND of 21 at 1990); no family is named, the shape
/// is not one attack's. An opcode the table does not define is not this rule's (LL_UNKNOWN_RSP answers it, LP-05).
struct LL06ControlPDUSize: DiagnosisRule {
    static let code = FindingCode.controlPDUSize
    static let group = RuleGroup.linkLayer
    static let evidence = "LL control PDU length against its opcode's CtrData size, CRC-good PDUs; the link's end (air captures)"
    static let anchor = "none"

    typealias Sized = (ev: EvidenceEvent, opcode: LLControlOpcode, length: Int, expected: Int, fixed: Bool)

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var found: [String: [Sized]] = [:]
        var order: [(key: String, sender: EvidenceEvent.Sender)] = []
        for ev in e.events {
            guard case .linkLayerNonCompliance(let n) = ev.kind, case let .controlLength(sender, opcode, length, expected, fixed) = n.kind
            else { continue }
            let key = "\(ev.connection ?? 0) \(sender.rawValue)"
            if found[key] == nil { order.append((key, sender)) }
            found[key, default: []].append((ev, opcode, length, expected, fixed))
        }
        return order.map { key, sender in
            let pdus = found[key]!
            let first = pdus[0], last = pdus[pdus.count - 1]
            let c = e.connection(first.ev.connection)
            let device = e.deviceName(c)
            let who = sender == .local ? "the central" : "the peripheral \(device)"
            let then = LLShapeAftermath.after(c, lastFrame: last.ev.frame, lastTime: last.ev.timestamp, sender: sender, senderName: who)
            let list = pdus.prefix(5).map { p in
                "\(p.opcode.name) of \(p.length) octets at \(p.ev.frame) (\(p.fixed ? "" : "at least ")\(p.expected))"
            }.joined(separator: ", ")
            let count = pdus.count == 1 ? "an LL control PDU" : "\(pdus.count) LL control PDUs"
            var d = Diagnosis(
                rule: Self.code, severity: then.lost ? .error : .warning, frame: first.ev.frame,
                message:
                    "\(who.capitalizedFirst) sent \(count) of the wrong size on link #\(c?.number ?? 0) (seen, CRC good: \(list)\(pdus.count > 5 ? ", …" : "")): each opcode's parameters have a fixed size (Core Spec Vol 6, Part B, 2.4.2), so no conforming Link Layer sends \(pdus.count == 1 ? "it" : "them")"
                    + then.text,
                headline:
                    "\(first.opcode.name) of \(first.length) octets\(pdus.count > 1 ? " and \(pdus.count - 1) more" : "") from \(sender == .local ? "the central" : device)",
                supporting: (pdus.count > 1 ? [CitedFrame(last.ev.frame, "last")] : []) + then.cited,
                causes: ["a fuzzer or test tool", "a controller writing the wrong Length"],
                device: c?.peerAddress, connection: c?.number, fold: key)
            d.occurrences = pdus.map(\.ev.frame)
            return d
        }
    }
}
