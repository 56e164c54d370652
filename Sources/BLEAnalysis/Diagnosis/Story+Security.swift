import BLECore
import BLEProtocols

// MARK: - Pairing and encryption, data, what the log cannot show

extension Story {
    /// LE pairing and encryption in one sentence, BR/EDR authentication in another; `tight`: the BR/EDR one without the
    /// frames of its routine lists (``Story/tight``).
    static func security(_ e: Evidence, tight: Bool = false) -> [StorySentence] {
        var out: [StorySentence] = []
        if e.connections.contains(where: \.isLE) { out.append(leSecurity(e)) }
        if let classic = classicSecurity(e, tight: tight) { out.append(classic) }
        return out
    }

    static func leSecurity(_ e: Evidence) -> StorySentence {
        let le = e.connections.filter(\.isLE)
        let leNumbers = Set(le.map(\.number))
        let attempts = PairingAttempt.all(e.events) { $0.map(leNumbers.contains) ?? e.isAirCapture }
        let pairings = attempts.filter(\.answered).map { $0.requests[0] }
        let unanswered = attempts.filter { !$0.answered }.flatMap(\.requests)
        var completed: [Int] = [], failed: [(String, [Int])] = []
        var encrypted: [Int: Int] = [:], starts: [(connection: Int?, frame: Int)] = [], refused: [(String, [Int])] = []
        for ev in e.events where ev.connection.map(leNumbers.contains) ?? e.isAirCapture {
            switch ev.kind {
            case .keysDistributed: completed.append(ev.frame)
            case .pairingFailed(_, let reason): failed.append(("failed (\(reason))", [ev.frame]))
            case .encryptionStart: starts.append((ev.connection, ev.frame))
            case .linkLayerRejected(_, _, let reason, _) where starts.contains(where: { $0.connection == ev.connection }):
                // LL_REJECT_(EXT_)IND ends the encryption procedure it answers (Core Spec Vol 6, Part B, 5.1.3.1).
                refused.append(("refused with \(reason.map(codeName) ?? "no reason")", [ev.frame]))
                starts.removeAll { $0.connection == ev.connection }
            case .encryptionChange(_, let status, let on):
                if status == .success && on, let n = ev.connection, encrypted[n] == nil { encrypted[n] = ev.frame }
                if status != .success { refused.append(("refused with \(codeName(status))", [ev.frame])) }
                starts.removeAll { $0.connection == ev.connection }
            default: break
            }
        }
        for c in le where e.isAirCapture {
            if let enc = c.linkEncryption, encrypted[c.number] == nil { encrypted[c.number] = enc.encryptedFrom }
        }
        // A start whose link the capture shows encrypted (its PDUs, not an event) ended well.
        starts.removeAll { s in s.connection.map { encrypted[$0] != nil } ?? false }
        var parts: [String] = []
        if pairings.isEmpty && completed.isEmpty && failed.isEmpty {
            // A Pairing Request nobody answered is no pairing: said as what happened.
            parts.append(
                unanswered.isEmpty
                    ? "no LE pairing in the log"
                    : "LE pairing asked \(unanswered.count == 1 ? "once" : "\(unanswered.count) times") (\(list(unanswered))), never answered"
            )
        } else {
            var outcomes = failed.map { "\($0.0) at \($0.1[0])" }
            if !completed.isEmpty { outcomes.insert("keys distributed at \(completed[0])" + keysBySide(e, from: completed[0]), at: 0) }
            parts.append(
                "\(plural(max(pairings.count, 1), "LE pairing"))\(pairingMethods(e, le: true) ?? pairingKinds(e, leNumbers))"
                    + (outcomes.isEmpty ? "" : ": " + outcomes.joined(separator: ", ")))
            if !unanswered.isEmpty {
                parts.append("\(plural(unanswered.count, "Pairing Request")) never answered (\(list(unanswered)))")
            }
        }
        // A link that started before the log may have been encrypted before it: the log cannot say it never was.
        let before = le.filter { $0.inferred && encrypted[$0.number] == nil }
        let seen = le.count - before.count
        if encrypted.isEmpty && starts.isEmpty && seen > 0 {
            parts.append(seen == 1 ? "the link was never encrypted" : "none of the \(seen) LE links was encrypted")
        } else if !encrypted.isEmpty {
            let frames = encrypted.values.sorted().prefix(6).map(String.init).joined(separator: ", ")
            parts.append("\(encrypted.count) of \(le.count) LE links encrypted (from \(frames))")
        }
        if !before.isEmpty {
            parts.append(
                before.count == 1
                    ? "whether the link that started before the log was encrypted cannot be seen"
                    : "whether the \(before.count) links that started before the log were encrypted cannot be seen")
        }
        if !encrypted.isEmpty, let sizes = keySizes(e, le: true) { parts.append(sizes) }
        if !encrypted.isEmpty, let stored = storedKeys(e) { parts.append(stored) }
        parts += encryptionOutcomes(starts: starts.map(\.frame), refused: refused, air: e.isAirCapture)
        if let clear = clearDuringPairing(le) { parts.append(clear) }
        let text = parts.joined(separator: "; ").capitalizedFirst + "."
        let frames = pairings + unanswered + completed + failed.flatMap(\.1) + encrypted.values + starts.map(\.frame) + refused.flatMap(\.1)
        return StorySentence(.security, text, frames: frames)
    }

