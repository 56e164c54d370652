import BLECore
import BLEProtocols

/// A device's BR/EDR audio in one sentence, for the first screen of a long log: the blueprobe Echo Auto log told three
/// devices' A2DP, HFP, AVRCP, SDP and calls' audio links in 35 lines, and its first finding came on line 64. Where the
/// story would push the first finding off the first screen, each device with several profile sentences is told by its
/// digest (``Story/digests``), and the sentences themselves after the findings (``DiagnosisReport``): every fact stays
/// in the text, and `diagnose --json` keeps them whole. Routine success is a count; what went wrong (a refused AT
/// command, a failed audio link, a stall) keeps its words and its frame.
extension Story {
    /// The story's BR/EDR profile sentences, each device's tagged with its ``StorySentence/group`` where it has a digest;
    /// the digests; and the group of the calls' audio links sentence, when every one of its links is a digest's.
    static func audioFolding(_ e: Evidence) -> (
        sentences: [StorySentence], digests: [StorySentence], tight: [StorySentence], callsGroup: String?
    ) {
        let devices = audioByDevice(e)
        var sentences: [StorySentence] = []
        var digests: [StorySentence] = [], tight: [StorySentence] = []
        var folded = Set<String>()
        for d in devices {
            let sync = e.classic.synchronousLinks.filter { l in
                l.aclConnection.flatMap { n in e.connections.first { $0.number == n } }.map(e.laterName) == d.who
            }
            let routine = d.told.filter { !$0.anomaly }.map(\.sentence)
            // A digest only for two or more sentences, and shorter than they are: one stream, one call, one SDP answer
            // stays as it is told.
            guard routine.count > 1, let digest = audioDigest(d, sync: sync),
                digest.text.count < routine.map(\.text.count).reduce(0, +)
            else {
                // A device told by its SDP records alone (the Echo Auto's vendor service with three searches that found
                // nothing, 5 lines on BTlogs22): its records on RFCOMM, a tight form where that saves a line.
                let sdpOnly = d.profiles.allSatisfy { p in
                    p.a2dp.streams.isEmpty && p.hfp == nil && p.avrcp.commands == 0 && p.obex.isEmpty
                }
                if sdpOnly, routine.count == 1, let short = audioDigest(d, sync: sync),
                    short.text.count + tightSaving <= routine[0].text.count
                {
                    tight.append(short)
                    sentences += d.told.map { told in
                        var s = told.sentence
                        if !told.anomaly { s.group = d.who }
                        return s
                    }
                } else {
                    sentences += d.told.map(\.sentence)
                }
                continue
            }
            folded.insert(d.who)
            digests.append(digest)
            if let short = audioDigest(d, sync: sync, tight: true), short.text.count < digest.text.count { tight.append(short) }
            sentences += d.told.map { told in
                var s = told.sentence
                if !told.anomaly { s.group = d.who }
                return s
            }
        }
        // The calls' audio links sentence folds when every link is told by its device's digest.
        let links = e.classic.synchronousLinks
        let everyLinkFolded =
            !links.isEmpty
            && links.allSatisfy { l in
                l.aclConnection.flatMap { n in e.connections.first { $0.number == n } }.map { folded.contains(e.laterName($0)) } ?? false
            }
        return (sentences, digests, tight, everyLinkFolded ? audioLinksGroup : nil)
    }

    /// The group of the calls' audio links sentence: its links are told in their devices' digests.
    public static let audioLinksGroup = "\u{0}audio links"

