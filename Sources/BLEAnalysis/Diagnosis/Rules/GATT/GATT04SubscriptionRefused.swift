import BLECore
import BLEProtocols

extension FindingCode {
    static let subscriptionRefused = FindingCode(
        "GATT-04", layer: .gatt, severity: .error,
        title: "Subscription refused",
        explain: .init(
            meaning: "The peer refused the write that turns notifications or indications on.",
            advice: "Read the error: often encryption is needed first (pair), or the characteristic does not support that mode."),
        fold: .device, traits: [.readsPayloads])
}

/// GATT-04: enabling notifications or indications failed: the CCCD write got an Error Response (0x05/0x0F security,
/// 0xFD CCCD improperly configured, 0x03 write not permitted, 0x06, 0x0D).
struct GATT04SubscriptionRefused: DiagnosisRule {
    static let code = FindingCode.subscriptionRefused
    static let group = RuleGroup.gatt
    static let evidence = "ATT Error Response to a Write Request on a CCCD (0x2902)"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var writes: [Int: EvidenceEvent] = [:]  // request frame → CCCD write
        for ev in e.events { if case .cccdWrite = ev.kind { writes[ev.frame] = ev } }
        return e.events.compactMap { ev in
            guard case .attError(.writeRequest, let handle, let error, let requestFrame?, _) = ev.kind,
                let write = writes[requestFrame], case .cccdWrite(let cccd, _, let value, _, _) = write.kind, cccd == handle
            else { return nil }
            let c = e.connection(ev.connection)
            let device = e.deviceName(c)
            let needsPairing = error == .insufficientAuthentication || error == .insufficientEncryption
            return Diagnosis(
                rule: Self.code, severity: severity, frame: ev.frame,
                message:
                    "Enabling \(value & 2 != 0 ? "indications" : "notifications") on \(device) failed: the CCCD \(hex(handle, width: 4)) write was refused with \(error) (frame \(ev.frame))"
                    + (needsPairing ? ": the peripheral needs pairing before subscription." : "."),
                headline: "subscription on \(device) refused (\(error))", supporting: [CitedFrame(requestFrame, "CCCD write")],
                causes: needsPairing ? ["the security level is too low: pair first"] : ["the server does not support the mode asked for"],
                device: c?.peerAddress, connection: c?.number, fold: "\(device) \(handle)")
        }
    }
}
