import BLECore
import BLEProtocols

// MARK: - The "Security:" line: the worst security findings first, then how the links were secured

extension Story {
    /// The security sentences (``security(_:)``), as one "Security:" line led by the worst security and link-layer
    /// compliance findings (severity first, at most three), so the first screen answers "how was it secured, and what
    /// is weak".
    static func security(_ e: Evidence, findings: [Diagnosis], tight: Bool = false) -> [StorySentence] {
        let sentences = security(e, tight: tight)
        let risks = findings.filter { $0.isSecurity && $0.severity >= .warning }
            .enumerated().sorted { ($0.element.severity, -$0.offset) > ($1.element.severity, -$1.offset) }.map(\.element)
        guard !sentences.isEmpty || !risks.isEmpty else { return [] }
        var text = "Security: "
        if !risks.isEmpty {
            let shown = risks.prefix(3).map { "\($0.headline) (\($0.rule))" }
            text += shown.joined(separator: "; ").capitalizedFirst + (risks.count > 3 ? "; \(risks.count - 3) more" : "") + ". "
        }
        // One line: the BR/EDR sentence's own prefix gives way to the line's.
        let own = "BR/EDR security: "
        text += sentences.map { $0.text.hasPrefix(own) ? "BR/EDR: " + $0.text.dropFirst(own.count) : $0.text }.joined(separator: " ")
        let frames = sentences.flatMap(\.frames) + risks.prefix(3).map(\.frame)
        return [StorySentence(.security, text, frames: frames)]
    }

    /// ` (LE legacy Just Works, bonding)`: the association model of each pairing the links' records hold, folded;
    /// nil when no record names one.
    /// `, the peer answered No Bonding: no keys stored, this side asked for Secure Connections: the peer's answer made it
    /// legacy`: what the Pairing Response refused of the request (the NimBLE door lock's legacy capture, 4670/4675:
    /// AuthReq 0x0d answered 0x00), the model SEC-13's MITM wording sets.
    static func declined(_ e: Evidence, _ p: SecurityPairing) -> String {
        let initiator = p.initiator ?? .local
        let responder: EvidenceEvent.Sender = initiator == .local ? .peer : .local
        var text = ""
        if p.bondingDeclined { text += ", \(e.side(responder)) answered No Bonding: no keys stored" }
        if p.secureConnectionsDeclined {
            text += ", \(e.side(initiator)) asked for Secure Connections: \(e.side(responder))'s answer made it legacy"
        }
        return text
    }

    /// `this side's user confirmed after 23.2 s (13453 → 13820)`; under a second no person answered: `this side
    /// confirmed at once (0 ms, 148 → 149: its host, no user)` (a car kit's auto-confirm, Android's Just Works consent
    /// skipped), inferred from the time alone.
    static func userAnswerText(_ a: SecurityPairing.UserAnswer) -> String {
        let frames = "\(a.requestFrame) → \(a.frame)"
        guard !a.answeredByHost else {
            return "this side \(a.verb) at once (\(BLEAnalysis.duration(a.microseconds)), \(frames): its host, no user)"
        }
        return "this side's user \(a.verb) after \(BLEAnalysis.duration(a.microseconds)) (\(frames))"
    }

    static func pairingMethods(_ e: Evidence, le: Bool) -> String? {
        var names: [String] = []
        for c in e.connections where c.isLE == le {
            for p in c.machine.securityRecord.pairings {
                guard let procedure = p.procedure else { continue }
                if procedure == .crossTransport {
                    names.append("\(p.methodText), frame \(p.frame)")
                    continue
                }
                var name = procedure.rawValue + (p.model.map { " \($0.rawValue)" } ?? "")
                if let roles = p.passkey { name += ", " + e.passkeyText(roles) }
                if let type = p.linkKeyType { name += ", \(type)" }
                if p.debugKeyFrame != nil { name += ", debug key" }
                if let a = p.userAnswer { name += ", " + Self.userAnswerText(a) }
                name += Self.declined(e, p)
                // A zero IRK tells a security reviewer the device is trackable (SEC-20 says it at info, under the fold).
                let zero = p.identities.filter(\.value.irkIsZero).keys.sorted { $0.rawValue < $1.rawValue }
                if zero.count == 2 { name += ", all-zero IRKs: no privacy" }
                if zero.count == 1 {
                    name += ", all-zero IRK from \(e.side(zero[0])): no privacy"
                }
                names.append(name)
            }
        }
        guard !names.isEmpty else { return nil }
        return Set(names).count == 1 ? " (\(names[0]))" : " (\(tally(names)))"
    }

    /// `16-byte keys (from the pairing)`, `key size 7 (Read Encryption Key Size), E0`, `key size not in the log`: the key
    /// sizes in force on the links' encrypted sessions and where they come from; nil when no session came on.
    static func keySizes(_ e: Evidence, le: Bool) -> String? {
        var sizes: [Int: String] = [:], unknown = 0
        var algorithms = Set<String>()
        for c in e.connections where c.isLE == le {
            for s in c.machine.securityRecord.sessions where s.onFrame != nil {
                if let a = s.algorithm(isLE: c.isLE), !le { algorithms.insert(a) }
                guard let size = s.keySize else {
                    unknown += 1
                    continue
                }
                let from: String
                switch s.keySizeSource {
                case .observed(let f)?: from = "stated at \(f)"
                case .inferred(.bondKeySize)?: from = "from the bond's pairing"
                default: from = "from the pairing"
                }
                if sizes[size] == nil { sizes[size] = from }
            }
        }
        guard !sizes.isEmpty || unknown > 0 else { return nil }
        var parts = sizes.keys.sorted().map { "\($0)-byte key (\(sizes[$0]!))" }
        if unknown > 0 { parts.append(sizes.isEmpty ? "key size not in the log" : "\(unknown) with the key size not in the log") }
        if !algorithms.isEmpty { parts.append(algorithms.sorted().joined(separator: " and ")) }
        return parts.joined(separator: ", ")
    }

    /// `a stored key of an LE Secure Connections pairing (inferred: EDIV and Rand 0 at 689)`: on LE links that
    /// encrypted with a key no pairing in the capture made, which procedure made it, as the starts name it
    /// (``EncryptionSession/storedKeyProcedure``); nil when none did.
    static func storedKeys(_ e: Evidence) -> String? {
        var frames: [PairingProcedure: [Int]] = [:]
        for c in e.connections where c.isLE && c.machine.securityRecord.bond == nil {
            for s in c.machine.securityRecord.sessions where s.onFrame != nil {
                guard let (procedure, frame) = s.storedKeyProcedure else { continue }
                frames[procedure, default: []].append(frame)
            }
        }
        guard !frames.isEmpty else { return nil }
        let parts = [PairingProcedure.leSecureConnections, .leLegacy].compactMap { p -> String? in
            guard let at = frames[p] else { return nil }
            let shown = at.prefix(3).map(String.init).joined(separator: ", ") + (at.count > 3 ? " and \(at.count - 3) more" : "")
            return p == .leSecureConnections
                ? "a stored key of an LE Secure Connections pairing (inferred: EDIV and Rand 0 at \(shown))"
                : "a stored LE legacy key (inferred: non-zero EDIV and Rand at \(shown))"
        }
        return parts.joined(separator: " and ")
    }
}
