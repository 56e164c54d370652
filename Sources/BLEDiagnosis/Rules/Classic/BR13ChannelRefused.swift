import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let channelRefused = FindingCode(
        "BR-13", layer: .classic, severity: .error,
        title: "A profile's L2CAP channel refused",
        explain: .init(
            meaning:
                "A BR/EDR L2CAP Connection Response refused the channel a profile needs (AVDTP, AVCTP, RFCOMM, HID…): with no channel to that PSM later on the link, the profile never came up (no audio, no remote control).",
            advice:
                "Security block: the responder wants more security for that PSM than the link has (an authenticated key, encryption first), or its host did not authorize the service (a Pending 'authorization' came first: an agent that refused or never answered). No resources: the peer has no room for another channel."
        ),
        fold: .value)
}

/// BR-13: a BR/EDR L2CAP Connection Response with a refusing result (Core Spec Vol 3, Part A, 4.3: 0x0002 PSM not
/// supported, 0x0003 security block, 0x0004 no resources, 0x0006/0x0007 CID errors). An error for a security block or no
/// resources when no channel to the same PSM opened later on the link (the profile did not come up); a CID error is a
/// protocol error (warning); "PSM not supported" is the answer to a probe for a profile the peer does not offer (info),
/// and so is any refusal while a channel to the same PSM is open (a second one, a collision) or followed by one.
struct BR13ChannelRefused: DiagnosisRule {
    static let code = FindingCode.channelRefused
    static let group = RuleGroup.classic
    static let evidence =
        "L2CAP Connection Response (0x03) with result 0x0002 or above, the PSM from its Connection Request, a Pending status before it; whether a channel to that PSM opened later on the link"
    static let anchor = "Wireshark (btl2cap.result)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.events.compactMap { ev in
            guard case .channelRefused(let r) = ev.kind, let c = e.connection(ev.connection) else { return nil }
            let psm = L2CAPPSM(r.psm)
            let openedLater = c.channels.first { $0.psm == psm && $0.openFrame > ev.frame }
            // A second channel to a PSM refused while the first is open (a collision, a duplicate): the profile stood.
            let alreadyOpen = c.channels.first { $0.psm == psm && $0.openFrame < ev.frame && ($0.closeFrame ?? .max) > ev.frame }
            let refusedBy = r.requester == .tx ? e.deviceName(c) : e.thisSide
            let (refuser, asker) = r.requester == .tx ? (e.side(.peer), e.thisSide) : (e.thisSide, e.side(.peer))
            let result = "\(L2CAPSignalCommand.connectionResultName(r.result)) (\(hex(r.result, width: 4)))"
            let pending = r.pendingStatus.flatMap(Self.pendingText).map { " after answering Pending (\($0))" } ?? ""
            // This side refusing the peer's channel while the link is taken down (channels closed after the refusal, the link
            // ended within 2 s): the refusal was part of the closing and lost nothing more (the BLUFFS Pixel Buds logs:
            // refused at 573, this side's Disconnection Requests at 574–575, the link's end at 581).
            let closing = c.lifecycle.ending.flatMap { end in
                r.requester == .rx && end.frame > ev.frame && end.timestamp.microseconds - ev.timestamp.microseconds <= Self.closingWindow
                    && c.channels.contains { ($0.closeFrame ?? .max) > ev.frame && ($0.closeFrame ?? .max) < end.frame } ? end : nil
            }
            let after: String =
                if let closing {
                    "; the link's channels were closed after it and the link ended \(duration(closing.timestamp.microseconds - ev.timestamp.microseconds)) later (frame \(closing.frame)): it was being taken down."
                } else if let alreadyOpen {
                    "; the \(psm) channel already open (frame \(alreadyOpen.openFrame)) stayed: the profile stood."
                } else if let openedLater {
                    "; the \(psm) channel opened later (frame \(openedLater.openFrame))."
                } else if let end = c.lifecycle.ending, end.frame > ev.frame {
                    "; no \(psm) channel opened after it, and the link ended at frame \(end.frame)."
                } else {
                    "; no \(psm) channel opened after it."
                }
            let severity = severity(r, profileStood: openedLater != nil || alreadyOpen != nil || closing != nil)
            return Diagnosis(
                rule: Self.code, severity: severity, frame: ev.frame,
                message:
                    "\(e.linkName(c).capitalizedFirst): \(refuser) refused \(asker)'s \(psm) channel with \(result)\(pending) at frame \(ev.frame)"
                    + after,
                headline: "\(psm) channel refused by \(refusedBy) (\(L2CAPSignalCommand.connectionResultName(r.result)))",
                supporting: [CitedFrame(r.requestFrame, "Connection Request for \(psm)")],
                causes: causes(r), device: c.peerAddress, connection: c.number,
                fold: "\(e.deviceName(c)) \(r.psm) \(r.result) \(severity)")
        }
    }

    /// How soon after its refusal this side's own disconnect makes the refusal part of closing the link.
    static let closingWindow: Int64 = 2_000_000

    static func severity(_ r: ChannelRefusal, profileStood: Bool) -> DiagnosisSeverity {
        if profileStood || r.result == 0x0002 { return .info }
        return r.result == 0x0003 || r.result == 0x0004 ? code.severity : .warning
    }

    /// The Pending response's status (Vol 3, Part A, 4.3).
    static func pendingText(_ status: UInt16) -> String? {
        switch status {
        case 0x0001: "authentication pending"
        case 0x0002: "authorization pending"
        default: nil
        }
    }

    static func causes(_ r: ChannelRefusal) -> [String] {
        switch r.result {
        case 0x0003 where r.pendingStatus == 0x0002:
            ["the responder's host did not authorize the service: its agent refused, or nobody answered its prompt"]
        case 0x0003:
            [
                "the responder needs more security for this PSM than the link has (an authenticated key, encryption first)",
                "the link key was refused or the pairing did not complete before the request",
            ]
        case 0x0002: ["the responder does not offer this profile (the requester probed for it)"]
        case 0x0004: ["the responder has no resources for another channel (too many links or channels open)"]
        default: ["a protocol error in the request's channel identifiers"]
        }
    }
}
