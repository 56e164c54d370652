import BLEAnalysis
import BLECapture
import BLECore

/// `blescope diagnose` for one capture: the ranked findings, and what the log cannot show, as text (at most
/// ``width`` columns) or one JSON object (schema `schemas/diagnose.schema.json`, `blescope-diagnose/1`).
public struct DiagnosisReport: Sendable {
    public var file: String
    public var result: DiagnosisResult
    public var completeness: CaptureCompleteness?
    /// The links over time (``LinksChart``), printed before the findings; nil without a connection.
    public var links: LinksChart?

    public init(file: String, result: DiagnosisResult, completeness: CaptureCompleteness?, links: LinksChart? = nil) {
        self.file = file
        self.result = result
        self.completeness = completeness
        self.links = links
    }

    /// Text columns (the issue's default: 100).
    public static let width = 100
    /// Where a finding's text starts: after `CRITICAL  GATT-01  `.
    static let indent = 19

    /// `2 errors, 1 warning (88 rules)`, `nothing wrong found (88 rules)`; where the reader stopped before the file's
    /// end, what the verdict covers: nothing found in the records read is no answer for the rest, and a file of which no
    /// record could be read cannot tell anything.
    public var verdict: String { Self.verdict(result, completeness: completeness) }

    /// The verdict of ``verdict``, for every output that states one (`info`'s Diagnosis row too: it said "nothing wrong
    /// found" over a file of which no record could be read, where `diagnose` said "cannot tell").
    public static func verdict(_ result: DiagnosisResult, completeness: CaptureCompleteness?) -> String {
        let tally = result.tally, rules = "(\(result.rulesEvaluated) rules)"
        guard let completeness, completeness.unreadRest != nil else {
            return (tally.isEmpty ? "nothing wrong found" : tally) + " " + rules
        }
        let read = completeness.recordsRead
        if read == 0 { return "cannot tell: not one record of the file could be read (Log) " + rules }
        return (tally.isEmpty ? "nothing wrong found" : tally) + " in the \(read) record\(read == 1 ? "" : "s") read " + rules
            + "; the rest of the file could not be read (Log)"
    }

    /// The answer first: the tally, then each finding (most severe first) with its evidence, causes, facts and
    /// confidence; info findings one line each at the end.
    public func text(terminal: Terminal, width: Int = DiagnosisReport.width, verbose: Bool = false) -> String {
        var lines: [String] = []
        lines.append(terminal.paint("Diagnosis", .bold) + ": " + verdict)
        if let completeness {
            // Wrapped like the story (a completeness item can run to 500 columns on an undecrypted air capture).
            var log = wrap("Log: " + completeness.headline, width: width, first: "", rest: "    ")
            log[0] = terminal.paint("Log", .bold) + log[0].dropFirst(3)
            lines += log
        }
        if let platform = result.platformLine {
            var line = wrap("Platform: " + platform, width: width, first: "", rest: "    ")
            line[0] = terminal.paint("Platform", .bold) + line[0].dropFirst(8)
            lines += line
        }
        let shown = verbose ? result.findings : result.findings.filter { $0.severity > .info }
        // The first finding's answer (its title, and for a folded one its first instance's sentence) stays on the first
        // screen (25 lines): what the log cannot show yields first, then each device's BR/EDR profile sentences fold into
        // its digest, then the set-up sentence; what yielded is told after the findings.
        let lead = shown.first.map { min(Self.answerLines(block($0, terminal: terminal, width: width)), Self.answerRoom) } ?? 0
        // With no finding to reach, only the BR/EDR profiles fold, for the story to fit the first screen (the Sony bug
        // report: 24 profile lines of two headphones, its story ending on line 49).
        let room = Self.firstScreen - (shown.isEmpty ? 0 : 1 + lead) - lines.count
        let story = Self.storyParts(
            Self.withoutLogLineCaveat(result.story, completeness), terminal: terminal, width: width, room: room,
            order: shown.isEmpty ? [.audio] : Self.yieldOrder)
        lines += story.shown
        for d in shown { lines.append(""); lines += block(d, terminal: terminal, width: width) }
        if !story.yielded.isEmpty {
            lines.append("")
            lines.append(terminal.paint("Story", .bold) + ", continued:")
            lines += story.yielded.flatMap { wrap($0.text, width: width, first: "  ", rest: "    ") }
        }
        if let links {
            lines.append("")
            // Wrapped: with the sniff key it runs past 100 columns.
            let sniff = links.hasSniff ? "▒ sniff mode, " : ""
            let origin = links.originAfterNotes.map { "frame \($0), after the logger's notes" } ?? "the first record"
            var head = wrap(
                "Links over time (seconds from \(origin); █ up, \(sniff)\(links.endKey), ✕ lost):", width: width, first: "",
                rest: "    ")
            head[0] = terminal.paint("Links", .bold) + head[0].dropFirst(5)
            lines += head
            for row in links.compactRows() { lines += wrap(row.ending, width: width, first: "  " + row.head + " ", rest: "      ") }
        }
        let context = result.findings.filter { $0.severity == .info }
        if !verbose && !context.isEmpty {
            lines.append("")
            lines.append(terminal.paint("Context", .bold) + " (info):")
            for d in context { lines += wrap("\(d.rule)  \(Self.summaryLine(d))", width: width, first: "  ", rest: "    ") }
        }
        let text = lines.joined(separator: "\n") + "\n"
        let note = NotationLegend.note(for: text, width: width)
        return note.isEmpty ? text : text + "\n" + note
    }

