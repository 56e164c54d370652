import BLEAnalysis
import BLECore

/// Frames to times for what carries only a frame (a diagnosis finding): the time of every 256th record and of the last,
/// interpolated between, so the links chart places a finding on the time axis without a second pass.
public struct FrameClock: Sendable, Hashable {
    static let stride = 256
    private(set) var frames: [Int] = []
    private(set) var times: [Int64] = []
    private var lastFrame = 0
    private var lastTime: Int64 = 0

    public init() {}

    /// A silence longer than this has both its edges sampled: interpolating across it by frame count put a frame
    /// after it far from its time (the Cobra iPhone log's loss at 740, after 5.4 s of silence and before the phone's
    /// scanning, was drawn at 123.6 s where its link ended at 61.0 s).
    static let gapMicroseconds: Int64 = 1_000_000

    @inline(__always)
    mutating func add(frame: Int, timestamp: Timestamp) {
        let t = timestamp.microseconds
        let gap = lastFrame > 0 && t - lastTime > Self.gapMicroseconds
        if gap, lastFrame > (frames.last ?? 0) {
            frames.append(lastFrame)
            times.append(lastTime)
        }
        if gap || frame % Self.stride == 1 {
            frames.append(frame)
            times.append(t)
        }
        lastFrame = frame
        lastTime = t
    }

    /// The time of `frame`, interpolated between the two sampled records around it (nil before any record).
    public func time(ofFrame frame: Int) -> Timestamp? {
        var fs = frames, ts = times
        if lastFrame > (fs.last ?? 0) {
            fs.append(lastFrame)
            ts.append(lastTime)
        }
        guard let first = fs.first else { return nil }
        if frame <= first { return Timestamp(microseconds: ts[0]) }
        var lo = 0, hi = fs.count - 1
        if frame >= fs[hi] { return Timestamp(microseconds: ts[hi]) }
        while hi - lo > 1 {
            let mid = (lo + hi) / 2
            if fs[mid] <= frame { lo = mid } else { hi = mid }
        }
        let share = Double(frame - fs[lo]) / Double(max(1, fs[hi] - fs[lo]))
        return Timestamp(microseconds: ts[lo] + Int64((Double(ts[hi] - ts[lo]) * share).rounded()))
    }
}

/// The links of one capture over time: a lane per peer (and one for the controller of an HCI log), a bar per
/// connection from its start to its end, the end marked by who ended it and why (``ConnectionLifecycle``), ticks for
/// what changed on the link, OTA sessions and LE Audio streams as spans, the diagnosis findings on the time axis.
/// One model, drawn as SVG (``svg(index:)``) and as one text line per connection (``textLines(width:)``).
public struct LinksChart: Sendable {
    /// Something that happened on a connection at one frame: `encryption`, `mtu`, `phy`, `data-length`, `parameters`.
    public struct Tick: Sendable, Hashable {
        public var frame: Int
        public var time: Timestamp
        public var kind: String
        public var text: String
    }

    /// A stretch of a connection (an OTA session, `ota`) or of the controller (an isochronous stream, `iso`).
    public struct Span: Sendable, Hashable {
        public var kind: String
        public var startFrame: Int
        public var start: Timestamp
        public var end: Timestamp
        public var text: String
    }

    /// One connection.
    public struct Bar: Sendable, Hashable {
        public var number: Int
        public var handle: UInt16
        public var startFrame: Int
        public var start: Timestamp
        public var endFrame: Int?
        public var end: Timestamp?
        /// ``ConnectionLifecycle/EndedBy`` raw value; nil while the link is open at the capture's end.
        public var endedBy: String?
        /// The reason the link ended with, as outputs show it.
        public var reason: String?
        public var ticks: [Tick] = []
        public var spans: [Span] = []
        /// The controller's quality reports on this link, drawn as a line under the bar.
        public var rssi: [RSSIPoint] = []
        /// A link a sniffer heard on the air: no side is this side, so `local` is the central (it sent the
        /// LL_TERMINATE_IND) and `peer` the peripheral.
        public var onAir = false
    }

    public struct RSSIPoint: Sendable, Hashable {
        public var time: Timestamp
        public var dBm: Int
    }

    public struct Lane: Sendable, Hashable {
        public var label: String
        public var bars: [Bar]
        /// The controller's streams without a connection (BIS), on the controller's lane.
        public var spans: [Span] = []
        public var isController = false
    }

