import BLECore
import BLEProtocols

/// One sentence of a capture's story, with the frames it rests on.
public struct StorySentence: Hashable, Sendable {
    public enum Topic: String, Hashable, Sendable {
        /// The LE links: per peer, and how each ended.
        case links
        /// BR/EDR connections and connection attempts.
        case classic
        /// Pairing and encryption.
        case security
        /// The data that moved: ATT traffic, the busiest stream, firmware updates, LE Audio.
        case data
        /// How the busiest LE link was set up: parameters, MTU, subscriptions (``Story/linkSetup(_:)``). Yields its place
        /// on the first screen after ``unseen`` when room is short, told after the findings (``DiagnosisReport``).
        case setup
        /// What the log cannot show.
        case unseen
    }
    public var topic: Topic
    public var text: String
    /// The frames it cites, ascending.
    public var frames: [Int]
    /// The device whose BR/EDR profiles it tells (``Story/digests``): where the story would push the first finding off
    /// the first screen, a device's sentences fold into its digest there and are told whole after the findings.
    public var group: String?

    public init(_ topic: Topic, _ text: String, frames: [Int], group: String? = nil) {
        self.topic = topic
        self.text = text
        self.frames = Array(Set(frames)).sorted()
        self.group = group
    }
}

/// What a capture shows in a few sentences, before the findings: the links per peer and how each ended (folded: "6
/// lost by supervision timeout (0x08)"), BR/EDR activity and failures, pairing and encryption, the data that moved, and
/// what the log cannot show. Built from the evidence the rules read and their findings; `diagnose`, `info` and the
/// report print it first.
public struct Story: Hashable, Sendable {
    public var sentences: [StorySentence]
    /// One sentence per device whose BR/EDR profiles take several sentences (``group`` names the device): what the
    /// first screen tells in their place when room is short (``Story/audioDigest``). Not in `diagnose --json`, whose
    /// story keeps every sentence whole.
    public var digests: [StorySentence] = []
    /// Tighter forms, by ``StorySentence/group``, for a first screen that the digests did not free (the blueprobe Echo
    /// Auto log: its header, 16 BR/EDR links of three devices and their security took lines 1–26): the BR/EDR links
    /// without addresses, classes and the frames of who paged (``linksGroup``), the security line without the frames of
    /// its routine lists (``securityGroup``), a device's digest without its routine AVRCP and SDP counts. Each keeps what
    /// went wrong with its frames; the sentences themselves are told after the findings. Not in `diagnose --json`.
    public var tight: [StorySentence] = []

    public init(sentences: [StorySentence] = [], digests: [StorySentence] = [], tight: [StorySentence] = []) {
        self.sentences = sentences
        self.digests = digests
        self.tight = tight
    }

    /// The characters a tight form must save to be offered (the first screen takes it only where it saves a line): more
    /// than one link's address and frames, so that one link, one stream stays as it is told.
    static let tightSaving = 60

    /// The group of the LE connection attempts sentence, for its tight form (``tight``).
    public static let attemptsGroup = "\u{0}LE attempts"
    /// The group of the BR/EDR links sentence, for its tight form (``tight``).
    public static let linksGroup = "\u{0}BR/EDR links"
    /// The group of the "Security:" line, for its tight form (``tight``).
    public static let securityGroup = "\u{0}security"

