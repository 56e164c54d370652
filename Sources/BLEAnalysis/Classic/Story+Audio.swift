import BLECore
import BLEProtocols

/// The story's BR/EDR audio lines: what SDP found, the A2DP streams with their codec, rate and suspends, the hands-free
/// connection with its codec negotiation, the SCO/eSCO links of the calls, AVRCP. Each cites its frames.
extension Story {
    static func audio(_ e: Evidence) -> [StorySentence] { audioByDevice(e).flatMap { $0.told.map(\.sentence) } }

    /// Each device's BR/EDR profiles (in the order the devices first appear), with their sentences; `anomaly` marks a
    /// sentence that tells something going wrong (a codec fallback, AVDTP rejections), which keeps its own line.
    static func audioByDevice(_ e: Evidence) -> [DeviceAudio] {
        // One device's links in a row (a headset reconnecting, a test run of sessions) tell the same profiles again: each
        // profile is said once per device, folded over its links, so the first screen still reaches security and the
        // findings (the BLUFFS logs: 15 audio lines for 5 sessions became 3).
        var devices: [String] = []
        var links: [String: [ClassicProfilesResult]] = [:]
        for c in e.connections where c.isBREDR {
            guard let p = c.profiles else { continue }
            let who = e.laterName(c)
            if links[who] == nil { devices.append(who) }
            links[who, default: []].append(p)
        }
        return devices.map { who in
            var out: [StorySentence] = []
            var anomalies: [StorySentence] = []
            var ps = links[who]!
            let all = ps
            // What the profiles did first (a call, a stream); the records SDP found last: they explain, the others
            // tell (the blueprobe midlog's SDP line, 5 lines long, pushed its call below the first screen).
            let sdp = folded(ps.compactMap { sdpLine($0, who: who) })
            // A codec fallback (Story+A2DPFallback) is one event: its streams are told there, the others as before.
            if let fallback = a2dpFallback(ps.flatMap(\.a2dp.streams), who: who) {
                out.append(fallback.line)
                anomalies.append(fallback.line)
                for i in ps.indices { ps[i].a2dp.streams.removeAll { fallback.told.contains($0.configurationFrame) } }
            }
            let streams = ps.flatMap(\.a2dp.streams)
            if streams.count > 1, let line = a2dpFolded(streams, who: who) {
                out.append(line)
                let rejections = folded(ps.compactMap { a2dpRejections($0, who: who) })
                out += rejections
                anomalies += rejections
            } else {
                out += ps.flatMap { a2dpLines($0, who: who) }
                anomalies += ps.compactMap { a2dpRejections($0, who: who) }
            }
            out += folded(ps.compactMap { hfpLine($0, e, who: who) })
            out += folded(ps.compactMap { avrcpLine($0, who: who) })
            out += obexLines(ps, who: who)
            out += sdp
            return DeviceAudio(who: who, profiles: all, told: out.map { ($0, anomalies.contains($0)) })
        }
    }

    /// A device's BR/EDR profiles and the sentences that tell them.
    struct DeviceAudio {
        var who: String
        var profiles: [ClassicProfilesResult]
        var told: [(sentence: StorySentence, anomaly: Bool)]
    }

    /// One profile's sentences over a device's links as one: said once when they are the same, else the link with the
    /// most to tell (the most frames cited; the first on a tie), with how many links carried the profile. The first
    /// link alone would hide a later link's call (the blueprobe moto g04s log: the service level connection of link 1,
    /// while link 3 carried the call answered by ATA at 6319).
    static func folded(_ sentences: [StorySentence]) -> [StorySentence] {
        guard let first = sentences.first, sentences.count > 1 else { return sentences }
        let frames = sentences.flatMap(\.frames)
        let same = sentences.allSatisfy { $0.text == first.text }
        let richest = sentences.indices.reduce(0) { sentences[$1].frames.count > sentences[$0].frames.count ? $1 : $0 }
        let told = sentences[richest]
        let body = told.text.hasSuffix(".") ? String(told.text.dropLast()) : told.text
        let which = "the " + ordinal(richest + 1)
        let text = same ? "\(body) (on each of \(sentences.count) links)." : "\(body) (\(which) of \(sentences.count) links)."
        return [StorySentence(first.topic, text, frames: frames)]
    }

