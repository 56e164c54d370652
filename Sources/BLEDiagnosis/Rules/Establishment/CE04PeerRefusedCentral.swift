import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let peerRefusedCentral = FindingCode(
        "CE-04", layer: .link, severity: .error,
        title: "The peripheral dropped us right after connecting",
        explain: .init(
            meaning:
                "The peripheral ended the link within two seconds of it coming up, before anything but an MTU exchange: it rejected this central.",
            advice: "Look at the peripheral's connection policy: a whitelist, a bond it expects, or a limit on connections."),
        fold: .device, traits: [.restsOnSetup])
}

/// CE-04: the peripheral dropped the link within 2 s of connecting, before any GATT traffic (or only the MTU
/// exchange), and this side did not ask: it rejects this central. LE links only, where this side is (or may be) the
/// central: a BR/EDR peer that closes a link once a key is made or an SDP search is done ends its own business, and a
/// central dropping this peripheral rejects nothing of "this central".
struct CE04PeerRefusedCentral: DiagnosisRule {
    static let code = FindingCode.peerRefusedCentral
    static let group = RuleGroup.establishment
    static let evidence =
        "Disconnection Complete 0x13/0x05/0x15/0x1A less than 2 s after the connection, at most an MTU exchange of ATT, no local Disconnect"
    static let anchor = "none"
    static let window: Int64 = 2_000_000
    static let reasons: Set<HCIStatus> = [
        .remoteUserTerminatedConnection, .authenticationFailure, .remotePowerOff, .unsupportedRemoteFeature,
    ]

    /// At most the MTU exchange went over ATT.
    static func littleTraffic(_ d: DisconnectionStory) -> Bool { (d.connection?.attPDUs ?? 0) <= 2 }

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.disconnections.compactMap { d in
            let c = d.connection
            guard reasons.contains(d.reason), !d.byThisSide, let up = d.connectedMicroseconds, up < window,
                littleTraffic(d), c.map({ $0.isLE && $0.role != .peripheral }) ?? true
            else { return nil }
            let device = e.deviceName(c)
            return Diagnosis(
                rule: Self.code, severity: severity, frame: d.frame,
                message:
                    "\(device) dropped the link \(duration(up)) after connecting, before any GATT traffic (\(codeName(d.reason)) at frame \(d.frame)): it is rejecting this central.",
                headline: "\(device) dropped the link right after connecting",
                supporting: c.map { [CitedFrame($0.startFrame, "Connection Complete")] } ?? [],
                causes: [
                    "the peripheral accepts only bonded or accept-listed centrals", "its maximum number of connections is reached",
                    "a firmware guard, or the wrong device",
                ],
                device: c?.peerAddress, connection: c?.number, fold: "\(device)")
        }
    }
}
