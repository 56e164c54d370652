import BLEAnalysis
import BLECodecs
import BLECore

extension FindingCode {
    static let aseOperationRefused = FindingCode(
        "LA-02", layer: .audio, severity: .warning,
        title: "ASE operation refused",
        explain: .init(
            meaning: "The audio device refused an operation on one of its audio stream endpoints (configure, enable, start).",
            advice: "Read the response and reason codes: usually a codec configuration it does not support."),
        fold: .device)
}

/// LA-02: the audio device refused an ASE Control Point operation (ASCS 5: a response code ≠ Success for an ASE), with
/// the code and the reason it gave. A warning: the client may retry with other values (it is said when a later
/// operation of the same kind on the same ASE succeeded). A repeat of an operation just accepted, refused as an invalid
/// transition, is context: the ASEs were already where the client wanted them. It needs the LE Audio profiles' tracker (``Evidence/leAudio``),
/// which `report` and `iso` run; `diagnose` alone does not (it keeps the attribute values on the statistics path).
struct LA02ASEOperationRefused: DiagnosisRule {
    static let code = FindingCode.aseOperationRefused
    static let group = RuleGroup.leAudio
    static let evidence =
        "ASE Control Point notification (0x2BC6) with a Response_Code ≠ 0x00 for an ASE, paired with the operation written; info when it refuses, as an invalid state transition (0x04), a repeat of the operation last accepted on those ASEs"
    static let anchor = "btmon and Wireshark decode ASCS; none pairs the refusal with its operation"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        guard let profiles = e.leAudio else { return [] }
        return profiles.operations.compactMap { op in
            guard op.refused, let answer = op.responseFrame else { return nil }
            let c = e.connection(op.connectionNumber)
            let device = e.deviceName(c)
            let refusals = op.responses.filter { $0.code != 0 }
            let why = refusals.map { r in
                "ASE \(r.aseID): \(r.codeName)" + (r.reason != 0 ? ", reason \(r.reasonName)" : "")
            }.joined(separator: "; ")
            let retried = profiles.operations.first { later in
                later.frame > op.frame && later.connectionNumber == op.connectionNumber && later.opcode == op.opcode
                    && !later.refused && later.responseFrame != nil && refusals.allSatisfy { later.aseIDs.contains($0.aseID) }
            }
            var message = "\(device) refused \(op.name) (frame \(op.frame), answered at frame \(answer)): \(why)."
            if let r = retried { message += " The same operation succeeded at frame \(r.frame)." }
            let repeated = Self.repeatOfAcceptedOperation(op, refusals, profiles.operations)
            if let done = repeated {
                message +=
                    " It repeated the \(op.name) accepted at frame \(done.frame) (answered at frame \(done.responseFrame ?? done.frame)), with nothing done on those ASEs since: they were already in that state, and nothing was lost."
            }
            return Diagnosis(
                rule: Self.code, severity: repeated == nil ? severity : .info, frame: answer, message: message,
                headline: "\(device) refused \(op.name): \(refusals.first?.codeName ?? "")",
                supporting: [CitedFrame(op.frame, "\(op.name) written")],
                causes: [
                    "a value outside what the device published (PAC records, the ASE's preferred QoS: presentation delay, latency, PHY)",
                    "an operation in the wrong ASE state (the client lost track of the state machine)",
                ], device: c?.peerAddress, connection: c?.number,
                fold: "\(device) \(op.opcode) \(refusals.first?.code ?? 0) \(refusals.first?.reason ?? 0)")
        }
    }

    /// The accepted operation `op` repeated, when every refusal is an invalid state transition (ASCS 5, response code
    /// 0x04) and no operation touched those ASEs between the two: a client sending the same operation twice (the Redmi
    /// K70 log's second Release, 4477, after the one accepted at 4465/4472).
    static func repeatOfAcceptedOperation(
        _ op: ASEOperation, _ refusals: [ASEOperation.Response], _ operations: [ASEOperation]
    ) -> ASEOperation? {
        guard refusals.allSatisfy({ $0.code == invalidTransition }) else { return nil }
        let refused = Set(refusals.map(\.aseID))
        let earlier = operations.filter { $0.connectionNumber == op.connectionNumber && $0.frame < op.frame }
        guard let last = earlier.last(where: { !refused.isDisjoint(with: $0.aseIDs) }), last.opcode == op.opcode, !last.refused,
            last.responseFrame != nil, refused.isSubset(of: last.aseIDs)
        else { return nil }
        return last
    }
    /// ASCS 5: Invalid ASE State Machine Transition.
    static let invalidTransition: UInt8 = 0x04
}