    public init(_ e: Evidence, findings: [Diagnosis]) {
        var s: [StorySentence] = []
        if let none = Self.noLink(e) { s.append(none) }
        if let links = Self.leLinks(e) { s.append(links) }
        if let terminates = Self.unacknowledgedTerminates(e) { s.append(terminates) }
        if var attempts = Self.leAttempts(e) {
            if var short = Self.leAttempts(e, tight: true), short.text.count < attempts.text.count {
                (attempts.group, short.group) = (Self.attemptsGroup, Self.attemptsGroup)
                tight.append(short)
            }
            s.append(attempts)
        }
        if let unknown = Self.unknownTransport(e) { s.append(unknown) }
        s += Self.fuzzing(e)
        if var classic = Self.classic(e) {
            // Several links only: one link's class and page frame stay told (one link, one stream stays as it is).
            if e.connections.filter(\.isBREDR).count > 1, var short = Self.classic(e, tight: true),
                short.text.count + Self.tightSaving <= classic.text.count
            {
                (classic.group, short.group) = (Self.linksGroup, Self.linksGroup)
                tight.append(short)
            }
            s.append(classic)
        }
        // Security before the BR/EDR audio lines: with several audio devices their profile lines would push it off the
        // first screen (the Sony bug report: from line 30 to line 10).
        var security = Self.security(e, findings: findings)
        if security.count == 1, var short = Self.security(e, findings: findings, tight: true).first,
            short.text.count + Self.tightSaving <= security[0].text.count
        {
            (security[0].group, short.group) = (Self.securityGroup, Self.securityGroup)
            tight.append(short)
        }
        s += security
        let audio = Self.audioFolding(e)
        tight += audio.tight
        if var calls = Self.synchronousLine(e) {
            calls.group = audio.callsGroup
            s.append(calls)
        }
        s += audio.sentences
        digests = audio.digests
        if let leAudio = Self.leAudio(e, findings: findings) { s.append(leAudio) }
        if let data = Self.data(e, findings: findings) { s.append(data) }
        if let setup = Self.linkSetup(e) { s.append(setup) }
        s += Self.updates(e)
        s += Self.unseen(e)
        sentences = s
    }

    public var isEmpty: Bool { sentences.isEmpty }

    /// `6 lost by supervision timeout (0x08), 5 failed to be established (0x3E)`: groups of (what, frames), largest
    /// first, ties in order of first appearance.
    static func folded(_ groups: [(String, [Int])]) -> String {
        var order: [String] = []
        var frames: [String: [Int]] = [:]
        for (what, f) in groups {
            if frames[what] == nil { order.append(what) }
            frames[what, default: []] += f
        }
        let ranked = order.enumerated().sorted { a, b in
            let (na, nb) = (frames[a.element]!.count, frames[b.element]!.count)
            return na != nb ? na > nb : a.offset < b.offset
        }
        return ranked.map { "\(frames[$0.element]!.count) \($0.element)" }.joined(separator: ", ")
    }

    /// `c5:34:18:42:4c:43 ×6, 5c:b2:60:06:49:73 ×5`: names by how often they appear (at most `limit`).
    static func tally(_ names: [String], limit: Int = 4) -> String {
        var order: [String] = []
        var count: [String: Int] = [:]
        for n in names {
            if count[n] == nil { order.append(n) }
            count[n, default: 0] += 1
        }
        let ranked = order.enumerated().sorted { a, b in
            count[a.element]! != count[b.element]! ? count[a.element]! > count[b.element]! : a.offset < b.offset
        }.map(\.element)
        let shown = ranked.prefix(limit).map { "\($0) ×\(count[$0]!)" }
        return (shown + (ranked.count > limit ? ["\(ranked.count - limit) more"] : [])).joined(separator: ", ")
    }

    package static func plural(_ n: Int, _ word: String, _ plural: String? = nil) -> String {
        "\(n) \(n == 1 ? word : plural ?? word + "s")"
    }
}

// MARK: - Links

extension Story {
    /// `No link in the log: …`: said outright when no LE or BR/EDR connection was made, so that a log of failed pages
    /// or of scanning alone is not read as one whose links were left out.
    static func noLink(_ e: Evidence) -> StorySentence? {
        guard e.connections.isEmpty else { return nil }
        // The requests that tried to open a link (LE Create Connection, BR/EDR Create Connection) and the answers.
        let requests = e.events.filter { ev in
            switch ev.kind {
            case .createConnection, .pageRequested: true
            default: false
            }
        }
        let answered = e.events.contains { ev in
            switch ev.kind {
            case .connectionComplete, .classicConnectionComplete: true
            default: false
            }
        }
        let text =
            !requests.isEmpty
            ? "No link in the log: none of its \(plural(requests.count, "connection attempt")) succeeded."
            : answered
                ? "No link in the log: no LE or BR/EDR connection was established."
                : e.records == 0 && e.completeness?.unreadRest != nil
                    ? "No link can be told: not one record of the file could be read."
                    : "No link in the log: no LE or BR/EDR connection was made or attempted in its \(plural(e.records, "record"))."
        return StorySentence(.links, text, frames: requests.map(\.frame))
    }

