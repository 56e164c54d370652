import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let linkKeyMissing = FindingCode(
        "BR-04", layer: .classic, severity: .error,
        title: "A BR/EDR link key is missing or refused (bond lost)",
        explain: .init(
            meaning:
                "A Classic link could not be authenticated with the stored link key: this side had no key for the device (negative reply), or the device refused the key it had (it forgot the bond, e.g. after a reset).",
            advice:
                "Remove the device from the phone's paired list and pair again; if it happens after every reset of the device, the device does not keep its bonds."
        ),
        fold: .device)
}

/// BR-04: a BR/EDR bond broken: authentication failed with 0x05 or 0x06 without a pairing, after this side said it had
/// no link key (Link Key Request Negative Reply) or after it gave one the peer refused (the peer forgot the bond).
struct BR04LinkKeyMissing: DiagnosisRule {
    static let code = FindingCode.linkKeyMissing
    static let group = RuleGroup.classic
    static let evidence =
        "Link Key Request (0x17), Link Key Request Reply (0x040B) or Negative Reply (0x040C), then Authentication Complete (0x06), Connection Complete or Disconnection Complete with 0x05 Authentication Failure or 0x06 PIN or Key Missing, no pairing between; a warning when a later pairing with the peer made a new link key (Link Key Notification)"
    static let anchor = "hcidoc (LinkKeyMismatch: Reply then 0x05)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var out: [Diagnosis] = []
        for ev in e.events {
            let peer: String?, status: HCIStatus
            switch ev.kind {
            case .authenticationComplete(_, let s) where s == .authenticationFailure || s == .pinOrKeyMissing:
                (peer, status) = (e.classicPeer(ev.connection), s)
            case .classicConnectionComplete(_, let s, let p, _) where s == .authenticationFailure || s == .pinOrKeyMissing:
                (peer, status) = (p, s)
            case .disconnectionComplete(_, .success, let r)
            where (r == .authenticationFailure || r == .pinOrKeyMissing) && e.connection(ev.connection)?.isBREDR == true:
                (peer, status) = (e.classicPeer(ev.connection), r)
            default: continue
            }
            let chain = e.authenticationChain(peer: peer, connection: ev.connection, before: ev.frame)
            let paired = chain.contains {
                switch $0.kind {
                case .ioCapabilityExchange, .pinCodeRequest: true
                default: false
                }
            }
            guard !paired, let answer = chain.last(where: { if case .linkKeyAnswer = $0.kind { true } else { false } }),
                case .linkKeyAnswer(_, let found) = answer.kind
            else { continue }
            let name = peer ?? e.deviceName(e.connection(ev.connection))
            // A pairing later in the log that gave the two a new key (Link Key Notification): the bond is back, and
            // what was lost is the attempt that failed (the blueprobe moto g04s log: the JBL Clip 3 refused at 3304,
            // paired again by Secure Simple Pairing from 3439, new key at 3467).
            let repaired = peer.flatMap { p in
                e.events.first { x in
                    guard x.frame > ev.frame, case .linkKeyCreated(p) = x.kind else { return false }
                    return true
                }
            }
            let after = repaired.map { "; they paired again and a new link key was made at frame \($0.frame)" } ?? ""
            let deleted = found ? nil : peer.flatMap { e.keyDeleted(for: $0, before: answer.frame) }
            let what =
                found
                ? "the peer refused the link key this side gave at frame \(answer.frame): it no longer has the bond, or the keys differ\(after)"
                : "this side has no link key for it (Negative Reply at frame \(answer.frame))"
                    + (deleted.map { ": this side deleted the stored key for it at frame \($0.frame) (Delete Stored Link Key)" } ?? "")
                    + (repaired == nil ? " and no pairing followed" : after)
            out.append(
                Diagnosis(
                    rule: Self.code, severity: repaired == nil ? severity : .warning, frame: ev.frame,
                    message: "\(Self.failed(ev.kind, name)) (\(codeName(status)) at frame \(ev.frame)): \(what).",
                    headline: found
                        ? "\(name) refused the stored link key (\(hex(status.rawValue)))"
                        : "no link key for \(name) (\(hex(status.rawValue)))",
                    supporting: chain.compactMap { c in c.kind.chainText.map { CitedFrame(c.frame, $0) } }
                        + (repaired.map { [CitedFrame($0.frame, "Link Key Notification: a new bond")] } ?? [])
                        + (deleted.map { [CitedFrame($0.frame, "Delete Stored Link Key: this side removed the bond")] } ?? []),
                    causes: found
                        ? ["the peer was reset or unpaired and lost its key: remove the bond on this side and pair again"]
                        : [
                            deleted.map {
                                "this side removed the bond (Delete Stored Link Key at frame \($0.frame)): the device was forgotten here, not on its side"
                            }
                                ?? "the bond was removed on this side (or the key store was cleared): pair again"
                        ],
                    device: peer, connection: ev.connection, fold: "\(name) \(found)"))
        }
        return out
    }

    /// What failed, as the event that shows it says: an authentication, a connection, or a link that ended with the
    /// status (the peer closing it for want of the key: the blueprobe Clip 3 log, Disconnection Complete 0x06 at 3304
    /// with no Authentication Complete).
    static func failed(_ kind: EvidenceEvent.Kind, _ name: String) -> String {
        switch kind {
        case .classicConnectionComplete: "The connection to \(name) failed"
        case .disconnectionComplete: "The link with \(name) ended, its authentication not completed"
        default: "Authentication with \(name) failed"
        }
    }
}
