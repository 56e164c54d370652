import BLECore
import BLEProtocols

/// The story's lines about BR/EDR links beyond their count: the SCO/eSCO links of the calls, each on its own handle,
/// and the links whose transport the log never showed.
extension Story {
    /// `Calls' audio links: eSCO link up at frame 4 (transparent, every 7.50 ms), removed at 8; SCO setup failed at frame
    /// 12 (…).`, or `Audio connection (no call in the HFP exchange): …` where no call shows.
    /// Packets one way before the other way's silence is worth saying: 50 is 0.375 s of 7.5 ms eSCO packets.
    static let oneWayAudioPackets = 50

    /// `, the controller marking 15 received as no data, 5 as possibly invalid`: its Packet_Status_Flag on received
    /// packets.
    static func flaggedText(_ l: SynchronousLink) -> String {
        let names = [1: "possibly invalid", 2: "no data", 3: "partially lost"]
        let marked = [2, 1, 3].filter { l.receivedFlagged[$0] > 0 }.enumerated().map { i, flag in
            "\(grouped(l.receivedFlagged[flag]))" + (i == 0 ? " received" : "") + " as \(names[flag]!)"
        }
        guard !marked.isEmpty else { return "" }
        return ", the controller marking " + marked.joined(separator: ", ")
    }

    /// ` by this side (12)` for this side's Setup, ` by the peer (accepted at 12)` for its Accept: who wanted the audio
    /// link (the blueprobe Echo Auto log: the phone's Setup Synchronous Connection 13698 for the Clip 3's call).
    static func askedBy(_ l: SynchronousLink) -> String {
        guard let name = l.request, let frame = l.requestFrame else { return "" }
        return name.contains("Accept") ? " by the peer (accepted at \(frame))" : " by this side (\(frame))"
    }

    static func synchronousLine(_ e: Evidence) -> StorySentence? {
        let links = e.classic.synchronousLinks
        guard !links.isEmpty else { return nil }
        var parts: [String] = []
        for l in links.prefix(6) {
            let kind = l.isESCO ? "eSCO" : "SCO"
            if l.established {
                var text = "\(kind) link up at frame \(l.startFrame ?? 0)"
                if let air = l.airMode {
                    text +=
                        " (\(air)" + (l.transmissionInterval > 0 ? ", every \(String(fractionDigits: 2, l.intervalMilliseconds)) ms)" : ")")
                }
                if let asked = l.requestedCoding { text += ", \(asked) asked" + askedBy(l) }
                text +=
                    l.endFrame.map { l.endedByReset ? ", ended by the HCI Reset at \($0)" : ", removed at \($0)" }
                    ?? ", still up when the log ends"
                // A link removed within a second carried next to no audio: said with its life (the blueprobe midlog's
                // eSCO for the ring, up 6299, removed 6307, 33 ms; set up again after the answer).
                if let us = l.durationMicroseconds, l.endFrame != nil, !l.endedByReset, us < 1_000_000 {
                    text += " after \(BLEAnalysis.duration(us))"
                }
                // The audio the host carried over HCI (none where the controller routes it on its own path, the usual
                // case on phones): counted on the link by its handle, so empty records of no link are not.
                if l.packets.total > 0 {
                    let received = l.packets.rx + l.packets.unknown
                    text += ", \(grouped(l.packets.tx)) SCO packets sent and \(grouped(received)) received"
                    // Audio one way only over HCI: the other way took another path (PCM/I2S to the controller) or was
                    // silent; the log cannot tell which, but a listener hears nothing from this side over HCI.
                    if l.packets.tx == 0 && received >= oneWayAudioPackets {
                        text += " (none sent: this side's audio did not cross HCI; another path, or none)"
                    } else if received == 0 && l.packets.tx >= oneWayAudioPackets {
                        text += " (none received: the peer's audio did not cross HCI; another path, or none)"
                    }
                    text += flaggedText(l)
                }
                parts.append(text)
            } else {
                parts.append("\(kind) setup failed at frame \(l.resultFrame ?? l.requestFrame ?? 0) (\(codeName(l.status)))")
            }
        }
        if links.count > 6 { parts.append("\(links.count - 6) more") }
        let frames = links.compactMap { $0.startFrame ?? $0.resultFrame } + links.compactMap(\.endFrame)
        // A call only where the HFP exchange shows one (HFPCallShown.swift); else what the log shows, audio connections.
        let title =
            e.hfpShowsACall
            ? "Calls' audio links: "
            : (links.count == 1 ? "Audio connection" : "Audio connections")
                + (e.hfpDecoded ? " (no call in the HFP exchange): " : ": ")
        return StorySentence(.classic, title + parts.joined(separator: "; ") + ".", frames: frames)
    }

}

