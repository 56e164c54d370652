import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let procedureLoop = FindingCode(
        "LL-01", layer: .link, severity: .warning,
        title: "LL procedure repeated that may run once",
        explain: .init(
            meaning:
                "A link-layer procedure the specification allows once per link and direction ran again: LL_VERSION_IND sent more than once. Answered in kind every time, it becomes a loop that keeps both controllers busy.",
            advice: "A fuzzer or test tool is the usual sender; a controller that answers every LL_VERSION_IND needs a fix."),
        fold: .value)
}

/// LL-01: an LL control procedure that may run once per link and direction ran again: LL_VERSION_IND more than once
/// from one side (Core Spec Vol 6, Part B, 5.1.4: each side sends it at most once per connection). A peer answering
/// every LL_VERSION_IND with another is a procedure loop (a fuzzer's probe, or a controller bug).
struct LL01ProcedureLoop: DiagnosisRule {
    static let code = FindingCode.procedureLoop
    static let group = RuleGroup.linkLayer
    static let evidence = "LL_VERSION_IND per link and direction, counted (air captures)"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var found: [String: (ev: EvidenceEvent, count: Int, first: Int, sender: EvidenceEvent.Sender, opcode: LLControlOpcode, last: Int)] =
            [:]
        var order: [String] = []
        for ev in e.events {
            guard case .linkLayerNonCompliance(let n) = ev.kind, case let .repeated(opcode, sender, count, first) = n.kind else { continue }
            let key = "\(ev.connection ?? 0) \(opcode.rawValue) \(sender.rawValue)"
            if let f = found[key] {
                found[key] = (f.ev, max(f.count, count), f.first, sender, opcode, ev.frame)
            } else {
                order.append(key)
                found[key] = (ev, count, first, sender, opcode, ev.frame)
            }
        }
        return order.map { key in
            let f = found[key]!
            let c = e.connection(f.ev.connection)
            let device = e.deviceName(c)
            let who = f.sender == .local ? "the central" : "the peripheral \(device)"
            return Diagnosis(
                rule: Self.code, severity: f.count > 10 ? .warning : .info, frame: f.ev.frame,
                message:
                    "\(who.capitalizedFirst) sent \(f.opcode.name) \(f.count) times (retransmissions not counted) on link #\(c?.number ?? 0) (first at frame \(f.first), again at \(f.ev.frame)"
                    + (f.last != f.ev.frame ? ", last at \(f.last)" : "")
                    + "): the version exchange runs at most once per direction on a link"
                    + (f.count > 10 ? "; answered in kind again and again, it is a procedure loop." : "."),
                headline: "\(f.opcode.name) ×\(f.count) from \(f.sender == .local ? "the central" : device)",
                supporting: [CitedFrame(f.first, "first \(f.opcode.name)")] + (f.last != f.ev.frame ? [CitedFrame(f.last, "last")] : []),
                causes: ["a fuzzer or test tool replaying the PDU", "a controller that answers every LL_VERSION_IND instead of the first"],
                device: c?.peerAddress, connection: c?.number, fold: "\(key)")
        }
    }
}