    /// The story without its caveat for what the Log line above it says whole (``CaptureCompleteness/
    /// headlineMessageInFull``): the same three lines twice on the first screen (a log of sent packets only, a filtered
    /// snoop log, a file unreadable past a point). `info` and the report, which tell the completeness below the story,
    /// keep it.
    static func withoutLogLineCaveat(_ story: Story, _ completeness: CaptureCompleteness?) -> Story {
        guard let said = completeness?.headlineMessageInFull else { return story }
        var story = story
        story.sentences.removeAll { $0.topic == .unseen && $0.text == Story.caveat(said) }
        return story
    }

    /// `Story:` then each sentence, wrapped under a two-space indent (nothing when the story is empty); within `room`
    /// lines, without the sentences that yield (``storyParts``).
    public static func storyLines(_ story: Story, terminal: Terminal, width: Int = DiagnosisReport.width, room: Int? = nil) -> [String] {
        storyParts(story, terminal: terminal, width: width, room: room).shown
    }

    /// What gives way on the first screen, first to last, when the story would push the first finding's answer past it:
    /// what the log cannot show (its caveats), then each device's BR/EDR profile sentences (its digest stays in their
    /// place), then how the busiest link was set up, then the tight forms (``Story/tight``: the LE connection attempts,
    /// the BR/EDR links, the security line and the digests without their routine lists). What gave way is told after
    /// the findings. The data that moved stays: it carries a story's points (the Nespresso log's 20 l2ping-style probes).
    enum Yield: Equatable {
        case topic(StorySentence.Topic)
        case audio
        case tight
    }
    static let yieldOrder: [Yield] = [.topic(.unseen), .audio, .topic(.setup), .tight]

    /// The story's lines that fit in `room` (all of them without a room), and the sentences that yielded, in order.
    static func storyParts(
        _ story: Story, terminal: Terminal, width: Int, room: Int?, order: [Yield] = yieldOrder
    ) -> (shown: [String], yielded: [StorySentence]) {
        guard !story.isEmpty else { return ([], []) }
        func lines(_ sentences: [StorySentence]) -> [String] {
            [terminal.paint("Story", .bold) + ":"] + sentences.flatMap { wrap($0.text, width: width, first: "  ", rest: "    ") }
        }
        var kept = story.sentences, yielded: [StorySentence] = []
        guard let room else { return (lines(kept), []) }
        for step in order where lines(kept).count > room {
            switch step {
            case .topic(let topic):
                yielded += kept.filter { $0.topic == topic }
                kept.removeAll { $0.topic == topic }
            case .audio:
                // Device by device, the one whose sentences take the most lines first, until the story fits.
                let size = story.digests.compactMap(\.group).map { g in (g, lines(kept.filter { $0.group == g }).count) }
                let devices = size.indices.sorted { a, b in size[a].1 != size[b].1 ? size[a].1 > size[b].1 : a < b }.map { size[$0].0 }
                // A device folds only where its digest saves lines (one short sentence stays as it is).
                var folding = Set<String>()
                var folded = (kept: kept, yielded: [StorySentence]())
                for device in devices where lines(folded.kept).count > room {
                    let next = audioFolded(kept, digests: story.digests, devices: folding.union([device]))
                    guard lines(next.kept).count < lines(folded.kept).count else { continue }
                    folding.insert(device)
                    folded = next
                }
                kept = folded.kept
                yielded += folded.yielded
            case .tight:
                let tightened = tightFolded(kept, story: story, room: room) { lines($0).count }
                kept = tightened.kept
                yielded += tightened.yielded
            }
        }
        return (kept.isEmpty ? [] : lines(kept), story.sentences.filter { s in yielded.contains(s) })
    }