extension Story {
    /// `1 link whose transport the log does not show (up before it began, on handle 0x0edc): …`: links inferred from
    /// traffic that no channel or event showed to be LE or BR/EDR, counted as neither.
    static func unknownTransport(_ e: Evidence) -> StorySentence? {
        let links = e.connections.filter { $0.link.transport.value == nil }
        guard !links.isEmpty else { return nil }
        let handles = links.map { hex($0.handle, width: 4) }
        let groups = links.map { ending($0, e) }
        let text =
            "\(plural(links.count, "link")) whose transport the log does not show (up before it began; no channel or event of LE or BR/EDR on handle \(handles.prefix(4).joined(separator: ", "))): \(folded(groups.map { ($0.0, [$0.1]) }))."
        return StorySentence(.links, text, frames: links.map(\.startFrame) + groups.map(\.1))
    }
}

extension Story {
    /// `Echo Auto F47Q (4C:17:44:79:6B:59) ×9, Wearable Headset Device (class at 9258): 6 ended by the peer (0x13 Remote
    /// User Terminated Connection), 2 lost by supervision timeout (0x08), 1 closed by this side (0x16); JBL Clip 3 (…) ×6,
    /// Loudspeaker (class at 3247): 4 ended by the peer (0x13), …`: the BR/EDR links of several devices, each device
    /// with its class and its own endings (the blueprobe Echo Auto log: one fold over 16 links of three devices hid
    /// which device was lost and which this side closed). An ending's code is named in full once.
    static func perDevice(_ links: [Connection], _ e: Evidence, tight: Bool = false) -> String {
        var order: [String] = []
        var byDevice: [String: [Connection]] = [:]
        for c in links {
            let name = e.deviceName(c)
            if byDevice[name] == nil { order.append(name) }
            byDevice[name, default: []].append(c)
        }
        let ranked = order.enumerated().sorted { a, b in
            let (na, nb) = (byDevice[a.element]!.count, byDevice[b.element]!.count)
            return na != nb ? na > nb : a.offset < b.offset
        }.map(\.element)
        // Tight: a name alone, unless another device goes by it too (the Nespresso log's two 'BlueZ 5.47' hosts).
        let short = order.map(withoutAddress)
        return ranked.map { name in
            let own = byDevice[name]!
            let alone = withoutAddress(name)
            var head = "\(tight && short.filter { $0 == alone }.count == 1 ? alone : name) ×\(own.count)"
            if !tight, let f = own.lazy.compactMap({ $0.link.classic?.classOfDevice }).first, let cod = f.value,
                let kind = ClassOfDevice.kind(cod),
                let frame = f.source.frame
            {
                head += ", \(kind) (class at \(frame))"
            }
            let groups = own.map { c -> (String, [Int]) in
                let (what, frame) = ending(c, e)
                return (what, [frame])
            }
            return head + ": " + folded(groups)
        }.joined(separator: "; ").namingCodesOnce
    }

    /// `JBL Clip 3` for `JBL Clip 3 (F8:5C:7D:18:E2:FF)`; any other label as it is (`connection #1 (handle 0x0005)`
    /// keeps its handle): the tight form's names (``Story/tight``).
    static func withoutAddress(_ label: String) -> String {
        let alone = nameAlone(label)
        let inParentheses = label.dropFirst(alone.count).dropFirst(2).dropLast()
        return inParentheses.count == 17 && inParentheses.filter { $0 == ":" }.count == 5 ? alone : label
    }

    /// `JBL Clip 3` for `JBL Clip 3 (F8:5C:7D:18:E2:FF)`; an address alone stays as it is.
    static func nameAlone(_ label: String) -> String {
        let chars = Array(label)
        guard label.hasSuffix(")"), let open = chars.indices.last(where: { chars[$0] == "(" }), open > 1, chars[open - 1] == " "
        else { return label }
        return String(chars[..<(open - 1)])
    }

