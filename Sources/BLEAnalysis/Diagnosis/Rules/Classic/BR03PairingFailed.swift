import BLECore
import BLEProtocols

/// BR-03: a BR/EDR pairing failed: Simple Pairing Complete with an error after the IO capabilities, or Authentication
/// Complete with an error after a PIN Code Request (legacy pairing), cited with the chain that led to it (Link Key
/// Request → Negative Reply → IO Capability Request/Response → Simple Pairing Complete).
struct BR03PairingFailed: DiagnosisRule {
    static let id = "BR-03"
    static let group = RuleGroup.classic
    static let severity = DiagnosisSeverity.error
    static let title = "A BR/EDR pairing (Secure Simple Pairing or legacy PIN) failed"
    static let evidence =
        "Simple Pairing Complete (0x36) status ≠ 0, or Authentication Complete (0x06) status ≠ 0 after IO Capability Request/Response (0x31/0x32) or PIN Code Request (0x16); the Link Key Request (0x17) and the host's answer before"
    static let anchor = "hcidoc (LinkKeyMismatch reads the same events)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var out: [Diagnosis] = []
        for ev in e.events {
            let peer: String?, status: HCIStatus
            switch ev.kind {
            case .simplePairingComplete(let p, let s) where s != .success: (peer, status) = (p, s)
            case .authenticationComplete(_, let s) where s != .success: (peer, status) = (e.classicPeer(ev.connection), s)
            default: continue
            }
            let number = ev.connection ?? e.classicConnection(peer: peer, before: ev.frame)
            let chain = e.authenticationChain(peer: peer, connection: number, before: ev.frame)
            let paired = chain.contains {
                switch $0.kind {
                case .ioCapabilityExchange, .pinCodeRequest: true
                default: false
                }
            }
            // An Authentication Complete failing without a pairing is BR-04's (a stored key missing or refused); after a
            // failed Simple Pairing Complete its chain is empty (the pairing is this rule's one finding).
            guard paired || isSimplePairing(ev.kind) else { continue }
            let legacy = chain.contains { if case .pinCodeRequest = $0.kind { true } else { false } }
            let kind = legacy ? "Legacy (PIN) pairing" : "Secure Simple Pairing"
            let noKey = chain.contains { if case .linkKeyAnswer(_, false) = $0.kind { true } else { false } }
            let name = peer ?? e.deviceName(e.connection(ev.connection))
            out.append(
                Diagnosis(
                    rule: id, severity: severity, frame: ev.frame,
                    message:
                        "\(kind) with \(name) failed (\(codeName(status)) at frame \(ev.frame))\(noKey ? " after this side said it had no link key" : ""): the link stays unauthenticated.",
                    headline: "\(kind.lowercased()) with \(name) failed (\(hex(status.rawValue)))",
                    supporting: chain.compactMap { c in c.kind.chainText.map { CitedFrame(c.frame, $0) } },
                    causes: causes(status), device: peer, connection: number, foldKey: "BR-03 \(name) \(status.rawValue)"))
        }
        return out
    }

    static func isSimplePairing(_ k: EvidenceEvent.Kind) -> Bool { if case .simplePairingComplete = k { true } else { false } }

    static func causes(_ status: HCIStatus) -> [String] {
        switch status.rawValue {
        case 0x05: ["the numeric comparison or passkey was rejected or mistyped", "the peer's stack refused the pairing"]
        case 0x06: ["a link key is missing on one side (bond removed)"]
        case 0x18: ["pairing is not allowed by the peer (0x18)"]
        case 0x29: ["the peer does not accept pairing with a unit key (0x29)"]
        case 0x37: ["Simple Pairing is not supported by the host (0x37)"]
        case 0x08, 0x22: ["the user did not confirm in time, or the link was lost during pairing"]
        default: ["see the status"]
        }
    }
}
