import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let peerEndedLink = FindingCode(
        "DC-02", layer: .link, severity: .error,
        title: "The peer ended the connection",
        explain: .init(
            meaning: "The other device closed the connection; the finding names the failure just before it, which is usually why.",
            advice: "Fix the failure cited (ATT error, pairing failure); otherwise read the peer's logs for why it disconnected."),
        fold: .device)
}

/// DC-02: the peer ended the link (0x13 user terminated, 0x14 low resources, 0x15 power off) without this side asking.
/// An error when something failed just before (the likely reason); info when it is the expected end (the reboot of a
/// firmware update, a Broadcast Assistant leaving after its Remove Source, a session's orderly teardown, a peer that says
/// it powered off, an LE link's routine close with nothing outstanding, ``outstanding(_:in:)``); a warning otherwise: a
/// request unanswered, a procedure under way or data moving when it ended, or a BR/EDR link with its profiles in use.
struct DC02PeerEndedLink: DiagnosisRule {
    static let code = FindingCode.peerEndedLink
    static let group = RuleGroup.disconnection
    static let evidence =
        "Disconnection Complete 0x13/0x14/0x15 with no HCI Disconnect from this side (air: LL_TERMINATE_IND from the peer); the last failure before it (ATT error, pairing failed, encryption error); what the end cut short (an ATT request unanswered, a pairing, encryption or parameter update under way, the last two packets one way within 500 ms): on LE a 0x13 that cut nothing short is a routine close, info"
    static let anchor = "none"
    /// How far back a failure counts as the peer's likely reason.
    static let window: Int64 = 5_000_000

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.disconnections.compactMap { d in
            guard remoteEndedReasons.contains(d.reason), !d.byThisSide else { return nil }
            // A drop right after connecting is CE-04's.
            if let up = d.connectedMicroseconds, up < CE04PeerRefusedCentral.window, CE04PeerRefusedCentral.littleTraffic(d) {
                return nil
            }
            let c = d.connection
            let device = e.deviceName(c)
            let failure = failureBefore(d, in: e)
            var supporting: [CitedFrame] = []
            var sentence = "\(device) ended the connection (\(codeName(d.reason))) at frame \(d.frame)"
            if let failure {
                supporting.append(CitedFrame(failure.frame, failureText(failure.kind)))
                sentence +=
                    ", \(duration(d.event.timestamp.microseconds(since: failure.timestamp))) after \(failureText(failure.kind)) (frame \(failure.frame))."
            } else if let c, let (rx, audio) = lastFromPeer(c, before: d.frame, in: e) {
                let on = audio.map { " on its \($0.isESCO ? "eSCO" : "SCO") link" } ?? ""
                sentence +=
                    "; nothing failed before it (last packet from it\(on) \(duration(d.event.timestamp.microseconds(since: rx.timestamp))) before)."
                supporting.append(CitedFrame(rx.frame, "last packet from the peer\(on)"))
            } else {
                sentence += "; nothing failed before it."
            }
            let reboot = failure == nil ? e.expectedReboot(d) : nil
            let probable = reboot == nil ? nil : e.scenarios?.update(endingAt: d.frame, connection: c?.number)
            if let reboot {
                supporting.append(reboot)
                sentence +=
                    probable == nil
                    ? " It follows the \(reboot.text) (frame \(reboot.frame)): the device restarting for the update, as expected."
                    : " It follows a \(reboot.text) (last write at frame \(reboot.frame)): probably the device rebooting into the new firmware."
            }
            let leaving = failure == nil && reboot == nil ? assistantLeaving(d, in: e) : nil
            if let leaving {
                supporting.removeAll { $0.frame == leaving.frame }
                supporting.append(leaving)
                sentence +=
                    " It follows the peer's \(leaving.text) (frame \(leaving.frame)): a Broadcast Assistant leaving once done, as expected."
            }
            let orderly = failure == nil && reboot == nil && leaving == nil ? orderlyTeardown(d, in: e) : nil
            if let orderly {
                supporting.append(orderly)
                sentence += " It follows the \(orderly.text) (frame \(orderly.frame)): the session's orderly end."
            }
            // Power Off (0x15) says why: the peer was switched off, with nothing failed before it. Nothing was lost to a fault.
            let poweredOff = failure == nil && d.reason == .remotePowerOff
            // No reading yet: the severity follows what the end cut short, whether or not the log saw the link set up.
            let unexplained = failure == nil && reboot == nil && leaving == nil && orderly == nil && !poweredOff
            let end = unexplained ? readEnd(d, in: e, sentence: &sentence, supporting: &supporting) : nil
            let benign = reboot != nil || leaving != nil || orderly != nil || poweredOff || end?.benign == true
            return Diagnosis(
                rule: Self.code, severity: failure != nil ? .error : benign ? .info : .warning, frame: d.frame, message: sentence,
                headline: "\(device) ended the connection (\(codeName(d.reason)))", supporting: supporting,
                causes: reboot != nil
                    ? DC01SupervisionTimeout.rebootCauses(probable: probable != nil)
                    : d.reason == .remotePowerOff
                        ? ["the peer powered off or its Bluetooth was switched off"]
                        : leaving != nil
                            ? ["the Broadcast Assistant's app finished: it took back its source and closed the link"]
                            : orderly != nil
                                ? ["the session ended: the user or the peer's app closed it"]
                                : end?.causes ?? [
                                    "the peer's firmware policy (idle timeout, a rejected value, authentication failure)",
                                    "the peer's app closed the link",
                                ],
                device: c?.peerAddress, connection: c?.number,
                fold:
                    "\(device) \(d.reason.rawValue)\(reboot == nil ? "" : " reboot")\(orderly == nil ? "" : " orderly")\(end?.foldSuffix ?? "")"
            )
        }
    }

    /// The peer's BASS Remove Source shortly before it ended the link with 0x13 (BAP 6.5: the assistant takes its
    /// source back and disconnects): the normal end of an assistant's visit, not a problem.
    static func assistantLeaving(_ d: DisconnectionStory, in e: Evidence) -> CitedFrame? {
        guard d.reason == .remoteUserTerminatedConnection else { return nil }
        let since = d.event.timestamp.microseconds
        let removed = e.last(before: d.frame) { ev in
            guard ev.connection == d.event.connection, since - ev.timestamp.microseconds <= window else { return false }
            if case .broadcastSourceRemoved(_, .peer) = ev.kind { return true }
            return false
        }
        guard let removed, case .broadcastSourceRemoved(let source, _) = removed.kind else { return nil }
        return CitedFrame(removed.frame, "BASS Remove Source of source \(source)")
    }

    /// The last failure on the link within ``window`` before its end: the peer's likely reason.
    static func failureBefore(_ d: DisconnectionStory, in e: Evidence) -> EvidenceEvent? {
        let since = d.event.timestamp.microseconds  // fixed point for the window
        return e.last(before: d.frame) { ev in
            ev.connection == d.event.connection && since - ev.timestamp.microseconds <= window && isFailure(ev.kind)
        }
    }

    static func isFailure(_ k: EvidenceEvent.Kind) -> Bool {
        switch k {
        case .attError(let request, _, let error, _, _): !GATT08ErrorResponse.isDiscoveryEnd(request, error)
        case .pairingFailed, .attUnanswered: true
        case .encryptionChange(_, let s, _): s != .success
        default: false
        }
    }

    static func failureText(_ k: EvidenceEvent.Kind) -> String {
        switch k {
        case .attError(let request, let handle, let error, _, _):
            return "\(request) on \(hex(handle, width: 4)) failed with \(error)"
        case .pairingFailed(let sender, let reason):
            let who = sender == .local ? "this side" : "the peer"
            return "pairing failed (\(reason), sent by \(who))"
        case .attUnanswered(let request, _, _, _, _, _):
            return "an unanswered \(request)"
        case .encryptionChange(_, let s, _):
            return "encryption failed (\(codeName(s)))"
        default:
            return "an error"
        }
    }
}
