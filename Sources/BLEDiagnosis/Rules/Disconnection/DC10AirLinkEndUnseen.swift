import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let airLinkEndUnseen = FindingCode(
        "DC-10", layer: .link, severity: .error,
        title: "An air link ended without a terminate in the capture",
        explain: .init(
            meaning:
                "An air capture shows no end of the link: it went silent for longer than its supervision timeout while the capture went on. What the capture shows after (the peripheral advertising again, and how soon) says whether it was never established, the peripheral left it, or the sniffer only stopped following it.",
            advice:
                "If the peripheral left within one connection interval, look at the last PDU it received (a crash or reset on it); if the sniffer only lost the link, capture again closer to the devices."
        ),
        fold: .device)
}

/// DC-10: an air link the capture shows no end of (no LL_TERMINATE_IND) that went silent for longer than its
/// supervision timeout while the capture went on (``LinkSilence``). What the capture does show decides the words:
/// - no packet at all after the connect request and the peripheral advertising again: never established (error);
/// - the peripheral advertising again before the link's next connection event: it left the link without a terminate,
///   a reset or a crash (error: the SweynTooth captures' shape);
/// - advertising again later: the link ended, how is not in the capture (a terminate the sniffer missed, a loss);
///   info when PDUs no key decrypted may hold the terminate;
/// - the link's last exchange an encrypted control PDU of an LL_TERMINATE_IND's size and its acknowledgement: probably
///   that terminate, encrypted (info; issue 49).
/// Silence without the advertising is no end (the sniffer may only have lost the link): ``Observability`` says so.
/// Each names what was still waiting on the link when it went silent (an unanswered ATT request).
struct DC10AirLinkEndUnseen: DiagnosisRule {
    static let code = FindingCode.airLinkEndUnseen
    static let group = RuleGroup.disconnection
    static let evidence =
        "Air capture: a link's last packet, then nothing on its access address for longer than its supervision timeout while the capture went on, and the peripheral advertising again after it (ADV_IND, ADV_DIRECT_IND, a SCAN_REQ to it); ATT requests still waiting"
    static let anchor = "none (Wireshark shows the packets only)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.connections.compactMap { c in
            guard let end = c.lifecycle.ending, let inferred = end.inferredFrom else { return nil }
            let device = e.deviceName(c)
            // An answer the sniffer could not decrypt may have come: the request is not said unanswered then.
            let hidden = c.linkEncryption.map { $0.key == nil && $0.firstUndecryptedFrame != nil } ?? false
            let waiting = hidden ? nil : pendingRequest(c, end, e)
            var supporting = [CitedFrame(end.frame, end.frame == c.startFrame ? "the connect request" : "the link's last packet")]
            if let waiting { supporting.insert(CitedFrame(waiting.frame, "\(waiting.request), unanswered"), at: 0) }
            let still = waiting.map { " The central's \($0.request) (frame \($0.frame)) was still unanswered." } ?? ""
            let severity: DiagnosisSeverity, message: String, headline: String, causes: [String]
            switch end.reason {
            case LinkSilence.notEstablished:
                severity = .error
                headline = "link to \(device) never established"
                message = "Link #\(c.number) to \(device) was never established: \(inferred) (Core Spec Vol 6, Part B, 4.5.2)."
                causes = [
                    "the peripheral rejected the connect request (invalid parameters, channel map)",
                    "the peripheral reset on receiving it", "interference on the first connection events",
                ]
            case LinkSilence.peripheralLeft:
                severity = .error
                headline = "\(device) left the link without LL_TERMINATE_IND"
                message =
                    "\(device) left link #\(c.number) without an LL_TERMINATE_IND: \(inferred), before the link's next connection event.\(still)"
                causes = [
                    "the peripheral reset or crashed (on the last PDU it received)", "its firmware dropped the link silently",
                ]
            case LinkSilence.encryptedTerminateReason:
                // The end the capture shows, only encrypted: nothing went wrong that it can tell.
                severity = .info
                headline = "link to \(device) probably ended by an encrypted LL_TERMINATE_IND"
                message = "Link #\(c.number) to \(device) probably ended with an LL_TERMINATE_IND no key opened: \(inferred)."
                causes = []
            default:  // LinkSilence.endedUnseen
                // Encrypted PDUs no key decrypted may hold the terminate: nothing to warn of then.
                severity = hidden ? .info : .warning
                headline = "link to \(device) ended with no terminate in the capture"
                message =
                    "Link #\(c.number) to \(device) ended with no LL_TERMINATE_IND in the capture: \(inferred).\(still)"
                causes = [
                    "an LL_TERMINATE_IND the sniffer missed", "the link was lost (supervision timeout)",
                    "the peripheral reset",
                ]
            }
            var d = Diagnosis(
                rule: Self.code, severity: severity, frame: end.frame, message: message, headline: headline, supporting: supporting,
                causes: causes, device: c.peerAddress, connection: c.number, fold: "\(device) \(end.reason)")
            d.confidence = .lowered(reason: "inferred: the capture holds no end of the link")
            // The end of a probable firmware update (SC-01): the device rebooting into it sends no terminate.
            if let u = e.scenarios?.update(endingAt: end.frame, connection: c.number) {
                d.severity = .info
                d.message +=
                    " It follows a \(u.rebootText) (last write at frame \(u.lastFrame)): probably the device rebooting into the new firmware."
                d.supporting.insert(CitedFrame(u.lastFrame, u.rebootText), at: 0)
                d.causes = DC01SupervisionTimeout.rebootCauses(probable: true)
                d.foldKey += " reboot"
            }
            return d
        }
    }

    /// The ATT request the link's end cut, when one was waiting at its last packet.
    static func pendingRequest(_ c: Connection, _ end: ConnectionLifecycle.Ending, _ e: Evidence) -> (
        request: ATTOpcode, frame: Int
    )? {
        for ev in e.events where ev.connection == c.number && ev.frame <= end.frame {
            if case .attUnanswered(let request, _, let sender, _, let endFrame, _) = ev.kind, sender == .local,
                endFrame >= end.frame
            {
                return (request, ev.frame)
            }
        }
        return nil
    }
}