    /// `3 notifications went in the clear during the pairing, before encryption (4741, 4807, 4874)`: what the links
    /// carried between a Pairing Request and their encryption (``LinkSecurity/valuesInClearWhilePairing``; the NimBLE
    /// door lock's legacy capture).
    static func clearDuringPairing(_ le: [Connection]) -> String? {
        let clear = le.map { $0.machine.securityRecord.valuesInClearWhilePairing }.filter { $0.count > 0 }
        guard !clear.isEmpty else { return nil }
        let count = clear.reduce(0) { $0 + $1.count }
        let frames = clear.flatMap(\.frames).prefix(3).map(String.init).joined(separator: ", ")
        return
            "\(plural(count, "notification")) went in the clear during the pairing, before encryption (\(frames)\(count > 3 ? ", …" : ""))"
    }

    /// ` (LTK from the peer; IRK, CSRK from this side)`: the keys of the distribution that starts at `frame`, by who sent
    /// them (Core Vol 3 Part H 3.6: Encryption Information with Central Identification is the LTK with its EDIV and Rand,
    /// Identity Information the IRK, Signing Information the CSRK), up to the link's next Pairing Request.
    static func keysBySide(_ e: Evidence, from frame: Int) -> String {
        guard let first = e.first(after: frame - 1, where: { if case .keysDistributed = $0.kind { true } else { false } }) else {
            return ""
        }
        var keys: [EvidenceEvent.Sender: SMPKeyDistribution] = [:]
        for ev in e.events where ev.frame >= frame && ev.connection == first.connection {
            if case .pairingRequest = ev.kind { break }
            if case .keysDistributed(let sender, let key) = ev.kind { keys[sender, default: []].formUnion(key) }
        }
        func names(_ k: SMPKeyDistribution) -> String {
            [(SMPKeyDistribution.encKey, "LTK"), (.idKey, "IRK"), (.signKey, "CSRK")].filter { k.contains($0.0) }.map(\.1)
                .joined(separator: ", ")
        }
        let who: [(EvidenceEvent.Sender, String)] =
            e.isAirCapture ? [(.peer, "the peripheral"), (.local, "the central")] : [(.peer, "the peer"), (.local, "this side")]
        let parts = who.compactMap { side, name in keys[side].map { "\(names($0)) from \(name)" } }
        return parts.isEmpty ? "" : " (" + parts.joined(separator: "; ") + ")"
    }