    /// `JBL Clip 3: A2DP 5 streams SBC 44.1 kHz (set at frames 3542, 4517, 6766, …), streamed 34.6 s in all (2385 media
    /// packets), this side the source, 2 suspends; HFP, this side the audio gateway: service level connection up at
    /// 13686, 1 incoming call at 13706: …, eSCO CVSD up at 13705 (asked by this side at 13698), removed at 13857, 5 AT
    /// commands refused (the first …); AVRCP 34 commands; SDP: Handsfree 1.5 (RFCOMM 1), Headset 1.2 (RFCOMM 3), 4 more
    /// records.`
    /// `tight` (``Story/tight``): AVRCP only with a refusal, SDP only with an error response.
    static func audioDigest(_ d: DeviceAudio, sync: [SynchronousLink], tight: Bool = false) -> StorySentence? {
        var parts: [(String, [Int])] = []
        if let a2dp = a2dpDigest(d.profiles) { parts.append(a2dp) }
        if let hfp = hfpDigest(d.profiles.compactMap(\.hfp), sync: sync) { parts.append(hfp) }
        let commands = d.profiles.reduce(0) { $0 + $1.avrcp.commands }
        let refused = d.profiles.flatMap(\.avrcp.rejections)
        if commands > 0 && (!tight || !refused.isEmpty) {
            parts.append(
                (
                    "AVRCP \(plural(commands, "command"))"
                        + (refused.first.map { ", \(refused.count) refused (\($0.what) at \($0.frame))" } ?? ""),
                    refused.prefix(1).map(\.frame)
                ))
        }
        var services: [String] = []
        let sessions = d.profiles.flatMap(\.obex)
        for s in sessions where !services.contains(s.service ?? "OBEX") { services.append(s.service ?? "OBEX") }
        if !services.isEmpty {
            let ops = sessions.flatMap(\.operations).filter { $0.opcode != .connect && $0.opcode != .disconnect }
            parts.append(
                (
                    services.joined(separator: ", ") + (ops.isEmpty ? "" : " \(opcodeCounts(ops))"),
                    sessions.compactMap(\.connectFrame).prefix(1).map { $0 }
                ))
        }
        if let sdp = sdpDigest(d.profiles.map(\.sdp)), !tight || d.profiles.contains(where: { !$0.sdp.errors.isEmpty }) {
            parts.append(sdp)
        }
        guard !parts.isEmpty else { return nil }
        return StorySentence(
            .classic, "\(d.who): " + parts.map(\.0).joined(separator: "; ") + ".", frames: parts.flatMap(\.1), group: d.who)
    }

    /// `SBC 44.1 kHz`: a codec's name and sampling frequency.
    static func shortCodec(_ c: A2DPCodec?) -> String {
        guard let c else { return "codec not shown" }
        let f = A2DPCodec.frequencyText(c.frequencies)
        return f.isEmpty ? c.name : "\(c.name) \(f)"
    }

    /// `A2DP 5 streams SBC 44.1 kHz (set at 3542, 4517, …), 34.6 s in all, this side the source`; which codec the peer
    /// chose of this side's offer; stalls and skipped RTP sequence numbers with their frames.
    static func a2dpDigest(_ profiles: [ClassicProfilesResult]) -> (String, [Int])? {
        let streams = profiles.flatMap(\.a2dp.streams)
        guard !streams.isEmpty else { return nil }
        var codecs: [String] = []
        for s in streams where !codecs.contains(shortCodec(s.codec)) { codecs.append(shortCodec(s.codec)) }
        let set = streams.map(\.configurationFrame)
        var text =
            "A2DP " + (streams.count == 1 ? "" : "\(streams.count) streams ") + codecs.joined(separator: ", ")
            + " (set at \(set.count == 1 ? "frame" : "frames") \(brief(set))"
        // The peer's choice of this side's codecs (A2DP 1.4, 4.2: the SNK may configure the stream): what the stream was
        // chosen from, as the profile's own sentence tells it.
        if let p = profiles.first(where: { p in p.a2dp.streams.contains { !ownOffer(p, $0).isEmpty } }),
            let s = p.a2dp.streams.first(where: { !ownOffer(p, $0).isEmpty })
        {
            text += ownOffer(p, s)
        }
        text += ")"
        let us = streams.reduce(0) { $0 + $1.media.streamingMicroseconds }
        let packets = streams.reduce(0) { $0 + $1.media.packets }
        let started = streams.contains { !$0.starts.isEmpty }
        text +=
            us > 0
            ? ", streamed \(duration(us))" + (streams.count > 1 ? " in all" : "")
                + " (\(plural(packets, "media packet"))\(perStream(streams)))"
            : started ? ", started but no media packet in the log" : ", never started"
        let ends = Set(streams.compactMap(\.thisSideIsSink))
        if ends.count == 1, let sink = ends.first { text += ", this side the \(sink ? "sink" : "source")" }
        let suspends = streams.reduce(0) { $0 + $1.suspends.count }
        if suspends > 0 { text += ", \(plural(suspends, "suspend"))" }
        let stalls = streams.flatMap(\.media.stalls)
        if let first = stalls.first { text += ", \(plural(stalls.count, "stall")) over 200 ms (the first at \(first.toFrame))" }
        let skipped = streams.reduce(0) { $0 + $1.media.packetsMissing }
        if skipped > 0 { text += ", \(skipped) RTP sequence numbers skipped" }
        let reconfigured = streams.reduce(0) { $0 + $1.reconfigurations.count }
        if reconfigured > 0 { text += ", reconfigured \(plural(reconfigured, "time"))" }
        return (text, set + stalls.prefix(1).map(\.toFrame))
    }

