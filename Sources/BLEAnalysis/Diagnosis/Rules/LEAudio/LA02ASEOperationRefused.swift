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
/// operation of the same kind on the same ASE succeeded). It needs the LE Audio profiles' tracker (``Evidence/leAudio``),
/// which `report` and `iso` run; `diagnose` alone does not (it keeps the attribute values on the statistics path).
struct LA02ASEOperationRefused: DiagnosisRule {
    static let code = FindingCode.aseOperationRefused
    static let group = RuleGroup.leAudio
    static let evidence =
        "ASE Control Point notification (0x2BC6) with a Response_Code ≠ 0x00 for an ASE, paired with the operation written"
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
            return Diagnosis(
                rule: Self.code, severity: severity, frame: answer, message: message,
                headline: "\(device) refused \(op.name): \(refusals.first?.codeName ?? "")",
                supporting: [CitedFrame(op.frame, "\(op.name) written")],
                causes: [
                    "a value outside what the device published (PAC records, the ASE's preferred QoS: presentation delay, latency, PHY)",
                    "an operation in the wrong ASE state (the client lost track of the state machine)",
                ], device: c?.peerAddress, connection: c?.number,
                fold: "\(device) \(op.opcode) \(refusals.first?.code ?? 0) \(refusals.first?.reason ?? 0)")
        }
    }
}
