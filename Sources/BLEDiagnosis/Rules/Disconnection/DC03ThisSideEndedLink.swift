import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let thisSideEndedLink = FindingCode(
        "DC-03", layer: .link, severity: .warning,
        title: "This side closed the link after a failure, or Bluetooth was switched off",
        explain: .init(
            meaning:
                "This device closed the link itself, after something failed (an unanswered request, a pairing failure), or Bluetooth was turned off.",
            advice: "Look at the failure cited before the disconnection: the stack or app closed the link because of it."),
        fold: .value)
}

/// DC-03: this side closed the link (HCI Disconnect, then Disconnection Complete 0x16). Quiet when the app simply asked
/// (nothing failed before); a warning when a failure preceded it (the stack gave up: an ATT time-out, a pairing
/// failure); info when Bluetooth was switched off (Disconnect reason 0x15), folded over the links it closed.
struct DC03ThisSideEndedLink: DiagnosisRule {
    static let code = FindingCode.thisSideEndedLink
    static let group = RuleGroup.disconnection
    static let evidence =
        "HCI Disconnect (its reason) then Disconnection Complete 0x16; what failed before it (ATT request unanswered, pairing failed, encryption error)"
    static let anchor = "hcidoc (power-off special case only)"

    /// What makes a stack give up on a peer: an ATT or SMP time-out, a failed pairing or encryption. An app closing the
    /// link after an Error Response it did not like is the app's choice, and stays quiet.
    static func stackGaveUp(_ k: EvidenceEvent.Kind) -> Bool {
        switch k {
        case .pairingFailed: true
        case .attUnanswered(_, _, _, let ended, _, let waited): ended != .nextRequest && waited >= attTransactionTimeoutMicroseconds
        case .encryptionChange(_, let s, _): s != .success
        default: false
        }
    }

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.disconnections.compactMap { d in
            guard let command = d.localCommand, case .disconnectCommand(_, let asked) = command.kind else { return nil }
            let c = d.connection
            let device = e.deviceName(c)
            if asked == .remotePowerOff {
                return Diagnosis(
                    rule: Self.code, severity: .info, frame: d.frame,
                    message:
                        "Bluetooth was switched off on this side: the link to \(device) closed (Disconnect 0x15 at frame \(command.frame)).",
                    headline: "links closed because Bluetooth was switched off on this side",
                    supporting: [
                        CitedFrame(command.frame, "HCI Disconnect, reason 0x15 Remote Device Terminated Connection due to Power Off")
                    ],
                    causes: ["the user or the system turned Bluetooth off"], device: c?.peerAddress, connection: c?.number,
                    fold: "power-off")
            }
            let window: Int64 = 35_000_000
            let failure = e.last(before: command.frame) { ev in
                ev.connection == d.event.connection && command.timestamp.microseconds(since: ev.timestamp) <= window
                    && Self.stackGaveUp(ev.kind)
            }
            guard let failure else { return nil }  // the app asked: benign
            return Diagnosis(
                rule: Self.code, severity: severity, frame: d.frame,
                message:
                    "This side closed the link to \(device) (Disconnect \(codeName(asked)) at frame \(command.frame)) after \(DC02PeerEndedLink.failureText(failure.kind)) (frame \(failure.frame)).",
                headline: "this side closed the link to \(device) after a failure",
                supporting: [
                    CitedFrame(failure.frame, DC02PeerEndedLink.failureText(failure.kind)),
                    CitedFrame(command.frame, "HCI Disconnect, reason \(codeName(asked))"),
                ],
                causes: [
                    "the local stack gave up on the peer (ATT or SMP time-out, failed security)",
                    "the app closed the connection after the error",
                ],
                device: c?.peerAddress, connection: c?.number, fold: "\(device)")
        }
    }
}
