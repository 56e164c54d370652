import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let noKeyForCentral = FindingCode(
        "SEC-02", layer: .security, severity: .critical,
        title: "This peripheral has no key for the central",
        explain: .init(
            meaning:
                "The central asked to encrypt with a key this device (peripheral) does not have: it lost the bond or never had one with that central.",
            advice: "Pair again; check that bonds are stored and looked up with the right identity address."),
        fold: .device)
}

/// SEC-02: this side is the peripheral and has no key for the central that asks to encrypt: LE Long Term Key Request
/// answered with LTK Request Negative Reply. The phone still thinks it is bonded.
struct SEC02NoKeyForCentral: DiagnosisRule {
    static let code = FindingCode.noKeyForCentral
    static let group = RuleGroup.security
    static let evidence = "LE Long Term Key Request event (LE Meta 0x05) answered by LE Long Term Key Request Negative Reply (0x201B)"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var out: [Diagnosis] = []
        var requests: [UInt16: EvidenceEvent] = [:]
        for ev in e.events {
            switch ev.kind {
            case .longTermKeyRequest(let h):
                requests[h] = ev
            case .longTermKeyNegativeReply(let h):
                let c = e.connection(ev.connection)
                let device = e.deviceName(c)
                out.append(
                    Diagnosis(
                        rule: Self.code, severity: severity, frame: ev.frame,
                        message:
                            "This side (the peripheral) has no key for \(device), which asked to encrypt with a stored bond (negative reply at frame \(ev.frame)); the central still thinks it is bonded.",
                        headline: "no key for \(device)'s stored bond",
                        supporting: requests[h].map { [CitedFrame($0.frame, "LE Long Term Key Request")] } ?? [],
                        causes: [
                            "the peripheral lost its bond store",
                            "the central's address (RPA) was not resolved, so the wrong bond was looked up",
                        ],
                        device: c?.peerAddress, connection: c?.number, fold: "\(device)"))
                requests[h] = nil
            default:
                break
            }
        }
        return out
    }
}