    /// Encryption starts the capture shows no end of, and refusals (the same one repeated is said once, with how often: a
    /// central retrying with a key the peripheral lacks).
    static func encryptionOutcomes(starts: [Int], refused: [(String, [Int])], air: Bool) -> [String] {
        var parts: [String] = []
        if !starts.isEmpty {
            let frames =
                starts.count <= 4
                ? starts.map(String.init).joined(separator: ", ")
                : "\(starts[0]), \(starts[1]), \(starts[2]) and \(starts.count - 3) more"
            parts.append(
                air
                    ? "encryption started at \(frames) (LL_ENC_REQ) and the capture shows no end of it"
                    : "LE Start Encryption at \(frames) got no Encryption Change")
        }
        if !refused.isEmpty {
            var order: [String] = [], first: [String: Int] = [:], times: [String: Int] = [:]
            for (what, frames) in refused {
                if first[what] == nil {
                    order.append(what)
                    first[what] = frames[0]
                }
                times[what, default: 0] += 1
            }
            parts.append(
                order.map { w in "encryption \(w) at \(first[w]!)" + (times[w]! > 1 ? " (\(times[w]!) times)" : "") }
                    .joined(separator: ", "))
        }
        return parts
    }

    /// ` (legacy)`, ` (LE Secure Connections)`: each Pairing Request with the Pairing Response that answers it; LE Secure
    /// Connections when both set the SC bit (Core Spec Vol 3, Part H, 2.3.5.6: otherwise legacy pairing is used).
    static func pairingKinds(_ e: Evidence, _ leNumbers: Set<Int>) -> String {
        var pending: [Int?: SMPAuthReq] = [:]
        var kinds: [String] = []
        for ev in e.events where ev.connection.map(leNumbers.contains) ?? e.isAirCapture {
            switch ev.kind {
            case .pairingRequest(_, let a): pending[ev.connection] = a
            case .pairingResponse(_, let b):
                guard let a = pending.removeValue(forKey: ev.connection) else { continue }
                let sc = a.contains(.secureConnections) && b.contains(.secureConnections)
                kinds.append(sc ? "LE Secure Connections" : "legacy")
            default: break
            }
        }
        guard !kinds.isEmpty else { return "" }
        return Set(kinds).count == 1 ? " (\(kinds[0]))" : " (\(tally(kinds)))"
    }

