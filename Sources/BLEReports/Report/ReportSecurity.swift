import BLEAnalysis
import BLECore

/// The report's Security section: one row per link with its pairings, its encryption sessions (each with its key size
/// in force and where that comes from) and its security findings (docs/security.md). Markdown and HTML share the cells.
enum ReportSecurity {
    struct Row {
        var link: String
        var addresses: String
        var pairing: String
        var encryption: String
        var findings: String
    }

    static func rows(_ f: FileAnalysis) -> [Row] {
        let mine = f.diagnosis.findings.filter(\.isSecurity)
        return f.connections.compactMap { c in
            let r = c.machine.securityRecord
            let findings = mine.filter { $0.connection == c.number }
            guard !r.pairings.isEmpty || !r.sessions.isEmpty || !findings.isEmpty else { return nil }
            let link = "#\(c.number) \(c.peerIdentity ?? c.peerAddress ?? "") (\(c.isLE ? "LE" : "BR/EDR"))"
            let pairing = r.pairings.map(pairingText).joined(separator: "; ")
            let encryption = r.sessions.map { sessionText($0, isLE: c.isLE) }.joined(separator: "; ")
            let said = findings.map { "\($0.rule) \($0.severity.rawValue): \($0.headline)" }.joined(separator: "; ")
            var pairingCell = pairing.isEmpty ? "none in the log" : pairing
            pairingCell += r.hostSettingsNote
            return Row(
                link: link, addresses: addressesText(r, isLE: c.isLE), pairing: pairingCell,
                encryption: encryption.isEmpty ? "never" : encryption,
                findings: said)
        }
    }

    /// `peer random static C0:11:22:33:44:55 (LE Connection Complete at 5); this side not in the log`; BR/EDR links
    /// (always their public BD_ADDR) none.
    static func addressesText(_ r: LinkSecurity, isLE: Bool) -> String {
        guard isLE else { return "" }
        let sides = [("peer", r.addresses[.peer]), ("this side", r.addresses[.local])]
        return sides.map { side, a in "\(side) " + (a?.description ?? "not in the log") }.joined(separator: "; ")
    }

    /// `LE Secure Connections Numeric Comparison at 40, MITM, bonding, 16-byte maximum, keys EncKey|IdKey both ways,
    /// completed at 52`.
    static func pairingText(_ p: SecurityPairing) -> String {
        var parts = ["\(p.procedure?.rawValue ?? "pairing") \(p.model?.rawValue ?? "(method not in the log)") at \(p.frame)"]
        if p.mitmRequested { parts.append(p.authenticated == true ? "MITM" : "MITM asked, not achieved") }
        if p.bonding { parts.append("bonding") }
        if let k = p.keySize { parts.append("\(k)-byte maximum") }
        if let t = p.linkKeyType { parts.append(t.description) }
        if let d = p.debugKeyFrame { parts.append("debug key at \(d)") }
        let keys = [("central", p.distributed[.local]), ("peripheral", p.distributed[.peer])].compactMap { side, k in
            k.map { "\(side) \($0)" }
        }
        if !keys.isEmpty { parts.append("keys: " + keys.joined(separator: ", ")) }
        switch p.outcome {
        case .unfinished: parts.append("no end in the log")
        case .completed(let f): parts.append("completed at \(f)")
        case .failed(let f, let by, let reason):
            parts.append("failed at \(f)" + (by.map { " (\($0 == .peer ? "the peer" : "this side"): \(reason))" } ?? " (\(reason))"))
            if p.requiresSecureConnections {
                parts.append(
                    "the responder requires Secure Connections (SC Only mode, Core Vol 3 Part H 2.3.5.1; inferred: the Pairing Request at \(p.frame) without the SC flag refused at \(f))"
                )
            }
        }
        return parts.joined(separator: ", ")
    }