    /// `14 LE links to 4 peripherals (…): 6 lost by supervision timeout (0x08), …, 3 closed by this side (power off)`.
    static func leLinks(_ e: Evidence) -> StorySentence? {
        let links = e.connections.filter(\.isLE)
        guard !links.isEmpty else { return nil }
        let peers = links.map { e.deviceName($0) }
        let distinct = Set(peers).count
        let roles = Set(links.compactMap(\.role))
        let noun =
            e.isAirCapture || roles == [.central] ? "peripheral" : roles == [.peripheral] ? "central" : "peer"
        var groups: [(String, [Int])] = []
        for c in links {
            let (what, frame) = ending(c, e)
            groups.append((what, [frame]))
        }
        let version = versionUnanswered(links, e)
        let text =
            "\(plural(links.count, "LE link")) to \(plural(distinct, noun)) (\(tally(peers))): \(folded(groups))"
            + (version.map { "; " + $0.text } ?? "") + "."
        return StorySentence(.links, text, frames: links.map(\.startFrame) + groups.flatMap(\.1) + (version?.frames ?? []))
    }

    /// `The LL_TERMINATE_IND at 387 was not acknowledged in the capture: …`: an air capture's terminates no packet of the
    /// other side acknowledged (``LinkLayerTracker``'s `ll.terminate-unacknowledged`, Core Spec Vol 6, Part B, 4.5.9
    /// and 5.1.1): the link ended at the sender's word, and whether the peer heard it the capture cannot show.
    static func unacknowledgedTerminates(_ e: Evidence) -> StorySentence? {
        let frames = e.findings.filter { $0.kind.code == .llTerminateUnacknowledged }.compactMap(\.frame).sorted()
        guard !frames.isEmpty else { return nil }
        let one = frames.count == 1
        return StorySentence(
            .links,
            "The LL_TERMINATE_IND at \(list(frames)) \(one ? "was" : "were") not acknowledged in the capture: no later packet of the other side moves its NESN past \(one ? "it" : "them").",
            frames: frames)
    }

    /// How a connection ended, folded with its like (`lost by supervision timeout (0x08)`), and the frame that says so.
    static func ending(_ c: Connection, _ e: Evidence) -> (String, Int) {
        let thisSide = e.thisSide
        let peer = e.side(.peer)
        guard let end = c.lifecycle.ending else {
            // Air: the sniffer stopped following it (its last packet long before the capture's end), nothing said after.
            if let last = c.lifecycle.followedUntil { return ("not followed by the sniffer to its end", last.frame) }
            return (e.isAirCapture ? "with no end in the capture" : "still open when the log ends", c.endFrame ?? e.lastFrame)
        }
        let code = end.code.map { hex($0.rawValue) } ?? ""
        if end.inferredFrom != nil {
            // Not seen: the air capture went on without the link (``LinkSilence``); the words say it was inferred.
            if end.reason == LinkSilence.encryptedTerminateReason {
                return ("probably closed by \(end.endedBy == .local ? thisSide : peer) (LL_TERMINATE_IND encrypted, inferred)", end.frame)
            }
            switch end.endedBy {
            case .link: return (linkLoss(end.code) + ", inferred", end.frame)
            case .peer: return ("left by \(peer) without LL_TERMINATE_IND, inferred", end.frame)
            default:
                return (
                    end.reason == LinkSilence.endedUnseen
                        ? "ended with no LL_TERMINATE_IND in the capture" : "no longer heard by the sniffer", end.frame
                )
            }
        }
        switch end.endedBy {
        case .local:
            let request = end.requestFrame.flatMap { f in e.events.first { $0.frame == f } }
            if let r = request, case .disconnectCommand(_, let reason) = r.kind, reason == .remotePowerOff {
                return ("closed by \(thisSide) (power off)", end.frame)
            }
            return ("closed by \(thisSide) (\(code))", end.frame)
        case .peer:
            // This side's Disconnect refused while the peer's end was on its way (HH-04's "ended anyway", the blueprobe
            // Echo Auto: 0x12 at 22345, the peer's 0x13 at 22346): both told, or the end reads as this side's.
            let refused = e.events.last { x in
                guard x.connection == c.number, x.frame < end.frame, case .commandFailed(let op, _, _) = x.kind, op == .disconnect
                else { return false }
                return end.timestamp.microseconds(since: x.timestamp) < 2_000_000
            }
            let crossed = refused.flatMap { r -> String? in
                guard case .commandFailed(_, let status, _) = r.kind else { return nil }
                return " while this side's Disconnect was refused (\(hex(status.rawValue)))"
            }
            return ("ended by \(peer) (\(end.code.map(codeName) ?? end.reason))" + (crossed ?? ""), end.frame)
        case .link:
            return (linkLoss(end.code), end.frame)
        case .unknown:
            return (end.code.map { "ended (\(codeName($0)))" } ?? end.reason, end.frame)
        }
    }

