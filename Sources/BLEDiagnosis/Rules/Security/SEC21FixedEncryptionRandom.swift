import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let fixedEncryptionRandom = FindingCode(
        "SEC-21", layer: .security, severity: .error,
        title: "BR/EDR encryption started with a fixed random number",
        explain: .init(
            meaning:
                "A link manager started BR/EDR encryption with an EN_RAND of zeros, or the same EN_RAND as an earlier session with the same device: the session key is derived from the link key, that number and the peers' addresses, so every such session of the bond gets the same key. Whoever recovers it once (with a short key, by brute force) decrypts them all: the BLUFFS attacks (CVE-2023-24023).",
            advice:
                "The controller that sent it must draw EN_RAND (and AU_RAND) from its random number generator for every session (Core Spec Vol 2, Part H); a device that accepts a key shorter than 16 bytes makes the key easy to recover. Update the controller's firmware; reject short keys (Read Encryption Key Size)."
        ),
        fold: .device, traits: .weakness)
}

/// SEC-21: LMP_start_encryption_req (Core Spec Vol 2, Part C, 4.2.5.1) with an EN_RAND of zeros, or one an earlier
/// session with the same peer already used, as a controller's LMP trace shows it: the session key (E3 of the link
/// key, EN_RAND and the COF, Vol 2, Part H, 6.4) repeats across sessions of the bond, the first step of BLUFFS (A1/A3,
/// CVE-2023-24023). The BLUFFS Pixel Buds captures: this side's EN_RAND is zeros from the second session on (876,
/// 1255, …), after an AU_RAND of zeros and a 7-byte key proposal.
struct SEC21FixedEncryptionRandom: DiagnosisRule {
    static let code = FindingCode.fixedEncryptionRandom
    static let group = RuleGroup.security
    static let evidence = "LMP_start_encryption_req's EN_RAND in a controller's LMP trace (PacketLogger 0x0A/0x0B, H4 type 0x07)"
    static let anchor = "BLUFFS (CVE-2023-24023)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var seen: [String: [[UInt8]: Int]] = [:]
        var found: [String: Diagnosis] = [:]
        var order: [String] = []
        for ev in e.events {
            guard case .lmpStartEncryption(let sender, let random) = ev.kind, let n = ev.connection,
                let c = e.connections.first(where: { $0.number == n })
            else { continue }
            let peer = c.peerAddress ?? "connection \(n)"
            let zeros = random.allSatisfy { $0 == 0 }
            let earlier = seen[peer]?[random]
            if seen[peer]?[random] == nil { seen[peer, default: [:]][random] = ev.frame }
            guard zeros || earlier != nil else { continue }
            if var d = found[peer] {
                d.occurrences.append(ev.frame)
                found[peer] = d
                continue
            }
            let who = sender == .local ? "this side's link manager" : "the peer's link manager"
            let what = zeros ? "an EN_RAND of zeros" : "the EN_RAND of the session started at frame \(earlier!)"
            var d = Diagnosis(
                rule: Self.code, severity: severity, frame: ev.frame,
                message:
                    "\(e.linkName(c).capitalizedFirst): \(who) started encryption with \(what) (LMP_start_encryption_req at frame \(ev.frame)): every session of the bond that does so runs with the same key, so one recovered key decrypts them all; the shape of BLUFFS (CVE-2023-24023).",
                headline: "fixed EN_RAND with \(e.deviceName(c))",
                supporting: earlier.map { [CitedFrame($0, "the same EN_RAND")] } ?? [],
                causes: [
                    "a controller under attack or patched to downgrade (BLUFFS)", "a controller without a working random number generator",
                ], device: c.peerAddress, connection: c.number, fold: peer)
            d.occurrences = [ev.frame]
            found[peer] = d
            order.append(peer)
        }
        return order.compactMap { found[$0] }
    }
}
