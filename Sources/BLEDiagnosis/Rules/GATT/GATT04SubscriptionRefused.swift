import BLEAnalysis
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
/// 0xFD CCCD improperly configured, 0x03 write not permitted, 0x06, 0x0D). Info when the same write, made again on the
/// link, was not refused: the subscription was made on the second try (a Samsung phone and a blood-pressure cuff:
/// refused 0x05, paired 11 ms later, written again and 14 indications followed).
struct GATT04SubscriptionRefused: DiagnosisRule {
    static let code = FindingCode.subscriptionRefused
    static let group = RuleGroup.gatt
    static let evidence = "ATT Error Response to a Write Request on a CCCD (0x2902)"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var writes: [Int: EvidenceEvent] = [:]  // request frame → CCCD write
        var refused = Set<Int>()  // request frames answered with an Error Response
        for ev in e.events {
            if case .cccdWrite = ev.kind { writes[ev.frame] = ev }
            if case .attError(.writeRequest, _, _, let request?, _) = ev.kind { refused.insert(request) }
        }
        return e.events.compactMap { ev in
            guard case .attError(.writeRequest, let handle, let error, let requestFrame?, _) = ev.kind,
                let write = writes[requestFrame], case .cccdWrite(let cccd, let valueHandle, let value, _, _) = write.kind, cccd == handle
            else { return nil }
            let c = e.connection(ev.connection)
            let device = e.deviceName(c)
            let needsPairing = error == .insufficientAuthentication || error == .insufficientEncryption
            let retry = retried(write, after: ev.frame, value: value, refused: refused, in: e)
            let delivered = retry.flatMap { r in
                valueHandle.flatMap { h in c?.activity.notified[h].flatMap { $0.last > r.frame ? (h, $0) : nil } }
            }
            let mode = value & 2 != 0 ? "indications" : "notifications"
            var message =
                "Enabling \(mode) on \(device) failed: the CCCD \(hex(handle, width: 4)) write was refused with \(error) (frame \(ev.frame))"
                + (needsPairing ? ": the peripheral needs pairing before subscription." : ".")
            if let retry {
                message +=
                    " The same write at frame \(retry.frame) was not refused\(delivered.map { ", and the peer sent \($0.1.count) values on \(hex($0.0, width: 4)) (the last at frame \($0.1.last))" } ?? ""): the subscription was made on the second try."
            }
            return Diagnosis(
                rule: Self.code, severity: retry == nil ? severity : .info, frame: ev.frame, message: message,
                headline: "subscription on \(device) refused (\(error))",
                supporting: [CitedFrame(requestFrame, "CCCD write")] + (retry.map { [CitedFrame($0.frame, "CCCD written again")] } ?? []),
                causes: needsPairing ? ["the security level is too low: pair first"] : ["the server does not support the mode asked for"],
                device: c?.peerAddress, connection: c?.number, fold: "\(device) \(handle)\(retry == nil ? "" : " retried")")
        }
    }

    /// The same CCCD written again with the same value on the same link after the refusal (`after`), and not refused: the
    /// client paired (or waited) and tried again, as a client meeting Insufficient Authentication should (Core Vol 3
    /// Part C 10.3.2).
    static func retried(_ write: EvidenceEvent, after refusal: Int, value: UInt16, refused: Set<Int>, in e: Evidence) -> EvidenceEvent? {
        guard case .cccdWrite(let cccd, _, _, _, _) = write.kind else { return nil }
        return e.events.first { later in
            guard later.frame > refusal, later.connection == write.connection, !refused.contains(later.frame),
                case .cccdWrite(cccd, _, value, false, _) = later.kind
            else { return false }
            return true
        }
    }
}