    /// `kept` with each group's sentences (or its digest) replaced by its tight form (``Story/tight``), the one that saves
    /// the most lines first, each only where it saves a line, until the story's lines (`count`) fit `room`; the story's
    /// sentences replaced.
    static func tightFolded(
        _ kept: [StorySentence], story: Story, room: Int, count: ([StorySentence]) -> Int
    ) -> (kept: [StorySentence], yielded: [StorySentence]) {
        func replaced(_ sentences: [StorySentence], by form: StorySentence) -> [StorySentence] {
            var out: [StorySentence] = [], placed = false
            for s in sentences {
                guard s.group == form.group else {
                    out.append(s)
                    continue
                }
                if !placed { out.append(form) }
                placed = true
            }
            return out
        }
        let saving = story.tight.map { count(kept) - count(replaced(kept, by: $0)) }
        let order = story.tight.indices.sorted { saving[$0] != saving[$1] ? saving[$0] > saving[$1] : $0 < $1 }
        var out = kept, yielded: [StorySentence] = []
        for i in order where count(out) > room {
            let form = story.tight[i]
            let next = replaced(out, by: form)
            guard count(next) < count(out) else { continue }
            yielded += out.filter { $0.group == form.group && story.sentences.contains($0) }
            out = next
        }
        return (out, yielded)
    }

    /// The sentences with the BR/EDR profile sentences of `devices` replaced by their digests, each in the place of
    /// the device's first sentence, and the calls' audio links sentence once every device with a digest is folded (its
    /// links are told in their devices' digests); the replaced sentences.
    static func audioFolded(
        _ sentences: [StorySentence], digests: [StorySentence], devices: Set<String>
    ) -> (kept: [StorySentence], yielded: [StorySentence]) {
        var kept: [StorySentence] = [], yielded: [StorySentence] = [], placed = Set<String>()
        let all = Set(digests.compactMap(\.group)).isSubset(of: devices)
        for s in sentences {
            guard let group = s.group, devices.contains(group) || (all && group == Story.audioLinksGroup) else {
                kept.append(s)
                continue
            }
            yielded.append(s)
            if placed.insert(group).inserted, let digest = digests.first(where: { $0.group == group }) { kept.append(digest) }
        }
        return (kept, yielded)
    }

    /// The most lines of the first finding's answer the story makes room for: its title and three more (the band log's
    /// GATT-01: "the ATT bearer timed out after 30 s and the link was torn down"), not a long message's every line.
    static let answerRoom = 4

    /// How many of a finding's lines give its answer: its title and, folded, its first instance's sentence (before
    /// its evidence, causes and facts).
    static func answerLines(_ block: [String]) -> Int {
        let pad = String(repeating: " ", count: indent)
        let details = ["evidence: ", "likely: ", "fact: ", "confidence lowered: "].map { pad + $0 }
        return block.firstIndex { line in details.contains { line.hasPrefix($0) } } ?? block.count
    }

    /// The lines of a terminal's first screen, that the first finding's first line must reach.
    public static let firstScreen = 25

