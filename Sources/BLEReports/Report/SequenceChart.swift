import BLEAnalysis
import BLECore

/// The exchanges around a finding's deciding frame as a sequence chart: the central, the peripheral and, in an HCI log,
/// the controller between them as columns; each timeline row an arrow from its sender to its receiver (HCI commands and
/// events between this side's host and its controller, ATT/SMP/L2CAP between the two hosts, link-layer PDUs between the
/// central and the peripheral), requests joined to their responses, the deciding frame highlighted, long silences
/// shown as breaks with their length. Drawn from the analysis's timeline rows (``ExchangeRow``), not from their text.
public struct SequenceChart: Sendable {
    public enum Column: Int, Sendable { case central = 0, controller, peripheral }

    public var rows: [ExchangeRow]
    public var decidingFrame: Int
    /// The role of the side whose log it is (an HCI log); nil for an air capture, whose rows have no host.
    public var localRole: Connection.Role?
    public var hasController: Bool
    /// The finding's connection: rows of other connections are drawn faded and named (`conn #2`), since their peer is
    /// not the one in the column.
    public var connection: Int?

    public init(
        rows: [ExchangeRow], decidingFrame: Int, localRole: Connection.Role?, hasController: Bool, connection: Int? = nil
    ) {
        self.rows = rows
        self.decidingFrame = decidingFrame
        self.localRole = hasController ? localRole ?? .central : nil
        self.hasController = hasController
        self.connection = connection
    }

    /// A row of another connection than the finding's.
    func isOther(_ r: ExchangeRow) -> Bool {
        guard let connection, let other = r.connection else { return false }
        return other != connection
    }

    var localColumn: Column { localRole == .peripheral ? .peripheral : .central }
    var peerColumn: Column { localRole == .peripheral ? .central : .peripheral }

    /// Sender and receiver of a row (`tx` is this side's host sending in an HCI log, the central in an air capture).
    public func ends(_ r: ExchangeRow) -> (from: Column, to: Column)? {
        guard r.direction != .unknown, r.layer != "note" else { return nil }
        guard hasController else { return r.direction == .tx ? (.central, .peripheral) : (.peripheral, .central) }
        let far: Column = r.layer == "hci" || r.layer == "iso" ? .controller : peerColumn
        return r.direction == .tx ? (localColumn, far) : (far, localColumn)
    }

    /// A silence between two rows longer than this is drawn as a break with its length.
    static let gapMicroseconds: Int64 = 500_000

    static func esc(_ s: String) -> String { SVGChart.escape(s) }
    static func c(_ v: Double) -> String { SVGChart.coordinate(v) }

    public func svg(width: Int = 900) -> String {
        let columns: [Column] = hasController ? [.central, .controller, .peripheral] : [.central, .peripheral]
        let left = 92.0, right = 70.0
        let step = (Double(width) - left - right) / Double(max(1, columns.count - 1))
        func x(_ col: Column) -> Double { left + Double(columns.firstIndex(of: col) ?? 0) * step }
        let rowHeight = 30.0, top = 40.0
        var ys: [Double] = []
        var y = top
        var breaks: [(Double, Int64)] = []
        for (i, r) in rows.enumerated() {
            if i > 0 {
                let gap = r.timestamp.microseconds(since: rows[i - 1].timestamp)
                if gap > Self.gapMicroseconds {
                    breaks.append((y + 4, gap))
                    y += 22
                }
            }
            y += rowHeight
            ys.append(y)
        }
        let height = Int(y + 20)
        let deciding = rows.first { $0.frame == decidingFrame }?.timestamp
        var out =
            "<svg class=\"chart seq\" width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\" role=\"img\" aria-label=\"Exchanges around frame \(decidingFrame)\">"
        out +=
            "<defs><marker id=\"seq-arrow\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\">"
        out += "<path d=\"M0 0L10 5L0 10z\" fill=\"#46505a\"/></marker></defs>"
        for col in columns {
            let cx = Self.c(x(col))
            out += "<text x=\"\(cx)\" y=\"16\" class=\"seqhead\">\(Self.esc(label(col)))</text>"
            out += "<line x1=\"\(cx)\" y1=\"24\" x2=\"\(cx)\" y2=\"\(height - 6)\" class=\"lifeline\"/>"
        }
        for (by, gap) in breaks {
            out += "<rect x=\"0\" y=\"\(Self.c(by))\" width=\"\(width)\" height=\"14\" class=\"seqbreak\"/>"
            out +=
                "<text x=\"\(Self.c(Double(width) / 2))\" y=\"\(Self.c(by + 11))\" class=\"seqgap\">⋯ \(Self.esc(formatDuration(microseconds: gap))) later ⋯</text>"
        }
        for (i, r) in rows.enumerated() { out += message(r, y: ys[i], deciding: deciding, x: x) }
        out += pairs(ys: ys, width: Double(width))
        return out + "</svg>"
    }