    /// `first`, `second`, `third`, `fourth`, `fifth`, then `6th`, `11th`, `21st`, `22nd`.
    static func ordinal(_ n: Int) -> String {
        let words = ["first", "second", "third", "fourth", "fifth"]
        if n >= 1 && n <= words.count { return words[n - 1] }
        let suffix = (11...13).contains(n % 100) ? "th" : ["th", "st", "nd", "rd", "th", "th", "th", "th", "th", "th"][n % 10]
        return "\(n)\(suffix)"
    }

    /// `A2DP with …: 5 streams of SBC 44.1 kHz … (set at frames 238, 874, …), streamed 25.0 s in all at 95–96 kbps (644
    /// media packets), 5 suspends`: a device's streams of one codec; nil when their codecs differ.
    static func a2dpFolded(_ streams: [A2DPStream], who: String) -> StorySentence? {
        let codecs = Set(streams.map { $0.codec?.description ?? "codec not shown" })
        guard codecs.count == 1, let codec = codecs.first else { return nil }
        let set = streams.map(\.configurationFrame)
        // One end for every stream: told with the first stream's evidence.
        let role = Set(streams.map(\.thisSideIsSink)).count == 1 ? streams[0] : nil
        var text = "A2DP with \(who)\(role.map(roleText) ?? ""): \(streams.count) streams of \(codec) (set at frames \(list(set)))"
        let media = streams.map(\.media).filter { $0.packets > 0 }
        if !media.isEmpty {
            let rates = media.compactMap(\.bitsPerSecond).map { Int(($0 / 1000).rounded()) }
            text += ", streamed \(duration(media.reduce(0) { $0 + $1.streamingMicroseconds })) in all"
            if let lo = rates.min(), let hi = rates.max() { text += lo == hi ? " at \(lo) kbps" : " at \(lo)–\(hi) kbps" }
            let sent = media.reduce(0) { $0 + $1.packetsSent }
            text += " (\(senders(media.reduce(0) { $0 + $1.packets }, sent: sent, sink: role?.thisSideIsSink)))"
        }
        if media.count < streams.count { text += ", \(streams.count - media.count) with no media packet in the log" }
        let suspends = streams.reduce(0) { $0 + $1.suspends.count }
        let stalls = streams.flatMap(\.media.stalls)
        let skipped = streams.reduce(0) { $0 + $1.media.packetsMissing }
        let reconfigured = streams.reduce(0) { $0 + $1.reconfigurations.count }
        if suspends > 0 { text += ", \(plural(suspends, "suspend"))" }
        if !stalls.isEmpty { text += ", \(plural(stalls.count, "stall")) over 200 ms" }
        if skipped > 0 { text += ", \(skipped) RTP sequence numbers skipped" }
        if reconfigured > 0 { text += ", reconfigured \(plural(reconfigured, "time"))" }
        let frames = set + streams.flatMap { $0.starts + $0.suspends } + stalls.map(\.toFrame)
        return StorySentence(.classic, text + ".", frames: frames)
    }

    /// `SDP with 60:55:…: the peer offers Handsfree 1.8 (RFCOMM 2), Audio Sink 1.3 (AVDTP), A/V Remote Control Target 1.6.`
    static func sdpLine(_ p: ClassicProfilesResult, who: String) -> StorySentence? {
        let services = p.sdp.services.filter(\.fromPeer)
        // A search the answer found nothing for: what one side looked for and the other does not offer.
        let empty = p.sdp.searches.filter { $0.found == 0 && !$0.uuids.isEmpty }
        guard !services.isEmpty || !p.sdp.errors.isEmpty || !empty.isEmpty else { return nil }
        var seen = Set<String>()
        var parts: [String] = []
        for s in services {
            // The record's role (its first named service class: Audio Source, Headset Audio Gateway) with the profile's
            // version, as tshark and btmon name it: the profile alone ("Advanced Audio Distribution") says not which end.
            var text = s.roleText
            if let ch = s.rfcommChannel {
                text += " (RFCOMM \(ch))"
            } else if let psm = s.psm, let name = L2CAPPSM(psm).name {
                text += " (\(name))"
            }
            if seen.insert(text).inserted { parts.append(text) }
        }
        var text = "SDP with \(who): "
        if !parts.isEmpty || empty.isEmpty {
            text += parts.isEmpty ? "no record found" : "the peer offers " + parts.prefix(8).joined(separator: ", ")
            if parts.count > 8 { text += " and \(parts.count - 8) more" }
        }
        let missing = empty.prefix(3).map { s in
            (s.fromPeer
                ? "the peer looked for \(s.title) (\(s.frame)): this side has none"
                : "this side looked for \(s.title) (\(s.frame)): the peer has none")
                + (s.responseFrame.map { " (\($0))" } ?? "")
        }
        if !missing.isEmpty { text += (parts.isEmpty ? "" : "; ") + missing.joined(separator: "; ") }
        if !p.sdp.errors.isEmpty { text += "; \(plural(p.sdp.errors.count, "error response")) (\(p.sdp.errors[0].code))" }
        return StorySentence(.classic, text + ".", frames: services.map(\.frame) + empty.map(\.frame) + p.sdp.errors.map(\.frame))
    }