    /// A diagnosis finding on the time axis.
    public struct Marker: Sendable, Hashable {
        public var frame: Int
        public var time: Timestamp
        public var severity: DiagnosisSeverity
        public var rule: String
        public var text: String
        public var connection: Int?
    }

    public var start: Timestamp
    public var end: Timestamp
    public var lanes: [Lane]
    public var markers: [Marker]

    /// The chart of an analysed capture; nil when it has no record or no connection.
    public init?(_ f: FileAnalysis) {
        guard let stats = f.info?.statistics else { return nil }
        let markers = f.diagnosis.atLeast(.warning).compactMap { d -> Marker? in
            guard let t = f.frameClock.time(ofFrame: d.frame) else { return nil }
            return Marker(
                frame: d.frame, time: t, severity: d.severity, rule: d.rule, text: DiagnosisReport.summaryLine(d),
                connection: d.connection)
        }
        self.init(
            connections: f.connections, start: stats.minTimestamp, end: stats.maxTimestamp,
            hasController: stats.commands + stats.events > 0, otaSessions: f.otaSessions, isoStreams: f.iso.streams,
            markers: markers, synchronousLinks: f.classic.synchronousLinks)
    }

    /// The chart of `connections` over the capture from `start` to `end` (its first and last records); nil without
    /// a record or a connection. `hasController`: an HCI log, whose controller gets a lane.
    public init?(
        connections: [Connection], start: Timestamp?, end: Timestamp?, hasController: Bool, otaSessions: [OTASession] = [],
        isoStreams: [ISOStream] = [], markers: [Marker] = [], synchronousLinks: [SynchronousLink] = []
    ) {
        guard let first = start, let last = end, !connections.isEmpty else { return nil }
        self.start = first
        self.end = max(last, Timestamp(microseconds: first.microseconds + 1))
        var byPeer: [String: Int] = [:]
        var lanes: [Lane] = []
        for c in connections.sorted(by: { ($0.startTime, $0.number) < ($1.startTime, $1.number) }) {
            let key = c.peerAddress ?? "handle " + hex(c.handle, width: 4)
            var bar = Self.bar(c, otaSessions: otaSessions, isoStreams: isoStreams, captureEnd: last)
            if c.isBREDR { bar.spans += ClassicLinkColumns.spans(c, synchronous: synchronousLinks, until: c.endTime ?? last) }
            if let i = byPeer[key] {
                lanes[i].bars.append(bar)
            } else {
                byPeer[key] = lanes.count
                lanes.append(Lane(label: key, bars: [bar]))
            }
        }
        // An HCI log has a controller: its lane holds the streams that belong to no connection (BIS).
        if hasController {
            var controller = Lane(label: "controller", bars: [], isController: true)
            for s in isoStreams where s.connectionNumber == nil { controller.spans.append(Self.span(s, until: last)) }
            lanes.insert(controller, at: 0)
        }
        self.lanes = lanes
        self.markers = markers
    }

    static func bar(_ c: Connection, otaSessions: [OTASession], isoStreams: [ISOStream], captureEnd: Timestamp) -> Bar {
        let ending = c.lifecycle.ending
        var bar = Bar(
            number: c.number, handle: c.handle, startFrame: c.startFrame, start: c.startTime, endFrame: c.endFrame,
            end: c.endTime, endedBy: c.endFrame == nil ? nil : ending?.endedBy.rawValue ?? "unknown",
            reason: c.endFrame == nil ? nil : ending.map(Self.reason) ?? c.disconnectReason ?? "disconnected")
        bar.onAir = c.accessAddress != nil
        // An air link the sniffer stopped following is drawn to its last packet, and nothing claimed after it.
        if c.endFrame == nil, let last = c.lifecycle.followedUntil {
            (bar.endFrame, bar.end, bar.endedBy) = (last.frame, last.timestamp, Self.notFollowed)
            bar.reason = "followed until frame \(last.frame): the sniffer heard nothing of the link after it, and no end of it"
        }
        for change in LinkColumns.changes(of: c.link) {
            bar.ticks.append(Tick(frame: change.frame, time: change.time, kind: change.kind, text: change.text))
        }
        bar.ticks.sort { ($0.frame, $0.kind) < ($1.frame, $1.kind) }
        for s in otaSessions where s.connectionNumber == c.number {
            bar.spans.append(
                Span(
                    kind: "ota", startFrame: s.startFrame, start: s.startTime, end: s.endTime,
                    text: "\(s.protocolName.rawValue) \(s.result.description), frames \(s.startFrame)–\(s.endFrame)"))
        }
        bar.rssi = c.linkQuality.map { RSSIPoint(time: $0.timestamp, dBm: Int($0.quality.rssi)) }
        let open = c.endTime ?? captureEnd
        for s in isoStreams where s.connectionNumber == c.number { bar.spans.append(span(s, until: open)) }
        return bar
    }