    /// `"story": [{"topic", "text", "frames"}]` (diagnose.schema.json#/$defs/story).
    static func writeStory(_ story: Story, to w: inout JSONWriter) {
        w.beginArray("story")
        for s in story.sentences {
            w.beginObject()
            w.field("topic", s.topic.rawValue)
            w.field("text", s.text)
            w.beginArray("frames")
            for f in s.frames { w.value(f) }
            w.endArray()
            w.endObject()
        }
        w.endArray()
    }

    /// `5× failed to be established (0x3E) to C5:34:1A:…, frames 1539, 1634, …` for a folded finding, else its sentence.
    public static func summaryLine(_ d: Diagnosis) -> String {
        guard d.count > 1 else { return d.message }
        let frames = d.occurrences.prefix(8).map(String.init).joined(separator: ", ") + (d.count > 8 ? ", …" : "")
        return "\(d.count)× \(d.headline), frames \(frames)"
    }

    func block(_ d: Diagnosis, terminal: Terminal, width: Int) -> [String] {
        let label = d.severity.rawValue.uppercased()
        let style: Terminal.Style = d.severity >= .error ? .red : d.severity == .warning ? .yellow : .cyan
        let head = label.padding(to: 10) + d.rule.padding(to: Self.indent - 10)
        let pad = String(repeating: " ", count: Self.indent)
        var out = wrap(Self.summaryLine(d), width: width, first: head, rest: pad)
        out[0] = terminal.paint(label, style) + String(out[0].dropFirst(label.count))
        if d.count > 1 { out += wrap(d.message, width: width, first: pad + "first: ", rest: pad + "       ") }
        if !d.supporting.isEmpty {
            let cited = d.supporting + [CitedFrame(d.frame, "decides")]
            let chain = cited.sorted { $0.frame < $1.frame }.map { "#\($0.frame) \($0.text)" }.joined(separator: " → ")
            out += wrap(chain, width: width, first: pad + "evidence: ", rest: pad + "          ")
        }
        if !d.causes.isEmpty {
            out += wrap(d.causes.joined(separator: "; "), width: width, first: pad + "likely: ", rest: pad + "        ")
        }
        for f in d.facts {
            out += wrap("\(f.name) \(f.value): \(f.source.description)", width: width, first: pad + "fact: ", rest: pad + "      ")
        }
        if case .lowered(let reason) = d.confidence {
            out += wrap(reason, width: width, first: pad + "confidence lowered: ", rest: pad + "  ")
        }
        return out
    }

    /// One object: the file, the tally, what the log cannot show, every finding with its frames as numbers.
    public var json: String {
        var w = JSONWriter(capacity: 4096)
        w.beginObject()
        w.field("file", file)
        w.field("schema", "blescope-diagnose/1")
        Self.writeTally(result, to: &w)
        if let c = completeness {
            w.beginObject("completeness")
            w.field("verdict", c.verdict)
            w.field("headline", c.headline)
            w.endObject()
        }
        if let p = result.platform {
            w.beginObject("platform")
            w.field("name", p.platform.rawValue)
            w.field("detail", p.detail)
            w.field("provenance", p.provenance.kind)
            w.field("frame", p.provenance.frame)
            w.field("basis", p.provenance.description)
            w.endObject()
        }
        if let side = result.thisSide {
            w.beginObject("this_side")
            w.field("name", side.name?.name)
            w.field("name_frame", side.name?.frame)
            w.field("controller", side.controllerMaker)
            w.field("hci_version", side.hciVersion)
            w.field("controller_frame", side.controller?.frame)
            w.endObject()
        }
        Self.writeStory(result.story, to: &w)
        Self.writeNames(result.names, to: &w)
        w.beginArray("findings")
        for d in result.findings { Self.write(d, names: result.names, to: &w) }
        w.endArray()
        w.endObject()
        return w.string
    }

    /// `"rules": N, "summary": {severity: count}`: how every diagnosis object opens (diagnose, info, report).
    static func writeTally(_ result: DiagnosisResult, to w: inout JSONWriter) {
        w.field("rules", result.rulesEvaluated)
        w.beginObject("summary")
        for s in DiagnosisSeverity.allCases.reversed() { w.field(s.rawValue, result.count(s)) }
        w.endObject()
    }

