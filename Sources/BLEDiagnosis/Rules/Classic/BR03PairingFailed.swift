import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let classicPairingFailed = FindingCode(
        "BR-03", layer: .classic, severity: .error,
        title: "A BR/EDR pairing (Secure Simple Pairing or legacy PIN) failed",
        explain: .init(
            meaning:
                "A Classic pairing (Secure Simple Pairing, or a legacy PIN) ran and failed: the user rejected or mistyped, the devices' IO capabilities could not agree, or the pairing timed out.",
            advice:
                "Read the chain the finding cites (Link Key Request, IO capabilities, Simple Pairing Complete): retry the pairing with both devices in pairing mode and the user confirming on both sides."
        ),
        fold: .device)
}

/// BR-03: a BR/EDR pairing failed: Simple Pairing Complete with an error after the IO capabilities, or Authentication
/// Complete with an error after a PIN Code Request (legacy pairing), cited with the chain that led to it (Link Key
/// Request → Negative Reply → IO Capability Request/Response → Simple Pairing Complete).
struct BR03PairingFailed: DiagnosisRule {
    static let code = FindingCode.classicPairingFailed
    static let group = RuleGroup.classic
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
                    rule: Self.code, severity: severity, frame: ev.frame,
                    message:
                        "\(kind) with \(name) failed (\(codeName(status)) at frame \(ev.frame))\(noKey ? " after this side said it had no link key" : ""): the link stays unauthenticated.",
                    headline: "\(kind.lowercased()) with \(name) failed (\(hex(status.rawValue)))",
                    supporting: chain.compactMap { c in c.kind.chainText.map { CitedFrame(c.frame, $0) } },
                    causes: causes(status), device: peer, connection: number, fold: "\(name) \(status.rawValue)"))
        }
        return out
    }

    static func isSimplePairing(_ k: EvidenceEvent.Kind) -> Bool { if case .simplePairingComplete = k { true } else { false } }

    static func causes(_ status: HCIStatus) -> [String] {
        switch status {
        case .authenticationFailure: ["the numeric comparison or passkey was rejected or mistyped", "the peer's stack refused the pairing"]
        case .pinOrKeyMissing: ["a link key is missing on one side (bond removed)"]
        case .pairingNotAllowed: ["pairing is not allowed by the peer (0x18)"]
        case .pairingWithUnitKeyNotSupported: ["the peer does not accept pairing with a unit key (0x29)"]
        case .simplePairingNotSupportedByHost: ["Simple Pairing is not supported by the host (0x37)"]
        case .connectionTimeout, .llResponseTimeout: ["the user did not confirm in time, or the link was lost during pairing"]
        default: ["see the status"]
        }
    }
}