    static func linkLoss(_ code: HCIStatus?) -> String {
        switch code {
        case .connectionTimeout: "lost by supervision timeout (0x08)"
        case .connectionFailedToBeEstablished: "failed to be established (0x3E)"
        case .llResponseTimeout: "lost by an LL response timeout (0x22)"
        case .instantPassed: "lost: an instant passed (0x28)"
        case .connectionTerminatedMICFailure: "lost to a MIC failure (0x3D)"
        default: "lost (\(code.map(codeName) ?? "no reason"))"
        }
    }

    /// `35 more LE connection attempts ended without a link: 35 cancelled by this side (0x02 after LE Create Connection
    /// Cancel)`.
    /// `tight` (``tight``): the cancels without the command's name, and one kind of end said once ("221 LE connection
    /// attempts, all cancelled by this side in the background by accept list (0x02)").
    static func leAttempts(_ e: Evidence, tight: Bool = false) -> StorySentence? {
        var groups: [(String, [Int])] = []
        var cancelPending = false
        // Whether the latest LE Create Connection named no peer (initiator filter policy 1): a background connection by
        // the Filter Accept List, which a stack cancels and re-arms as routine (the fossibot Pixel log, 295 … 548).
        var byAcceptList = false
        for ev in e.events {
            switch ev.kind {
            case .createConnection(_, let peer):
                byAcceptList = peer == nil
            case .createConnectionCancel:
                cancelPending = true
            case .connectionComplete(_, let status, _) where status != .success:
                let cancelled = cancelPending && status == .unknownConnectionIdentifier
                let how =
                    byAcceptList ? (tight ? " in the background by accept list" : " while connecting in the background by accept list") : ""
                let command = tight ? "0x02" : "LE Create Connection Cancel, 0x02"
                groups.append(
                    (
                        cancelled ? "cancelled by this side\(how) (\(command))" : "failed (\(codeName(status)))",
                        [ev.frame]
                    ))
                cancelPending = false
            case .connectionComplete:
                cancelPending = false
            default:
                break
            }
        }
        guard !groups.isEmpty else { return nil }
        if tight, groups.count > 1, Set(groups.map(\.0)).count == 1 {
            return StorySentence(.links, "\(groups.count) LE connection attempts, all \(groups[0].0).", frames: groups.flatMap(\.1))
        }
        let text = "\(plural(groups.count, "LE connection attempt")) ended without a link: \(folded(groups))."
        return StorySentence(.links, text, frames: groups.flatMap(\.1))
    }