    /// `{"rule", "severity", "frame", "count", "message"}`: a finding as `info --json` lists it
    /// (diagnose.schema.json#/$defs/brief).
    static func writeBrief(_ d: Diagnosis, to w: inout JSONWriter) {
        w.beginObject()
        w.field("rule", d.rule)
        w.field("severity", d.severity.rawValue)
        w.field("frame", d.frame)
        w.field("count", d.count)
        w.field("message", d.message)
        w.endObject()
    }

    static func write(_ d: Diagnosis, names: [NamedPeer] = [], to w: inout JSONWriter) {
        w.beginObject()
        w.field("rule", d.rule)
        w.field("severity", d.severity.rawValue)
        w.field("frame", d.frame)
        w.beginArray("frames")
        for f in d.frames { w.value(f) }
        w.endArray()
        w.field("count", d.count)
        w.beginArray("occurrences")
        for f in d.occurrences { w.value(f) }
        w.endArray()
        w.field("message", d.message)
        w.field("headline", d.headline)
        w.field("device", d.device)
        Self.writeName(d.device.flatMap { device in names.first { $0.address == device.prefix(17) }?.name }, key: "deviceName", to: &w)
        w.field("connection", d.connection)
        w.beginArray("supporting")
        for s in d.supporting {
            w.beginObject()
            w.field("frame", s.frame)
            w.field("text", s.text)
            w.endObject()
        }
        w.endArray()
        w.beginArray("causes")
        for c in d.causes { w.value(c) }
        w.endArray()
        w.beginArray("facts")
        for f in d.facts {
            w.beginObject()
            w.field("name", f.name)
            w.field("value", f.value)
            w.field("source", f.source.kind)
            w.field("sourceFrame", f.source.frame)
            w.field("basis", f.source.description)
            w.endObject()
        }
        w.endArray()
        switch d.confidence {
        case .high: w.field("confidence", "high")
        case .lowered(let reason):
            w.field("confidence", "lowered")
            w.field("confidenceReason", reason)
        }
        w.endObject()
    }
}

/// Words of `text` in lines of at most `width` columns (counted in characters), the first starting with `first` and
/// the others with `rest`; a word longer than a line is cut in the middle with `…` (``wrapWords`` keeps it whole).
func wrap(_ text: String, width: Int, first: String, rest: String) -> [String] {
    let room = width - rest.count
    let words = text.split(separator: " ", omittingEmptySubsequences: true).map { w in
        w.count > room ? String(w.prefix(room / 2 - 1)) + "…" + String(w.suffix(room / 2 - 1)) : String(w)
    }
    return wrapWords(words.joined(separator: " "), width: width, first: first, rest: rest)
}

extension DiagnosisReport {
    /// One pass over `capture` (no tracker: the throughput rules judge the connections' bulk tallies), the completeness
    /// verdict beside it, then the rules.
    public static func analyze(
        _ capture: CaptureFile, options: AnalyzerOptions = AnalyzerOptions(timeline: false), progress: ProgressReporter? = nil,
        rules: [any DiagnosisRule.Type] = DiagnosisRules.all
    ) -> DiagnosisReport {
        var options = options
        options.timeline = false
        // The trackers the rules read (``Observing/diagnosis``), so a stream's figures are `throughput`'s. The LE Audio
        // profiles' tracker (for LA-02, an ASE operation refused) is left to `report`.
        let (analysis, log) = LogScope.analyze(
            capture, options: options, observing: .diagnosis, progress: { progress?.update(records: $0, bytes: $1) })
        progress?.finish()
        var completeness = log.completeness
        let evidence = Self.evidence(analysis, capture: capture, completeness: completeness)
        var links = LinksChart(
            connections: analysis.connections, start: log.firstTime, end: evidence.lastTime, hasController: false,
            otaSessions: analysis.otaSessions ?? [], isoStreams: analysis.iso.streams)
        links?.originAfterNotes = log.originAfterNotes
        let result = DiagnosisEngine.diagnose(evidence, rules: rules)
        completeness.answer(result.findings)
        return DiagnosisReport(file: capture.path, result: result, completeness: completeness, links: links)
    }