    /// `: 557 + 191`: each stream's media packets, for two to four streams that carried media (the blueprobe midlog: one
    /// stream on each of its two sessions).
    static func perStream(_ streams: [A2DPStream]) -> String {
        let counts = streams.map(\.media.packets).filter { $0 > 0 }
        return (2...4).contains(counts.count) ? ": " + counts.map(String.init).joined(separator: " + ") : ""
    }

    /// `HFP, this side the audio gateway: 1 incoming call, up 16.6 s (13771), eSCO CVSD asked by this side (13698)`:
    /// the calls, the audio links and the codec; a failed service level connection, refused or unanswered AT commands
    /// and failed audio links with their frames.
    static func hfpDigest(_ sessions: [HFPSession], sync: [SynchronousLink]) -> (String, [Int])? {
        guard let first = sessions.first else { return syncDigest(sync).map { ($0.text, $0.frames) } }
        var parts: [String] = []
        var frames: [Int] = []
        let slc = sessions.compactMap(\.slcFrame)
        if !slc.isEmpty {
            // Each link's (the blueprobe midlog: 1620 on the first link, 6228 on the one that carried the call).
            parts.append("service level connection up at \(brief(slc))")
            frames += slc.prefix(3)
        } else if !first.headsetProfile {
            if let fail = sessions.lazy.compactMap(\.slcFailure).first {
                parts.append("service level connection failed at \(fail.frame) (\(fail.command): \(fail.why))")
                frames.append(fail.frame)
            } else {
                parts.append("no service level connection in the log")
            }
        }
        let calls = sessions.flatMap(\.calls)
        if let call = calls.first {
            let up = calls.filter { $0.active != nil }
            if calls.count == 1, let h = sessions.first(where: { $0.calls.contains(call) }) {
                // The call whole (who answered, how long, who ended it): what a reader of a call log looks for first.
                // The session's head names the gateway already: ", the audio gateway" after each side is said once.
                parts.append("1 " + callText(call, h).replacing(", the audio gateway", with: ""))
                frames += [call.frame] + [call.active?.frame, call.end?.frame].compactMap { $0 }
            } else {
                parts.append("\(calls.count) calls, \(up.count) up (the first at \(up.first?.active?.frame ?? call.frame))")
                frames.append(up.first?.active?.frame ?? call.frame)
            }
        }
        if let codecs = sessions.compactMap(codecNegotiation).last {
            parts.append(codecs.text)
            frames += codecs.frames.suffix(1)
        }
        if let links = syncDigest(sync) {
            parts.append(links.text)
            frames += links.frames
        }
        let refused = sessions.flatMap(\.errors)
        if let r = refused.first {
            let named = "\(printable(r.command)) answered \(printable(r.why)) at \(r.frame)"
            parts.append(
                refused.count == 1 ? "1 AT command refused (\(named))" : "\(refused.count) AT commands refused (the first \(named))")
            frames.append(r.frame)
        }
        let unanswered = sessions.flatMap(\.unanswered)
        if let u = unanswered.first {
            parts.append("\(plural(unanswered.count, "AT command")) unanswered (the first \(printable(u.command)) at \(u.frame))")
            frames.append(u.frame)
        }
        let side = first.thisSideIsGateway ? "audio gateway" : first.headsetProfile ? "headset" : "hands-free unit"
        let head = "\(first.headsetProfile ? "HSP" : "HFP"), this side the \(side)"
        return (parts.isEmpty ? head : head + ": " + parts.joined(separator: ", "), frames)
    }