    /// The end's reason, and what it was inferred from when the capture does not show it.
    static func reason(_ e: ConnectionLifecycle.Ending) -> String {
        e.inferredFrom.map { "\(e.reason), inferred: \($0)" } ?? e.reason
    }

    static func span(_ s: ISOStream, until open: Timestamp) -> Span {
        var text = "LE Audio \(s.label) from frame \(s.establishedFrame)"
        if let end = s.endFrame { text += " to \(end)" + (s.endReason.map { ": \($0.description)" } ?? "") }
        return Span(kind: "iso", startFrame: s.establishedFrame, start: s.establishedTime, end: s.endTime ?? open, text: text)
    }

    /// Seconds from the capture's first record.
    func offset(_ t: Timestamp) -> Double { Double(t.microseconds(since: start)) / 1e6 }

    var spanSeconds: Double { max(offset(end), 1e-6) }

    /// ``Bar/endedBy`` of an air link the sniffer stopped following (no end in the capture).
    public static let notFollowed = "not-followed"

    /// `■` this side, `◆` the peer, `✕` the link was lost, `?` unknown, `▸` open at the capture's end, `…` not followed
    /// after its last packet.
    static func endGlyph(_ endedBy: String?) -> String {
        switch endedBy {
        case nil: "▸"
        case Self.notFollowed: "…"
        case "local": "■"
        case "peer": "◆"
        case "link": "✕"
        default: "?"
        }
    }

    static func endWords(_ endedBy: String?, onAir: Bool = false) -> String {
        switch endedBy {
        case nil: "open at the capture's end"
        case Self.notFollowed: "not followed after"
        case "local": onAir ? "ended by the central" : "ended by this side"
        case "peer": onAir ? "ended by the peripheral" : "ended by the peer"
        case "link": "the link was lost"
        default: "ended (who: unknown)"
        }
    }

    /// Every link was heard on the air (a sniffer's capture): its ends are the central's or the peripheral's.
    public var onAir: Bool {
        let bars = lanes.flatMap(\.bars)
        return !bars.isEmpty && bars.allSatisfy(\.onAir)
    }

    public static let legend =
        "█ connected · end: ■ this side ended it, ◆ the peer, ✕ the link was lost, ? unknown, ▸ open at the end, … not followed after"
    public static let airLegend =
        "█ connected · end: ■ the central ended it, ◆ the peripheral, ✕ the link was lost, ? unknown, ▸ open at the end, … not followed after"

    /// The legend for this chart's links (``onAir``).
    public var legendText: String { (onAir ? Self.airLegend : Self.legend) + (hasSniff ? " · ▒ sniff mode (BR/EDR)" : "") }

    /// `■ this side ended it, ◆ the peer` (or the central and the peripheral on the air), for a one-line legend.
    /// The frame the time axis starts at when only the logger's notes come before it (``LogScope/originAfterNotes``).
    public var originAfterNotes: Int?

    public var endKey: String { onAir ? "■ the central ended it, ◆ the peripheral" : "■ this side ended it, ◆ the peer" }

    /// One line per connection: its number, peer, a `width`-column track of the capture with the connection drawn,
    /// its times, and how it ended.
    public func textLines(width: Int = 40) -> [String] {
        var rows: [(Int, String)] = []
        let numberWidth = String(lanes.flatMap(\.bars).map(\.number).max() ?? 1).count + 1
        let labelWidth = min(24, lanes.map(\.label.count).max() ?? 8)
        for lane in lanes {
            for b in lane.bars {
                let from = column(b.start, width: width)
                let to = max(from, column(b.end ?? end, width: width))
                var track = Array(repeating: Character(" "), count: width)
                for i in from...to { track[i] = "█" }
                markSniff(&track, b, from: from, to: to, width: width)
                track[to] = Character(Self.endGlyph(b.endedBy))
                let number = "#\(b.number)".padding(utf16Length: numberWidth)
                let label = String(lane.label.prefix(labelWidth)).padding(utf16Length: labelWidth)
                let times = "\(String(fractionDigits: 3, offset(b.start)))–\(String(fractionDigits: 3, offset(b.end ?? end))) s"
                var line = "\(number) \(label) |\(String(track))| \(times) frames \(b.startFrame)–\(b.endFrame.map(String.init) ?? "end")"
                line += ": " + Self.endWords(b.endedBy, onAir: b.onAir) + (b.reason.map { " (\($0))" } ?? "")
                let extras = Self.tickSummary(b)
                if !extras.isEmpty { line += "; " + extras }
                rows.append((b.number, line))
            }
        }
        return rows.sorted { $0.0 < $1.0 }.map(\.1)
    }