    /// BR/EDR: pages that failed (per device, with the status) and the links that opened, with how each ended. `tight`
    /// (``tight``): devices by their names alone, without their classes, who paged as counts without frames.
    static func classic(_ e: Evidence, tight: Bool = false) -> StorySentence? {
        var failed: [(peer: String, status: HCIStatus, frame: Int)] = []
        for ev in e.events {
            if case .classicConnectionComplete(_, let status, let peer, _) = ev.kind, status != .success {
                failed.append((peer, status, ev.frame))
            }
        }
        let links = e.connections.filter(\.isBREDR)
        guard !failed.isEmpty || !links.isEmpty else { return nil }
        var parts: [String] = []
        let classes = deviceClasses(links, e)
        var overlapFrames: [Int] = []
        let peers = links.map { e.deviceName($0) }
        if !links.isEmpty {
            let endings = links.map { c in ending(c, e) }
            var who = tally(tight ? peers.map(withoutAddress) : peers), paged = paging(links, tight: tight)
            if Set(peers).count == 1 {
                if !tight, let k = classes.first {
                    // The peer's page carries its class: told as one (`the peer, a Phone (Smartphone), connected …`).
                    if links.count == 1, let p = links[0].paging, !p.byThisSide, p.frame == k.frame, let text = ClassOfDevice.name(k.cod) {
                        paged = ", the peer, \(text), connected to this side (its Connection Request, \(p.frame))"
                    } else if let text = ClassOfDevice.name(k.cod, note: "Class of Device at \(k.frame)") {
                        who += ", \(text)"
                    }
                }
                parts.append("\(plural(links.count, "BR/EDR link")) with \(who)\(paged): \(folded(endings.map { ($0.0, [$0.1]) }))")
            } else {
                // Several devices: each with its class and its own endings, so the reader sees which device did what.
                parts.append(
                    "\(plural(links.count, "BR/EDR link")) with \(Set(peers).count) devices\(paged): " + perDevice(links, e, tight: tight))
            }
            if let version = versionUnanswered(links, e) {
                parts[parts.count - 1] += "; " + version.text
                overlapFrames += version.frames
            }
            if let both = overlap(links, e) {
                parts.append(both.text)
                overlapFrames += both.frames
            }
        }
        if !failed.isEmpty {
            let devices = Set(failed.map(\.peer)).count
            let statuses = Set(failed.map(\.status.rawValue))
            let byStatus =
                statuses.count == 1
                ? "all \(failed[0].status) (\(hex(failed[0].status.rawValue)))"
                : folded(failed.map { ("\($0.status) (\(hex($0.status.rawValue)))", [$0.frame]) })
            // A device named with its address above is named again by its name alone.
            let named = Set(peers)
            parts.append(
                "\(plural(failed.count, "BR/EDR connection attempt")) to \(plural(devices, "device")) failed, \(byStatus): "
                    + tally(
                        failed.map { f in
                            let label = e.peerLabel(f.peer)
                            return named.contains(label) ? nameAlone(label) : label
                        }))
        }
        let ends = links.map { ending($0, e).1 }
        let frames =
            links.map(\.startFrame) + ends + failed.map(\.frame) + links.compactMap { $0.paging?.frame } + classes.map(\.frame)
            + overlapFrames
        return StorySentence(.classic, parts.joined(separator: "; ") + ".", frames: frames)
    }

    /// Each device's Class of Device (one ``ClassOfDevice`` names) with the frame that showed it (its Connection Request or an inquiry
    /// answer), by the device's short name, in the order the devices first appear.
    static func deviceClasses(_ links: [Connection], _ e: Evidence) -> [(device: String, cod: UInt32, frame: Int)] {
        var out: [(device: String, cod: UInt32, frame: Int)] = []
        for c in links {
            guard let f = c.link.classic?.classOfDevice, let cod = f.value, ClassOfDevice.name(cod) != nil, let frame = f.source.frame
            else { continue }
            let device = e.laterName(c)
            if !out.contains(where: { $0.device == device }) { out.append((device, cod, frame)) }
        }
        return out
    }

    /// `, the peer connected to this side (its Connection Request, 51)`, `, 2 opened by this side (Create Connection 12,
    /// 40), 1 by the peer (its Connection Request, 51)`: who paged whom, from each link's role fact (its paging source).
    static func paging(_ links: [Connection], tight: Bool = false) -> String {
        let paged = links.compactMap(\.paging)
        let ours = paged.filter(\.byThisSide).map(\.frame), theirs = paged.filter { !$0.byThisSide }.map(\.frame)
        if tight {
            // Counts alone (the frames are in the sentence told after the findings).
            switch (ours.count, theirs.count) {
            case (0, 0): return ""
            case (_, 0): return ", \(ours.count == 1 && links.count == 1 ? "this side connected" : "\(ours.count) opened by this side")"
            case (0, _): return ", \(theirs.count == 1 && links.count == 1 ? "the peer connected" : "\(theirs.count) opened by the peer")"
            default: return ", \(ours.count) opened by this side, \(theirs.count) by the peer"
            }
        }
        let byUs = "Create Connection \(brief(ours))", byPeer = "its Connection Request, \(brief(theirs))"
        switch (ours.count, theirs.count) {
        case (0, 0): return ""
        case (_, 0) where links.count == 1: return ", this side connected (\(byUs))"
        case (0, _) where links.count == 1: return ", the peer connected to this side (\(byPeer))"
        case (_, 0): return ", \(ours.count) opened by this side (\(byUs))"
        case (0, _): return ", \(theirs.count) opened by the peer (\(byPeer))"
        default: return ", \(ours.count) opened by this side (\(byUs)), \(theirs.count) by the peer (\(byPeer))"
        }
    }
}