    func label(_ col: Column) -> String {
        switch col {
        case .controller: return "controller"
        case .central, .peripheral:
            let role = col == .central ? "central" : "peripheral"
            guard hasController else { return role }
            return role + (col == localColumn ? " (this side)" : " (peer)")
        }
    }

    func message(_ r: ExchangeRow, y: Double, deciding: Timestamp?, x: (Column) -> Double) -> String {
        let decides = r.frame == decidingFrame
        let other = isOther(r)
        let text = "#\(r.frame) " + (other ? "conn #\(r.connection!) · " : "") + Self.what(r)
        let cls = decides ? "msg decides" : other ? "msg other" : "msg"
        var out = "<g class=\"\(cls)\" data-frame=\"\(r.frame)\"><title>\(Self.esc(text))</title>"
        if decides { out += "<rect x=\"0\" y=\"\(Self.c(y - 20))\" width=\"100%\" height=\"26\" class=\"seqdecides\"/>" }
        if let deciding {
            let offset = Double(r.timestamp.microseconds(since: deciding)) / 1e6
            let when = decides ? "0" : (offset > 0 ? "+" : "−") + String(fractionDigits: 3, abs(offset)) + " s"
            out += "<text x=\"4\" y=\"\(Self.c(y + 3))\" class=\"seqtime\">\(Self.esc(when))</text>"
        }
        let shown = text.count > 64 ? String(text.prefix(63)) + "…" : text
        if let (from, to) = ends(r) {
            let x0 = x(from), x1 = x(to)
            let tip = x1 > x0 ? x1 - 2 : x1 + 2
            out +=
                "<line x1=\"\(Self.c(x0))\" y1=\"\(Self.c(y))\" x2=\"\(Self.c(tip))\" y2=\"\(Self.c(y))\" class=\"arrow l-\(Self.esc(r.layer))\" marker-end=\"url(#seq-arrow)\"/>"
            out += "<text x=\"\(Self.c(min(x0, x1) + 6))\" y=\"\(Self.c(y - 5))\" class=\"seqlabel\">\(Self.esc(shown))</text>"
        } else {
            out += "<text x=\"\(Self.c(x(.central) + 6))\" y=\"\(Self.c(y - 5))\" class=\"seqlabel muted\">\(Self.esc(shown))</text>"
        }
        return out + "</g>"
    }

    /// The name and the summary, once: a link-layer summary already starts with the PDU's name.
    static func what(_ r: ExchangeRow) -> String {
        if r.summary.isEmpty { return r.name }
        return r.summary.hasPrefix(r.name) ? r.summary : r.name + " " + r.summary
    }

    /// Each request joined to its response at the right edge, when both are drawn.
    func pairs(ys: [Double], width: Double) -> String {
        var out = ""
        var lane = 0
        let index = Dictionary(rows.enumerated().map { ($0.element.frame, $0.offset) }, uniquingKeysWith: { a, _ in a })
        for (i, r) in rows.enumerated() {
            guard let other = r.pairedFrame, other > r.frame, let j = index[other] else { continue }
            let px = width - 12 - Double(lane % 4) * 12
            lane += 1
            let latency = formatDuration(microseconds: rows[j].timestamp.microseconds(since: r.timestamp))
            out += "<path d=\"M\(Self.c(px - 6)) \(Self.c(ys[i]))H\(Self.c(px))V\(Self.c(ys[j]))H\(Self.c(px - 6))\" class=\"pair\">"
            out += "<title>\(Self.esc("#\(r.frame) \(r.name) answered by #\(other) after \(latency)"))</title></path>"
        }
        return out
    }
}

extension HTMLReport {
    static let sequenceCSS = """
        svg.seq .seqhead{font-size:12px;font-weight:600;fill:#1d232a;text-anchor:middle}svg.seq .lifeline{stroke:#9aa5b1;stroke-dasharray:4 3}
        svg.seq .arrow{stroke:#46505a;stroke-width:1.4}svg.seq .arrow.l-att{stroke:#1f6feb}svg.seq .arrow.l-smp{stroke:#8e44ad}
        svg.seq .arrow.l-ll{stroke:#0f9d9a}svg.seq .seqlabel{font-size:11px;fill:#1d232a;paint-order:stroke;stroke:#fff;stroke-width:3px}
        svg.seq .seqtime{font-size:10px;fill:#66717d}svg.seq .seqdecides{fill:#fcefef}svg.seq .decides .seqlabel{font-weight:700;fill:#c23030}
        svg.seq .seqbreak{fill:#f4f6f8}svg.seq .seqgap{font-size:10px;fill:#66717d;text-anchor:middle}
        svg.seq .pair{fill:none;stroke:#b36200;stroke-width:1.2}svg.seq .other{opacity:.45}
        """
}
