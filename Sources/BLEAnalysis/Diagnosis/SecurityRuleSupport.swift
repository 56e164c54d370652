import BLECore
import BLEProtocols

extension Evidence {
    /// The links and their security records (``LinkSecurity``), in the order they started.
    package var securedLinks: [(connection: Connection, record: LinkSecurity)] {
        connections.map { ($0, $0.machine.securityRecord) }
    }

    /// A link's name in a security sentence: `link #2 with C0:11:22:33:44:55`.
    package func linkName(_ c: Connection) -> String { "link #\(c.number) with \(deviceName(c))" }
}

extension EncryptionSession {
    /// The frame a finding about its key size cites: where the size was stated, else where encryption came on.
    package var keySizeFrame: Int? { keySizeSource?.frame.flatMap { $0 > 0 ? $0 : nil } ?? onFrame ?? startFrame }

    /// `Read Encryption Key Size at frame 120`, `inferred: the smaller Maximum Encryption Key Size …`.
    package var keySizeProvenance: String {
        guard let source = keySizeSource else { return "not in the log" }
        return source.description
    }
}

extension SecurityPairing {
    /// `LE legacy Just Works`, `Secure Simple Pairing Numeric Comparison`, `LE pairing (method not in the log)`.
    public var methodText: String {
        if procedure == .crossTransport { return "LE keys derived from the BR/EDR link key (CTKD)" }
        let procedure = procedure?.rawValue ?? "pairing"
        return model.map { "\(procedure) \($0.rawValue)" } ?? "\(procedure) (method not in the log)"
    }
}

extension Connection {
    /// The peer's address is random and resolvable (its two top bits 01, Core Spec Vol 6, Part B, 1.3.2.2) and no IRK
    /// named its identity: the same device may come back under another address.
    package var peerIsUnresolvedRPA: Bool {
        guard peerIdentity == nil, isLE, let a = peerAddress, let first = a.first?.hexDigitValue else { return false }
        let random = peerAddressType.map { $0.lowercased().contains("random") } ?? true
        return random && first >> 2 == 1
    }
}