    /// `BR/EDR: 2 links authenticated with a stored link key (Link Key Request Reply at 74, 147), 2 encrypted`.
    static func classicSecurity(_ e: Evidence, tight: Bool = false) -> StorySentence? {
        let classicNumbers = Set(e.connections.filter(\.isBREDR).map(\.number))
        var stored: [Int] = [], missing: [Int] = [], pairedSSP: [Int] = [], legacy: [Int] = [], newKeys: [Int] = []
        var failures: [(String, [Int])] = [], encrypted: [Int] = [], deleted: [(peer: String, frame: Int)] = [], pairedWith: [String] = []
        for ev in e.events {
            switch ev.kind {
            case .linkKeyAnswer(_, true): stored.append(ev.frame)
            case .linkKeyAnswer(let peer, false):
                missing.append(ev.frame)
                // The key this side itself deleted before (BR-04's reading): what the missing key comes from.
                if missing.count <= 4, let d = e.keyDeleted(for: peer, before: ev.frame),
                    !deleted.contains(where: { $0.frame == d.frame })
                {
                    deleted.append((peer, d.frame))
                }
            case .ioCapabilityExchange(let peer, .local):
                pairedSSP.append(ev.frame)
                pairedWith.append(peer)
            case .pinCodeRequest: legacy.append(ev.frame)
            case .linkKeyCreated: newKeys.append(ev.frame)
            case .simplePairingComplete(_, let status) where status != .success:
                failures.append(("Simple Pairing failed (\(codeName(status)))", [ev.frame]))
            case .authenticationComplete(_, let status) where status != .success:
                failures.append(("authentication failed (\(codeName(status)))", [ev.frame]))
            case .encryptionChange(_, let status, let on) where ev.connection.map(classicNumbers.contains) ?? false:
                if status == .success && on {
                    encrypted.append(ev.frame)
                } else if status != .success {
                    failures.append(("encryption failed (\(codeName(status)))", [ev.frame]))
                }
            default: break
            }
        }
        // A link that came up encrypted says so in its Connection Complete, with no Encryption Change (7.7.3).
        for c in e.connections where c.isBREDR {
            if c.machine.securityRecord.sessions.contains(where: { $0.startFrame == nil && $0.onFrame == c.startFrame }) {
                encrypted.append(c.startFrame)
            }
        }
        encrypted.sort()
        guard !(stored + missing + pairedSSP + legacy + newKeys + encrypted).isEmpty || !failures.isEmpty else {
            return unsecuredClassic(e)
        }
        var parts: [String] = []
        // Tight: the routine lists (who authenticated, the stored keys given, the encryptions) as counts alone.
        func cited(_ frames: [Int]) -> String { tight ? "" : " (\(brief(frames)))" }
        let started = authenticationStarts(e, tight: tight)
        if let started { parts.append(started.text) }
        if !stored.isEmpty { parts.append("stored link key given \(plural(stored.count, "time"))" + cited(stored)) }
        if !missing.isEmpty {
            let peers = Set(deleted.map(\.peer))
            let why =
                deleted.isEmpty
                ? ""
                : ": this side had deleted the stored key of \(peers.count == 1 ? nameAlone(e.peerLabel(deleted[0].peer)) : "\(peers.count) devices") at \(list(deleted.map(\.frame)))"
            parts.append("no stored key for \(plural(missing.count, "request")) (\(list(missing))\(why))")
        }
        if !pairedSSP.isEmpty {
            parts.append(
                "\(plural(pairedSSP.count, "Secure Simple Pairing"))\(Set(pairedWith).count == 1 && Set(e.connections.filter(\.isBREDR).compactMap(\.peerAddress)).count > 1 ? " with " + nameAlone(e.peerLabel(pairedWith[0])) : "") started (\(list(pairedSSP))"
                    + (pairingMethods(e, le: false).map { m in
                        // Tight: the method without the name the clause has just said ("Secure Simple Pairing").
                        let method = String(m.dropFirst(2).dropLast())
                        return "; " + (tight ? method.replacing("Secure Simple Pairing ", with: "") : method)
                    } ?? "") + ")")
        }
        if !legacy.isEmpty { parts.append("\(plural(legacy.count, "legacy PIN pairing")) (\(list(legacy)))") }
        if !newKeys.isEmpty { parts.append("\(plural(newKeys.count, "new link key")) (\(list(newKeys)))") }
        if !failures.isEmpty { parts.append(folded(failures)) }
        parts.append(
            encrypted.isEmpty
                ? "no BR/EDR link encrypted"
                : "\(plural(encrypted.count, "BR/EDR encryption")) on" + cited(encrypted)
                    + (keySizes(e, le: false).map { ", " + $0 } ?? ""))
        let frames =
            stored + deleted.map(\.frame) + missing + pairedSSP + legacy + newKeys + failures.flatMap(\.1) + encrypted
            + (started?.frames ?? [])
        return StorySentence(.security, "BR/EDR security: " + parts.joined(separator: "; ") + ".", frames: frames)
    }

