import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let bondNeverEncrypted = FindingCode(
        "SEC-15", layer: .security, severity: .warning,
        title: "Bonded link never encrypted",
        explain: .init(
            meaning:
                "The device is bonded (an earlier pairing kept its keys), yet this link carried data without ever starting encryption.",
            advice:
                "Have the central encrypt bonded links on connection, and give the attributes that matter an encryption or authentication permission."
        ),
        fold: .device, traits: .weakness)
}

/// SEC-15: a link to a bonded peer (its bond made earlier in this capture, or a stored BR/EDR link key given) carried
/// data and was never encrypted: the bond protected nothing on it. Only for links the log shows from their start (one
/// that began before the log may have been encrypted before) and that ran at least 5 s: a link that ends (or that the
/// capture stops watching) a moment after it opened, as a test tool's probes do, may not have had the time.
struct SEC15BondNeverEncrypted: DiagnosisRule {
    static let code = FindingCode.bondNeverEncrypted
    static let group = RuleGroup.security
    static let evidence = "a bond with the peer (an earlier pairing with bonding, a Link Key Request Reply) and no encryption on the link"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.securedLinks.compactMap { c, record in
            guard !c.inferred, !record.everEncrypted, record.sessions.isEmpty else { return nil }
            let stored = record.storedKeyAnswers.first(where: \.found)
            guard record.bond != nil || stored != nil else { return nil }
            let carried = c.attPDUs > 0 ? c.attPDUs : c.aclPackets.total
            guard carried > 0, !(e.isAirCapture && c.linkEncryption != nil) else { return nil }
            let watched = c.endTime ?? e.lastTime
            guard watched.map { $0.microseconds(since: c.startTime) >= 5_000_000 } ?? false else { return nil }
            let device = e.deviceName(c)
            let bond =
                record.bond.map { "bonded on link #\($0.connection) (pairing at frame \($0.pairing.frame))" }
                ?? "its stored link key given at frame \(stored!.frame)"
            return Diagnosis(
                rule: Self.code, severity: severity, frame: c.startFrame,
                message:
                    "\(e.linkName(c).capitalizedFirst) is \(bond), yet it carried \(carried) \(c.attPDUs > 0 ? "ATT PDUs" : "ACL packets") and never started encryption: the bond protected nothing on it.",
                headline: "bonded link with \(device) never encrypted",
                supporting: record.bond.map { [CitedFrame($0.pairing.frame, "bond")] } ?? [],
                causes: ["the app reads and writes attributes that need no security", "the central does not re-encrypt bonded links"],
                device: c.peerAddress, connection: c.number, fold: "\(device)")
        }
    }
}