    /// `A2DP with …: SBC 44.1 kHz joint stereo bitpool 53, streamed 2 min 10 s at 328 kbps, 3 suspends.`
    static func a2dpLines(_ p: ClassicProfilesResult, who: String) -> [StorySentence] {
        var out: [StorySentence] = []
        for s in p.a2dp.streams {
            var text =
                "A2DP with \(who)\(roleText(s)): \(s.codec?.description ?? "codec not shown") (set at frame \(s.configurationFrame)\(ownOffer(p, s))\(offered(p)))"
            let m = s.media
            if m.packets > 0 {
                text += ", streamed \(duration(m.streamingMicroseconds))"
                if let bps = m.bitsPerSecond { text += " at \(Int((bps / 1000).rounded())) kbps" }
                text += " (\(senders(m.packets, sent: m.packetsSent, sink: s.thisSideIsSink)))"
            } else if !s.starts.isEmpty {
                text += ", started \(plural(s.starts.count, "time")) but no media packet in the log"
            } else {
                text += ", never started"
            }
            if !s.suspends.isEmpty { text += ", \(plural(s.suspends.count, "suspend"))" }
            if !m.stalls.isEmpty { text += ", \(plural(m.stalls.count, "stall")) over 200 ms" }
            if m.sequenceGaps > 0 { text += ", \(m.packetsMissing) RTP sequence numbers skipped" }
            if !s.reconfigurations.isEmpty { text += ", reconfigured \(plural(s.reconfigurations.count, "time"))" }
            let frames =
                [s.configurationFrame] + s.starts + s.suspends + [m.firstFrame, s.roleFrame].compactMap { $0 } + m.stalls.map(\.toFrame)
            out.append(StorySentence(.classic, text + ".", frames: frames))
        }
        if let rejections = a2dpRejections(p, who: who) { out.append(rejections) }
        return out
    }

    /// `, this side the sink (Discover answer, 52)`: the stream's end this side is, and what showed it.
    static func roleText(_ s: A2DPStream) -> String {
        guard let sink = s.thisSideIsSink else { return "" }
        return ", this side the \(sink ? "sink" : "source") (\(s.roleFrame.map { "Discover answer, \($0)" } ?? "from who sent the media"))"
    }