    /// `2 links up at once for 30.6 s (17222–18578: Echo Auto F47Q, JBL Clip 3)`: BR/EDR links whose lives overlap
    /// (a link opened while another was up), the first such pair with how long both were up; with more, how many times
    /// and the most at once. Nil when the links followed one another.
    static func overlap(_ links: [Connection], _ e: Evidence) -> (text: String, frames: [Int])? {
        // Plain indices and a struct, not tuples of connections in closures: the release build's SIL ownership
        // verifier crashed on the first version (swift 6.3.1, "Found ownership error?!" in this function).
        let order = links.indices.sorted { links[$0].startTime < links[$1].startTime }
        var ends: [Timestamp] = []
        for k in order { ends.append(links[k].endTime ?? e.lastTime ?? links[k].startTime) }
        var first: OverlapPair? = nil
        var count = 0, most = 1
        for position in order.indices {
            let b = links[order[position]]
            var up = 0
            for earlier in 0..<position where ends[earlier] > b.startTime {
                up += 1
                count += 1
                if first == nil {
                    first = OverlapPair(a: order[earlier], b: order[position], from: b.startTime, to: min(ends[earlier], ends[position]))
                }
            }
            most = max(most, up + 1)
        }
        guard let pair = first else { return nil }
        let a = links[pair.a], b = links[pair.b]
        var endFrames: [Int] = []
        for c in [a, b] {
            if let end = c.endTime, end <= pair.to, let frame = c.endFrame { endFrames.append(frame) }
        }
        let until = endFrames.min().map(String.init) ?? "the log's end"
        let who = [nameAlone(e.deviceName(a)), nameAlone(e.deviceName(b))]
        var text =
            "2 links up at once for \(BLEAnalysis.duration(pair.to.microseconds(since: pair.from))) (\(b.startFrame)–\(until): "
            + (who[0] == who[1] ? "both \(who[0])" : who.joined(separator: ", ")) + ")"
        if count > 1 { text += ", \(plural(count, "such overlap")) in all" + (most > 2 ? ", up to \(most) links at once" : "") }
        return (text, [b.startFrame] + endFrames.prefix(1))
    }

    /// Two links up at once: indices into the links, and when both were up.
    private struct OverlapPair {
        var a: Int
        var b: Int
        var from: Timestamp
        var to: Timestamp
    }
}

extension String {
    /// `4 ended by the peer (0x13 Remote User Terminated Connection), …, 2 ended by the peer (0x13)`: each status code
    /// named in full the first time only.
    var namingCodesOnce: String {
        let chars = Array(self)
        var out = "", seen = Set<String>(), i = 0
        while i < chars.count {
            if chars[i] == "(", chars[i...].starts(with: "(0x"), let close = chars[i...].firstIndex(of: ")"),
                let space = chars[i..<close].firstIndex(of: " ")
            {
                let named = String(chars[i...close])
                out += seen.contains(named) ? String(chars[i..<space]) + ")" : named
                seen.insert(named)
                i = close + 1
                continue
            }
            out.append(chars[i])
            i += 1
        }
        return out
    }
}

extension Story {
    /// `the version exchange this side asked never completed on 8 of them (Read Remote Version Information at 54115,
    /// 54318, 54438, …)`: ended links on which this side's Read Remote Version Information (Core Vol 4, Part E, 7.1.23)
    /// had no Complete event (7.7.12) before the link's end: the peer never answered the LL or LMP version exchange,
    /// which a link's first procedures wait on (the blueprobe band: eight links that fell silent mid-discovery, the
    /// first Complete only at 58284 on the ninth). A link still open at the log's end may yet be answered, and one that
    /// ended within ``versionAnswerMicroseconds`` of the request left no time for an answer (the bafang iPhone log: asked
    /// at 45370, the link lost 1 ms later): neither is counted.
    /// How long a link must outlive its version request for the missing answer to count: 1 s, hundreds of connection
    /// events (an answer takes a few).
    static let versionAnswerMicroseconds: Int64 = 1_000_000

    static func versionUnanswered(_ links: [Connection], _ e: Evidence) -> (text: String, frames: [Int])? {
        var asked: [Int] = []
        for c in links {
            guard let end = c.endFrame, let endTime = c.endTime else { continue }
            var pending: EvidenceEvent?
            for ev in e.events(of: c.number) where ev.frame < end {
                switch ev.kind {
                case .remoteVersionAsked: pending = pending ?? ev
                case .remoteVersionComplete: pending = nil
                default: break
                }
            }
            if let p = pending, endTime.microseconds(since: p.timestamp) >= versionAnswerMicroseconds { asked.append(p.frame) }
        }
        guard !asked.isEmpty else { return nil }
        let which = asked.count == links.count ? (links.count == 1 ? "on it" : "on any of them") : "on \(asked.count) of them"
        return (
            "the version exchange this side asked never completed \(which) (Read Remote Version Information at \(brief(asked)))", asked
        )
    }
}