    /// `the peer authenticated and encrypted (Link Key Request at 50, not asked by this host)`, `this side authenticated
    /// (Authentication Requested at 74)`: who started each BR/EDR link's authentication (``LinkSecurity/authenticationStart``),
    /// and, when the peer did, whether the encryption too came with no command of this host's, or at this host's Set
    /// Connection Encryption (the Realtek headset: the phone's pairing at 75, the headset's encryption at 139).
    static func authenticationStarts(_ e: Evidence, tight: Bool = false) -> (text: String, frames: [Int])? {
        var ours: [LinkSecurity.AuthenticationStart] = [], theirs: [LinkSecurity.AuthenticationStart] = []
        var unasked = true, encryptions: [Int] = []
        for c in e.connections where c.isBREDR {
            let r = c.machine.securityRecord
            guard let a = r.authenticationStart else { continue }
            if a.byThisSide { ours.append(a); continue }
            theirs.append(a)
            if r.encryptedUnasked(linkStart: c.startFrame) == nil { unasked = false }
            if let f = r.sessions.first(where: { $0.onFrame != nil })?.startFrame { encryptions.append(f) }
        }
        guard !ours.isEmpty || !theirs.isEmpty else { return nil }
        let byUs = ours.first.map { "\($0.shownBy) at \(brief(ours.map(\.frame)))" }
        let byPeer = theirs.first.map { "\($0.shownBy) at \(brief(theirs.map(\.frame))), not asked by this host" }
        if tight {
            // Who, as counts (the blueprobe Echo Auto log: "this side authenticated 1 link, the peer 15").
            switch (ours.count, theirs.count) {
            case (0, 0): return nil
            case (_, 0): return ("this side authenticated", [])
            case (0, _): return ("the peer authenticated\(unasked ? " and encrypted" : "") (not asked by this host)", [])
            default: return ("this side authenticated \(plural(ours.count, "link")), the peer \(theirs.count) (not asked by this host)", [])
            }
        }
        let text: String
        switch (byUs, byPeer) {
        case (let us?, nil): text = "this side authenticated (\(us))"
        case (nil, let peer?):
            let encrypted =
                unasked ? " and encrypted" : ""
            text =
                "the peer authenticated\(encrypted) (\(peer))"
                + (encryptions.count == theirs.count ? ", this side encrypted (Set Connection Encryption at \(brief(encryptions)))" : "")
        case (let us?, let peer?):
            text = "this side authenticated \(plural(ours.count, "link")) (\(us)), the peer \(theirs.count) (\(peer))"
        default: return nil
        }
        return (text, ours.map(\.frame) + theirs.map(\.frame) + encryptions)
    }

    /// BR/EDR links the log shows from their start with no authentication, pairing or encryption at all: said, since
    /// what they carried went in the clear (the HappyLeaf tablet's OBD dongle: 375 s of RFCOMM, never paired). A link
    /// that started before the log may have been secured before it: nothing is claimed for it.
    static func unsecuredClassic(_ e: Evidence) -> StorySentence? {
        let seen = e.connections.filter { $0.isBREDR && !$0.inferred }
        guard !seen.isEmpty else { return nil }
        let links = seen.count == 1 ? "the link was never encrypted" : "none of the \(seen.count) BR/EDR links was encrypted"
        return StorySentence(
            .security,
            "BR/EDR security: no authentication or pairing in the log; \(links): what \(seen.count == 1 ? "it" : "they") carried went in the clear.",
            frames: seen.map(\.startFrame))
    }

    /// `787, 3298, 4394, …`: the first 3 of more than 4 frames, for lists that name the same links again (who
    /// authenticated, the stored keys given, the encryptions: 15 links of the blueprobe Echo Auto log ran each list to
    /// six frames, two of the first screen's lines); up to 4 in full.
    static func brief(_ frames: [Int]) -> String {
        frames.count > 4 ? frames.prefix(3).map(String.init).joined(separator: ", ") + ", …" : list(frames)
    }

    /// `74, 147` (at most 6, then `…`).
    package static func list(_ frames: [Int]) -> String {
        frames.prefix(6).map(String.init).joined(separator: ", ") + (frames.count > 6 ? ", …" : "")
    }