    /// `679 media packets, from the peer's source; none from this side`: who sent a stream's media.
    static func senders(_ packets: Int, sent: Int, sink: Bool?) -> String {
        let all = plural(packets, "media packet")
        if sent == 0 { return "\(all), from the peer\(sink == true ? "'s source" : ""); none from this side" }
        if sent == packets { return "\(all), from this side\(sink == false ? "'s source" : ""); none from the peer" }
        return "\(all): \(sent) from this side, \(packets - sent) from the peer"
    }

    /// `; the peer's end points offer SBC, aptX, LDAC`: the codecs the peer's capabilities named (Get (All)
    /// Capabilities answers, by SEID), when they are more than one: what the chosen codec was chosen from.
    static func offered(_ p: ClassicProfilesResult) -> String {
        var names: [String] = []
        for seid in p.a2dp.peerCodecs.keys.sorted() {
            let name = p.a2dp.peerCodecs[seid]!.name
            if !names.contains(name) { names.append(name) }
        }
        return names.count > 1 ? "; the peer's end points offer " + names.joined(separator: ", ") : ""
    }

    /// `; this side offered SBC, AAC, LDAC (850–886), the peer chose AAC`: the codecs this side's own capabilities
    /// answers named, when the peer configured the stream from them and they are more than one.
    static func ownOffer(_ p: ClassicProfilesResult, _ s: A2DPStream) -> String {
        guard !s.configuredByThisSide, let frames = p.a2dp.localCodecFrames else { return "" }
        var names: [String] = []
        for seid in p.a2dp.localCodecs.keys.sorted() where !names.contains(p.a2dp.localCodecs[seid]!.name) {
            names.append(p.a2dp.localCodecs[seid]!.name)
        }
        guard names.count > 1 else { return "" }
        let at = frames.count > 1 ? "\(frames.lowerBound)–\(frames.upperBound)" : "\(frames.lowerBound)"
        return "; this side offered \(names.joined(separator: ", ")) (\(at))" + (s.codec.map { ", the peer chose \($0.name)" } ?? "")
    }

    /// `AVDTP with …: 2 rejections: SET_CONFIGURATION …`.
    static func a2dpRejections(_ p: ClassicProfilesResult, who: String) -> StorySentence? {
        let r = p.a2dp.rejections
        guard !r.isEmpty else { return nil }
        let list = r.prefix(3).map { "\($0.signal) \($0.error?.description ?? "general reject") at \($0.frame)" }.joined(separator: ", ")
        return StorySentence(.classic, "AVDTP with \(who): \(plural(r.count, "rejection")): \(list).", frames: r.map(\.frame))
    }

    /// `HFP with …: service level connection up at frame 512; mSBC asked, CVSD used; 2 calls.`
    static func hfpLine(_ p: ClassicProfilesResult, _ e: Evidence, who: String) -> StorySentence? {
        guard let h = p.hfp else { return nil }
        var parts: [String] = []
        var frames: [Int] = []
        if h.headsetProfile {
            // HSP has no service level connection (HSP 1.2, 4.2): nothing to say is missing.
        } else if let f = h.slcFrame {
            parts.append("service level connection up at frame \(f)")
            frames.append(f)
        } else if let fail = h.slcFailure {
            parts.append("service level connection failed at frame \(fail.frame) (\(fail.command): \(fail.why))")
            frames.append(fail.frame)
        } else {
            parts.append("service level connection not completed in the log")
        }
        if let negotiation = codecNegotiation(h) {
            parts.append(negotiation.text)
            frames += negotiation.frames
        }
        let calls = h.calls
        if !calls.isEmpty {
            let told = calls.prefix(2).map { callText($0, h) }
            parts.append(
                (calls.count == 1 ? "1 " : "\(calls.count) calls: ") + told.joined(separator: "; ")
                    + (calls.count > 2 ? "; \(calls.count - 2) more" : ""))
            frames += calls.prefix(2).flatMap { c in [c.frame] + [c.active?.frame, c.end?.frame].compactMap { $0 } }
        }
        if let first = h.errors.first {
            // The first refusal named: which command, and what it got (the Realtek headset's AT+BIND=2 → ERROR at 230).
            let named =
                "\(printable(first.command)) answered \(printable(first.why)) at \(first.frame)" + (first.cause.map { ": " + $0 } ?? "")
            parts.append(
                h.errors.count == 1 ? "1 AT command refused (\(named))" : "\(h.errors.count) AT commands refused (the first \(named))")
            frames.append(first.frame)
        }
        if let first = h.unanswered.first {
            let n = h.unanswered.count
            parts.append(
                (n == 1 ? "1 AT command got no answer (" : "\(n) AT commands got no answer (the first ")
                    + "\(printable(first.command)) at \(first.frame))")
            frames.append(first.frame)
        }
        let side = h.thisSideIsGateway ? "audio gateway" : h.headsetProfile ? "headset" : "hands-free unit"
        let profile = h.headsetProfile ? "HSP" : "HFP"
        let said = parts.isEmpty ? "" : ": " + parts.joined(separator: "; ")
        return StorySentence(
            .classic, "\(profile) with \(who) on RFCOMM channel \(h.dlci >> 1) (this side the \(side))\(said).", frames: frames)
    }

    /// `outgoing call, redial (AT+BLDN) at 243: alerting at 533, up at 707 for 30.0 s, hung up by this side (AT+CHUP,
    /// 4671)`: one call from its indicators and commands (``HFPSession/calls``).
    static func callText(_ c: HFPCall, _ h: HFPSession) -> String {
        var text = (c.direction == .unknown ? "call" : "\(c.direction.rawValue) call")
        text += c.trigger.map { ", \($0.what) at \($0.frame)" } ?? " at \(c.frame)"
        var steps: [String] = []
        if let a = c.alerting { steps.append("alerting at \(a.frame)") }
        if let a = c.answer {
            steps.append("answered by \(h.thisSideIsGateway ? "the peer" : "this side") (ATA, \(a.frame))")
        } else if c.direction == .incoming, c.active != nil {
            // Up with no ATA from the hands-free: the user answered on the audio gateway itself (HFP 1.9, 4.13.1: the
            // AG may accept the call by its own means, then reports call=1).
            steps.append("answered on \(h.thisSideIsGateway ? "this side" : "the peer"), the audio gateway (no ATA)")
        }
        let hungUpBy = h.thisSideIsGateway ? "the peer" : "this side"
        if let up = c.active {
            var active = "up at \(up.frame)"
            if let us = c.activeMicroseconds { active += " for \(duration(us))" }
            steps.append(active)
            if let end = c.end {
                if let hang = c.hangUp, hang.frame >= up.frame {
                    steps.append("hung up by \(hungUpBy) (AT+CHUP, \(hang.frame))")
                } else {
                    steps.append("ended by \(h.thisSideIsGateway ? "this side" : "the peer"), the audio gateway (\(end.frame))")
                }
            } else {
                steps.append("still up when the log ends")
            }
        } else if let end = c.end {
            if let hang = c.hangUp {
                steps.append("\(c.direction == .incoming ? "refused" : "cancelled") by \(hungUpBy) (AT+CHUP, \(hang.frame))")
            } else {
                steps.append("never up (set-up ended at \(end.frame))")
            }
        } else {
            steps.append("still setting up when the log ends")
        }
        return text + ": " + steps.joined(separator: ", ")
    }

    /// An AT line as text a terminal shows: bytes outside printable ASCII as `?` (a corrupt `AT+BRSF=` on the corpus's
    /// headset logs), at most 40 characters.
    static func printable(_ line: String) -> String {
        let shown = String(String.UnicodeScalarView(line.unicodeScalars.prefix(40).map { $0.value >= 0x20 && $0.value < 0x7F ? $0 : "?" }))
        return line.unicodeScalars.count > 40 ? shown + "…" : shown
    }

    /// `mSBC asked, CVSD used` / `mSBC chosen` from AT+BAC and the +BCS selections.
    static func codecNegotiation(_ h: HFPSession) -> (text: String, frames: [Int])? {
        guard !h.availableCodecs.isEmpty || !h.codecSelections.isEmpty else { return nil }
        let offered = h.availableCodecs.map(HFPCodec.name)
        let chosen = h.codecSelections.map { HFPCodec.name($0.codec) }
        var frames = h.availableCodecsFrame.map { [$0] } ?? []
        frames += h.codecSelections.map(\.frame)
        guard let last = chosen.last else { return ("\(offered.joined(separator: "/")) offered, no codec selected", frames) }
        let best = h.availableCodecs.max().map(HFPCodec.name)
        if let best, best != last { return ("\(best) offered, \(last) used", frames) }
        let unique = Array(Set(chosen))
        return (unique.count > 1 ? "codecs selected in turn: \(chosen.joined(separator: " → "))" : "\(last) selected", frames)
    }

    static func avrcpLine(_ p: ClassicProfilesResult, who: String) -> StorySentence? {
        let a = p.avrcp
        guard a.commands > 0 else { return nil }
        var parts = ["\(plural(a.commands, "command"))"]
        if !a.registered.isEmpty {
            parts.append("notifications \(a.registered.joined(separator: ", ")) (\(plural(a.changed.count, "change")))")
        }
        let ops = Dictionary(grouping: a.operations, by: \.what).map {
            "\($0.value.count) \($0.key.hasSuffix(" pressed") ? String($0.key.dropLast(8)) : $0.key)"
        }
        if !ops.isEmpty { parts.append(ops.sorted().joined(separator: ", ")) }
        if let v = a.volume { parts.append("volume \(v * 100 / 127) %") }
        if !a.rejections.isEmpty { parts.append("\(a.rejections.count) refused (\(a.rejections[0].what))") }
        return StorySentence(
            .classic, "AVRCP with \(who): " + parts.joined(separator: ", ") + ".",
            frames: a.rejections.map(\.frame) + a.operations.prefix(3).map(\.frame))
    }

    /// `2 min 10 s`, `12.4 s`.
    static func duration(_ us: Int64) -> String {
        let s = Double(us) / 1e6
        if s < 60 { return String(fractionDigits: 1, s) + " s" }
        return "\(Int(s) / 60) min \(Int(s) % 60) s"
    }
}
