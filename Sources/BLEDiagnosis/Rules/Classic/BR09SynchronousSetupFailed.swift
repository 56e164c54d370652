import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let synchronousSetupFailed = FindingCode(
        "BR-09", layer: .classic, severity: .critical,
        title: "A SCO/eSCO link for a call failed to come up",
        explain: .init(
            meaning:
                "The SCO/eSCO link that carries a call's audio did not come up. Without a retry that succeeds, the call has no audio on the headset.",
            advice:
                "Read the status: an unsupported feature (0x1A) asks for a fallback (mSBC → CVSD, eSCO → SCO); no resources (0x0D) means another synchronous link holds the controller."
        ),
        fold: .value)
}

/// BR-09: a SCO/eSCO link for a call failed to come up: Synchronous Connection Complete (or Connection Complete for
/// SCO) with an error, or its setup refused by Command Status. Critical when no synchronous link came up on the same
/// ACL within 10 s after (the call had no audio on the headset); info when a retry succeeded.
struct BR09SynchronousSetupFailed: DiagnosisRule {
    static let code = FindingCode.synchronousSetupFailed
    static let group = RuleGroup.classic
    static let evidence =
        "Synchronous Connection Complete (0x2C) or SCO Connection Complete with status ≠ 0, or Command Status ≠ 0 for (Enhanced) Setup / Accept Synchronous Connection; critical unless a synchronous link on the same ACL came up within 10 s"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        let links = e.classic.synchronousLinks
        return links.compactMap { l -> Diagnosis? in
            guard !l.established, let frame = l.resultFrame else { return nil }
            let at = l.resultTime
            let retry = links.first { r in
                r.established && r.aclConnection == l.aclConnection && (r.startFrame ?? 0) > frame
                    && (at.flatMap { t in r.startTime.map { $0.microseconds(since: t) <= 10_000_000 } } ?? true)
            }
            let kind = l.isESCO ? "eSCO" : "SCO"
            let name = l.peerAddress ?? "the headset"
            var message = "The \(kind) link to \(name) failed (\(codeName(l.status)), frame \(frame))"
            if let asked = l.requestedCoding { message += " when \(asked) was asked" }
            message +=
                retry.map { r in "; a retry came up at frame \(r.startFrame ?? 0) (\(r.airMode?.description ?? "air mode not shown"))." }
                ?? ": no synchronous link came up after it, so the call had no audio on the headset."
            var supporting: [CitedFrame] = []
            if let r = l.requestFrame { supporting.append(CitedFrame(r, "the \(l.request ?? "setup") command")) }
            if let r = retry?.startFrame { supporting.append(CitedFrame(r, "the retry's link up")) }
            return Diagnosis(
                rule: Self.code, severity: retry == nil ? severity : .info, frame: frame, message: message,
                headline: "\(kind) setup with \(name) failed (\(hex(l.status.rawValue)))", supporting: supporting,
                causes: causes(l.status), device: l.peerAddress, connection: l.aclConnection,
                fold: "\(name) \(l.status.rawValue)")
        }
    }

    static func causes(_ s: HCIStatus) -> [String] {
        switch s.rawValue {
        case 0x1A, 0x11:
            [
                "the headset does not support the packet types or the codec asked (\(s)): the gateway should fall back (mSBC → CVSD, eSCO → SCO)"
            ]
        case 0x0D, 0x0A, 0x09: ["the controller has no room for another synchronous link (\(s))"]
        case 0x1F, 0x2A: ["the link manager's negotiation of the eSCO parameters failed (\(s))"]
        case 0x0C: ["the host asked in a state the controller refuses (a link already there, a role switch in progress)"]
        default: ["\(s)"]
        }
    }
}