    /// The pass's evidence with what only the caller knows: the completeness verdict, the capture reader's findings
    /// and the file's name (``CaptureAnalysis/evidence``). The one door to the rules for `info`, `diagnose` and
    /// `report`.
    static func evidence(_ analysis: CaptureAnalysis, capture: CaptureFile, completeness: CaptureCompleteness) -> Evidence {
        var evidence = analysis.evidence
        evidence.completeness = completeness
        evidence.findings = capture.findings + evidence.findings
        evidence.fileName = capture.path.split(separator: "/").last.map(String.init)
        evidence.platform = PlatformClues(analysis, capture: capture, fileName: evidence.fileName).identify()
        return evidence
    }

    /// A rule's page: id, severity, group and title, what it means, the evidence it reads, what to do, who else names
    /// it, and where its page is in the docs (``DiagnosisRules/explanation(_:)``); nil for an unknown id. Markdown: the
    /// section `docs/diagnosis.md` holds for it, under an anchor of its id in lower case (`#dc-01`).
    public static func explain(_ id: String, markdown: Bool = false, width: Int = DiagnosisReport.width) -> String? {
        guard let rule = DiagnosisRules.all.first(where: { $0.id.lowercased() == id.lowercased() }) else { return nil }
        let explanation = DiagnosisRules.explanation(rule.id)
        let parts: [(String, String)] = [
            ("What it means", explanation?.meaning ?? "(no explanation written yet)"), ("Evidence it reads", rule.evidence),
            ("What to do", explanation?.advice ?? "(no advice written yet)"), ("Also named by", rule.anchor),
        ]
        var lines: [String]
        if markdown {
            lines = ["<a id=\"\(anchor(rule.id))\"></a>", "", "### \(rule.id): \(rule.title)", ""]
            lines += wrap("**\(rule.severity.rawValue)**, \(rule.group.rawValue).", width: 120, first: "", rest: "")
            for (label, text) in parts { lines += wrap("**\(label)**: \(text)", width: 120, first: "- ", rest: "  ") }
        } else {
            lines = wrap(
                "\(rule.id) \(rule.severity.rawValue): \(rule.title) (\(rule.group.rawValue))", width: width, first: "", rest: "  ")
            for (label, text) in parts { lines += [""] + wrap(text, width: width, first: label + ": ", rest: "  ") }
            lines += ["", "Page: docs/diagnosis.md#\(anchor(rule.id)) (every rule: blescope diagnose --list-rules)"]
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Every rule's page in Markdown, in the table's order (the generated part of `docs/diagnosis.md`).
    public static func rulePages() -> String {
        DiagnosisRules.all.compactMap { explain($0.id, markdown: true) }.joined(separator: "\n")
    }

    /// `dc-01`: the anchor of a rule's page in `docs/diagnosis.md` (the HTML report links rule ids to it).
    public static func anchor(_ id: String) -> String { id.lowercased() }

    /// Every rule: `id  severity  title` (text), or the table of `docs/diagnosis.md` (Markdown: id, severity, group,
    /// title, evidence, anchor), generated from ``DiagnosisRules/all``.
    public static func ruleList(markdown: Bool) -> String {
        let rules = DiagnosisRules.all
        guard markdown else {
            return rules.map { "\($0.id.padding(to: 8)) \($0.severity.rawValue.padding(to: 9)) \($0.title)" }.joined(separator: "\n") + "\n"
        }
        var out = "| id | severity | group | what it finds | evidence | also named by |\n|---|---|---|---|---|---|\n"
        for r in rules {
            let cells = [r.id, r.severity.rawValue, r.group.rawValue, r.title, r.evidence, r.anchor]
            out += "| " + cells.map { $0.replacing("|", with: "\\|") }.joined(separator: " | ") + " |\n"
        }
        return out
    }
}

extension DiagnosisResult {
    /// Which stack's routine the findings were judged against (``PlatformTable``) and what says so, then this side as
    /// the log names it (its host's name, its controller): `diagnose`'s `Platform:` line and the report's platform
    /// item. Nil when the log names neither.
    public var platformLine: String? {
        let side = thisSide.map { "this side " + $0.summary }
        guard platform != nil || side != nil else { return nil }
        return ([platform?.summary ?? "not named by the log"] + [side].compactMap { $0 }).joined(separator: "; ")
    }
}