    /// `on at 150, AES-CCM, 16 bytes (inferred: …), stored key, EDIV 0x1234`.
    static func sessionText(_ s: EncryptionSession, isLE: Bool) -> String {
        var parts: [String] = []
        if let on = s.onFrame { parts.append("on at \(on)") } else if let start = s.startFrame { parts.append("started at \(start)") }
        if let failure = s.failure { parts.append("refused: \(failure)") }
        if let a = s.algorithm(isLE: isLE) { parts.append(a) }
        if s.onFrame != nil {
            parts.append(s.keySize.map { "\($0) bytes (\(s.keySizeSource?.description ?? ""))" } ?? "key size not in the log")
        }
        switch s.origin {
        case .pairing(let f)?: parts.append("key of the pairing at \(f)")
        case .stored?: parts.append("stored key")
        case nil: break
        }
        if !s.zeroDiversifier { parts.append("EDIV \(hex(s.ediv ?? 0, width: 4))") }
        if !s.pauseFrames.isEmpty { parts.append("paused at \(s.pauseFrames.map(String.init).joined(separator: ", "))") }
        if !s.refreshFrames.isEmpty { parts.append("refreshed at \(s.refreshFrames.map(String.init).joined(separator: ", "))") }
        if let off = s.offFrame, s.failure == nil { parts.append("off at \(off)") }
        return parts.joined(separator: ", ")
    }

    /// `### Security`: the rows as a Markdown table and the address rotation seen; empty when no link was paired or
    /// encrypted and no address rotated.
    static func markdown(_ f: FileAnalysis) -> String {
        let rows = rows(f), privacy = privacyLines(f.addressRotation)
        guard !rows.isEmpty || !privacy.isEmpty else { return "" }
        var out = "\n### Security\n\n"
        if !rows.isEmpty {
            out += MarkdownReport.header(["link", "addresses", "pairing", "encryption (key size in force)", "findings"])
            for r in rows { out += MarkdownReport.row([r.link, r.addresses, r.pairing, r.encryption, r.findings]) }
        }
        if !privacy.isEmpty { out += (rows.isEmpty ? "" : "\n") + privacy.map { "- " + $0 + "\n" }.joined() }
        return out
    }

    /// `<h3>Security</h3>`, its table and the address rotation seen; empty as ``markdown(_:)``.
    static func html(_ f: FileAnalysis) -> String {
        let rows = rows(f), privacy = privacyLines(f.addressRotation)
        guard !rows.isEmpty || !privacy.isEmpty else { return "" }
        var out = "<h3>Security</h3>"
        if !rows.isEmpty {
            out += "<table><tr><th>link</th><th>addresses</th><th>pairing</th><th>encryption (key size in force)</th><th>findings</th></tr>"
            for r in rows {
                out += "<tr><td>\(HTMLReport.esc(r.link))</td><td>\(HTMLReport.esc(r.addresses))</td>"
                out += "<td>\(HTMLReport.esc(r.pairing))</td><td>\(HTMLReport.esc(r.encryption))</td>"
                out += "<td>\(HTMLReport.esc(r.findings))</td></tr>"
            }
            out += "</table>"
        }
        if !privacy.isEmpty { out += "<ul>" + privacy.map { "<li>\(HTMLReport.esc($0))</li>" }.joined() + "</ul>" }
        return out
    }

    /// `This side set 5 resolvable private addresses (LE Set Random Address at 82, 3096, …): changed 4 times, every
    /// ~15 min (median)`; `Peer F0:… used 2 resolvable private addresses: 5B:… (#1 at 12), 6C:… (#3 at 80)`.
    static func privacyLines(_ r: AddressRotation) -> [String] {
        var lines: [String] = []
        let own = r.busiestOwn
        if !own.isEmpty {
            let frames = own.prefix(8).map { String($0.frame) }.joined(separator: ", ") + (own.count > 8 ? ", …" : "")
            let plural = own.count == 1 ? "" : "es"
            var line = "This side set \(own.count) resolvable private address\(plural) (LE Set Random Address at \(frames))"
            if let median = r.ownMedianIntervalSeconds {
                line += ": changed \(own.count - 1) time\(own.count == 2 ? "" : "s"), every ~\(durationText(median)) (median)"
            }
            lines.append(line)
        }
        for p in r.peers {
            let used = p.addresses.map { "\($0.address) (#\($0.connection) at \($0.frame))" }.joined(separator: ", ")
            lines.append("Peer \(p.identity) used \(p.addresses.count) resolvable private addresses: \(used)")
        }
        return lines
    }

    /// `15 min`, `40 s`, `2.5 h`.
    static func durationText(_ seconds: Double) -> String {
        if seconds < 120 { return "\(Int(seconds.rounded())) s" }
        if seconds < 7200 { return "\(Int((seconds / 60).rounded())) min" }
        return String(fractionDigits: 1, seconds / 3600) + " h"
    }
}