    /// The terminal's form (`diagnose`): per connection its number, peer, a `track`-column track (`·` where it was not
    /// up) and its times in `head`, how it ended in `ending` (the caller wraps it to its width).
    public func compactRows(track: Int = 20) -> [(head: String, ending: String)] {
        let numberWidth = String(lanes.flatMap(\.bars).map(\.number).max() ?? 1).count + 1
        let labelWidth = min(17, lanes.map(\.label.count).max() ?? 8)
        var rows: [(Int, String, String)] = []
        for lane in lanes {
            for b in lane.bars {
                let from = column(b.start, width: track)
                let to = max(from, column(b.end ?? end, width: track))
                var cells = Array(repeating: Character("·"), count: track)
                for i in from...to { cells[i] = "█" }
                markSniff(&cells, b, from: from, to: to, width: track)
                cells[to] = Character(Self.endGlyph(b.endedBy))
                let number = "#\(b.number)".padding(utf16Length: numberWidth)
                let label = String(lane.label.prefix(labelWidth)).padding(utf16Length: labelWidth)
                let times = "\(String(fractionDigits: 1, offset(b.start)))–\(String(fractionDigits: 1, offset(b.end ?? end))) s"
                let words: String =
                    switch b.endedBy {
                    case nil: "open at the end"
                    case Self.notFollowed: "not followed after"
                    case "local": b.onAir ? "the central ended it" : "this side ended it"
                    case "peer": b.onAir ? "the peripheral ended it" : "the peer ended it"
                    case "link": "lost"
                    default: "ended"
                    }
                let ending = words + (b.reason.map { ": \($0)" } ?? "") + (b.endFrame.map { " (frame \($0))" } ?? "")
                rows.append((b.number, "\(number) \(label) |\(String(cells))| \(times)", ending))
            }
        }
        return rows.sorted { $0.0 < $1.0 }.map { ($0.1, $0.2) }
    }

    /// `encryption on at frame 40, MTU 247, 1 OTA session, 2 LE Audio streams`.
    static func tickSummary(_ b: Bar) -> String {
        var parts: [String] = []
        if let e = b.ticks.first(where: { $0.kind == "encryption" && $0.text == "encryption on" }) {
            parts.append("encrypted at frame \(e.frame)")
        }
        if let m = b.ticks.last(where: { $0.kind == "mtu" }) { parts.append(m.text) }
        if let p = b.ticks.last(where: { $0.kind == "phy" }) { parts.append(p.text) }
        let ota = b.spans.filter { $0.kind == "ota" }.count, iso = b.spans.filter { $0.kind == "iso" }.count
        if ota > 0 { parts.append("\(ota) OTA session\(ota == 1 ? "" : "s")") }
        if iso > 0 { parts.append("\(iso) LE Audio stream\(iso == 1 ? "" : "s")") }
        return parts.joined(separator: ", ")
    }

    /// Whether some BR/EDR link was in sniff mode (its legend then names ``sniffGlyph``).
    public var hasSniff: Bool { lanes.contains { $0.bars.contains { $0.spans.contains { $0.kind == "sniff" } } } }
    public static let sniffGlyph: Character = "▒"

    /// ``sniffGlyph`` over the columns of a BR/EDR link's track whose middle falls in one of its sniff periods (Mode
    /// Change to sniff until the next change): the link up, but awake only at its sniff anchors.
    func markSniff(_ cells: inout [Character], _ b: Bar, from: Int, to: Int, width: Int) {
        let sniff = b.spans.filter { $0.kind == "sniff" }
        guard !sniff.isEmpty, width > 1 else { return }
        for i in from..<to {
            let middle = (Double(i) + 0.5) * spanSeconds / Double(width - 1)
            if sniff.contains(where: { offset($0.start) <= middle && middle < offset($0.end) }) { cells[i] = Self.sniffGlyph }
        }
    }

    func column(_ t: Timestamp, width: Int) -> Int {
        // Clamped before the conversion: a damaged record's time can put a point anywhere (or give NaN).
        let x = offset(t) / spanSeconds * Double(width - 1)
        return x.isNaN ? 0 : Int(min(Double(width - 1), max(0, x)))
    }
}