    /// `eSCO CVSD up at 13705 (asked by this side at 13698), removed at 13857`, `2 eSCO links (transparent; up at 6299,
    /// removed at 6307 after 33 ms, 6326)`, `SCO setup failed at 12 (…)`.
    static func syncDigest(_ links: [SynchronousLink]) -> (text: String, frames: [Int])? {
        guard !links.isEmpty else { return nil }
        let up = links.filter(\.established)
        var parts: [String] = []
        var frames: [Int] = []
        if up.count == 1, let l = up.first {
            var text = "\(l.isESCO ? "eSCO" : "SCO")" + (l.airMode.map { " \($0)" } ?? "") + " up at \(l.startFrame ?? 0)"
            if let name = l.request, let frame = l.requestFrame {
                text += name.contains("Accept") ? " (the peer's, accepted at \(frame))" : " (asked by this side at \(frame))"
            }
            if let end = l.endFrame {
                text += l.endedByReset ? ", ended by the HCI Reset at \(end)" : ", removed at \(end)"
                if let us = l.durationMicroseconds, !l.endedByReset, us < 1_000_000 { text += " after \(BLEAnalysis.duration(us))" }
            } else {
                text += ", still up when the log ends"
            }
            parts.append(text)
            frames.append(l.startFrame ?? 0)
        } else if up.count > 1 {
            var modes: [String] = []
            for mode in up.compactMap({ $0.airMode.map { "\($0)" } }) where !modes.contains(mode) { modes.append(mode) }
            let kinds = Set(up.map(\.isESCO))
            let kind = kinds.count == 1 ? (up[0].isESCO ? "eSCO" : "SCO") : "SCO/eSCO"
            // Each link's start, and the life of one removed within a second (the blueprobe midlog's eSCO for the ring,
            // up 6299, removed after 33 ms, set up again after the answer at 6326).
            let each = up.prefix(4).map { "\($0.startFrame ?? 0)" + shortLived($0) }.joined(separator: ", ")
            let air = modes.isEmpty ? "" : modes.joined(separator: ", ") + "; "
            parts.append("\(up.count) \(kind) links (\(air)up at \(each)\(up.count > 4 ? ", …" : ""))")
            frames += up.prefix(4).compactMap(\.startFrame)
        }
        for l in links where !l.established {
            parts.append("\(l.isESCO ? "eSCO" : "SCO") setup failed at \(l.resultFrame ?? l.requestFrame ?? 0) (\(codeName(l.status)))")
            frames.append(l.resultFrame ?? l.requestFrame ?? 0)
        }
        return (parts.joined(separator: ", "), frames)
    }

    /// ` removed after 33 ms` for an audio link removed within a second of its start (it carried next to no audio).
    static func shortLived(_ l: SynchronousLink) -> String {
        guard let us = l.durationMicroseconds, let end = l.endFrame, !l.endedByReset, us < 1_000_000 else { return "" }
        return ", removed at \(end) after \(BLEAnalysis.duration(us))"
    }

    /// `SDP: Handsfree 1.5 (RFCOMM 1), Serial Port 1.2 (RFCOMM 9, 19), 5 more`: the peer's records on RFCOMM channels
    /// first (what a serial or vendor service runs on), then how many others; error responses with their frame.
    static func sdpDigest(_ sdps: [SDPSummary]) -> (String, [Int])? {
        // Each role once, with its RFCOMM channels (`Serial Port 1.2 (RFCOMM 9, 19, 20)`).
        var roles: [String] = [], channels: [String: [UInt8]] = [:], others: [String] = [], frames: [Int] = []
        for s in sdps.flatMap(\.services) where s.fromPeer {
            guard let ch = s.rfcommChannel else {
                if !others.contains(s.roleText) { others.append(s.roleText) }
                continue
            }
            if channels[s.roleText] == nil {
                roles.append(s.roleText)
                frames.append(s.frame)
            }
            if !channels[s.roleText, default: []].contains(ch) { channels[s.roleText, default: []].append(ch) }
        }
        others.removeAll { channels[$0] != nil }
        let errors = sdps.flatMap(\.errors)
        guard !roles.isEmpty || !others.isEmpty || !errors.isEmpty else { return nil }
        var list = roles.prefix(3).map { "\($0) (RFCOMM \(channels[$0]!.sorted().map(String.init).joined(separator: ", ")))" }
        if list.isEmpty { list = Array(others.prefix(2)) }
        let rest = roles.count + others.count - list.count
        var text = "SDP: " + (list.isEmpty ? "no record" : list.joined(separator: ", "))
        if rest > 0 { text += ", \(rest) more" }
        if let err = errors.first {
            text += ", \(plural(errors.count, "error response")) (\(err.code) at \(err.frame))"
            frames.append(err.frame)
        }
        return (text, Array(frames.prefix(3)))
    }
}