    /// `Data: 1906 ATT PDUs, 705 notifications received, 258 write commands sent; busiest stream …; OTA …`.
    static func data(_ e: Evidence, findings: [Diagnosis]) -> StorySentence? {
        // Notifications the capturer cut were sent all the same: counted, their values not captured (BTVS, btsnooz).
        let cut = e.connections.reduce(0) { $0 + $1.activity.cutNotifications }
        let att = e.connections.reduce(0) { $0 + $1.attPDUs } + cut
        // From the throughput streams: the one count of values every output shares.
        let streams = e.throughput ?? []
        let notified =
            streams.filter { $0.key.kind == .notification && $0.key.direction == .rx }.reduce(0) { $0 + $1.packets } + cut
        let written = streams.filter { $0.key.kind == .writeCommand && $0.key.direction == .tx }.reduce(0) { $0 + $1.packets }
        let requested = streams.filter { $0.key.kind == .writeRequest && $0.key.direction == .tx }.reduce(0) { $0 + $1.packets }
        var parts: [String] = []
        var frames: [Int] = []
        if att > 0 {
            var p = "\(plural(att, "ATT PDU"))"
            if notified > 0 {
                p += ", \(plural(notified, "notification")) received"
                if cut > 0 { p += " (\(cut) cut by the capturer: their values are not in the log)" }
            }
            if written > 0 { p += ", \(plural(written, "write command")) sent" }
            if requested > 0 { p += ", \(plural(requested, "write request")) sent" }
            parts.append(p)
        }
        if let s = e.judgedStreams.filter({ $0.packets >= 10 }).max(by: { $0.valueBytes < $1.valueBytes }) {
            // Without the throughput tracker a stream is a link's whole tally of its kind: its handle is the busiest one.
            let handle = s.handle.map { (e.throughput == nil ? ", mostly on handle " : " on handle ") + hex($0, width: 4) } ?? ""
            let who = s.connection.map { " with \(e.deviceName($0)) (link #\($0.number))" } ?? ""
            parts.append("busiest stream: \(s.kind.name)\(who), \(s.packets) packets, \(s.valueBytes) bytes\(handle)")
            frames.append(s.firstFrame)
        }
        if let classic = classicData(e) { parts.append(classic.text); frames += classic.frames }
        for s in (e.otaSessions ?? []).prefix(3) {
            parts.append("\(s.protocolName.rawValue) firmware update on link #\(s.connectionNumber): \(s.result)")
            frames.append(s.result == .success ? s.startFrame : s.endFrame)
        }
        // CIS are the LE Audio sentence's (``leAudio(_:findings:)``); broadcast streams alone are told here.
        if let iso = e.iso, !iso.streams.isEmpty, !iso.streams.contains(where: { $0.kind == .cis }) {
            let audio = findings.filter { DiagnosisRules.rule($0.rule)?.group == .leAudio && $0.severity >= .warning }
            parts.append(
                "\(plural(iso.streams.count, "isochronous stream")): "
                    + (audio.isEmpty
                        ? "no LE Audio problem found"
                        : "\(plural(audio.count, "LE Audio finding")) (\(audio.map(\.rule).joined(separator: ", ")))"))
            frames += audio.map(\.frame)
        }
        guard !parts.isEmpty else { return nil }
        return StorySentence(.data, "Data: " + parts.joined(separator: "; ") + ".", frames: frames)
    }

    /// `105 ACL packets on 2 BR/EDR links (L2CAP channels: SDP, RFCOMM)`: what moved on BR/EDR, whose ATT the LE tallies
    /// do not count.
    static func classicData(_ e: Evidence) -> (text: String, frames: [Int])? {
        let links = e.connections.filter(\.isBREDR)
        let packets = links.reduce(0) { $0 + $1.aclPackets.tx + $1.aclPackets.rx + $1.aclPackets.unknown }
        guard packets > 0 else { return nil }
        var protocols: [String] = []
        for c in links {
            for ch in c.channels {
                let name = ch.psm.name ?? "PSM \(hex(ch.psm.rawValue, width: 4))"
                if !protocols.contains(name) { protocols.append(name) }
            }
        }
        let over = protocols.isEmpty ? "" : " (L2CAP channels: \(protocols.joined(separator: ", ")))"
        let frames = links.flatMap { $0.channels.map(\.openFrame) }
        return ("\(plural(packets, "ACL packet")) on \(plural(links.count, "BR/EDR link"))\(over)\(probes(links))", frames)
    }

    /// `, each: 3 L2CAP echo requests, no profile (a presence probe such as l2ping)`: BR/EDR links that carried L2CAP
    /// Echo Requests and opened no channel (the Nespresso log's 20 links from two BlueZ hosts, 60 Echo Requests, no
    /// Connection Request: tshark `btl2cap.cmd_code == 0x08`).
    static func probes(_ links: [Connection]) -> String {
        let probes = links.filter { $0.echoRequests > 0 && $0.channels.isEmpty }
        guard let fewest = probes.map(\.echoRequests).min(), let most = probes.map(\.echoRequests).max() else { return "" }
        let count = fewest == most ? "\(fewest)" : "\(fewest)-\(most)"
        let echoes = "\(count) L2CAP echo request\(most == 1 ? "" : "s"), no profile (a presence probe such as l2ping)"
        return probes.count == links.count ? ", each: \(echoes)" : "; \(probes.count) of them only \(echoes)"
    }

    /// The sentence that tells a completeness item the log cannot show (`diagnose` finds it by this text to drop it
    /// where its Log line said the same).
    public static func caveat(_ message: String) -> String { "The log cannot show everything: \(message)." }

    /// What the log cannot show: the completeness verdict's warnings, links that started before it, links the sniffer
    /// could not decrypt, and on an HCI log the air behind every link it says was lost.
    static func unseen(_ e: Evidence) -> [StorySentence] {
        var out: [StorySentence] = []
        // A link the sniffer could not decrypt is told once, per link, below: the completeness item says the same at
        // length.
        let perLink =
            e.isAirCapture && e.connections.contains { $0.linkEncryption?.key == nil && $0.linkEncryption?.firstUndecryptedFrame != nil }
        for item in e.completeness?.items ?? [] where item.severity >= .warning && !(perLink && item.code == .encryptedNoKey) {
            out.append(StorySentence(.unseen, caveat(item.message), frames: item.frame.map { [$0] } ?? []))
        }
        if let before = startedBeforeTheLog(e) { out.append(before) }
        for c in e.connections where e.isAirCapture {
            guard let enc = c.linkEncryption, enc.key == nil, let from = enc.firstUndecryptedFrame else { continue }
            out.append(
                StorySentence(
                    .unseen,
                    "Link #\(c.number) is encrypted from frame \(enc.encryptedFrom) and the sniffer had no key: what it carried after that cannot be read (give the key with --ltk, --keys or --keys-from).",
                    frames: [enc.encryptedFrom, from]))
        }
        let lost = e.connections.filter { $0.lifecycle.ending?.endedBy == .link }
        if !e.isAirCapture && !lost.isEmpty {
            out.append(
                StorySentence(
                    .unseen,
                    "An HCI log does not show the air: why \(lost.count == 1 ? "the link was" : "the \(lost.count) links were") lost (range, interference, a peer that reset) is not in it.",
                    frames: lost.compactMap { $0.lifecycle.ending?.frame }))
        }
        return out
    }
}

extension Story {
    /// `2 links started before the log: how they were set up is not in it; handle 0x0059 was closed by this side at
    /// frame 670 (0x16), nothing else of it in the log.`: the links inferred from their traffic, and those whose end
    /// alone the log holds (``CaptureCompleteness/endedBeforeLog``: the iPhone AirTag log's Disconnect 668 and
    /// Disconnection Complete 0x16 at 670 for 0x0059, dropped from the story before).
    static func startedBeforeTheLog(_ e: Evidence) -> StorySentence? {
        let before = e.connections.filter(\.inferred)
        let ended = e.completeness?.endedBeforeLog ?? []
        let n = before.count + ended.count
        guard n > 0 else { return nil }
        var text = "\(plural(n, "link")) started before the log: how \(n == 1 ? "it was" : "they were") set up is not in it"
        if !ended.isEmpty {
            let ends = ended.prefix(3).map { end in
                let by = end.reason == .connectionTerminatedByLocalHost ? "closed by this side" : "ended (\(end.reason))"
                let again = end.again.map { " and again at \($0.frame) (\(hex($0.reason.rawValue)))" } ?? ""
                return "handle \(hex(end.handle, width: 4)) was \(by) at frame \(end.frame) (\(hex(end.reason.rawValue)))\(again)"
            }
            text +=
                "; " + ends.joined(separator: ", ") + (ended.count > 3 ? ", …" : "")
                + (ended.count == 1 ? ", nothing else of it in the log" : ", nothing else of them in the log")
        }
        return StorySentence(.unseen, text + ".", frames: before.map(\.startFrame) + ended.map(\.frame) + ended.compactMap(\.again?.frame))
    }
}

extension String {
    /// The first letter upper-cased.
    package var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}
