import BLEAnalysis
import BLECore
import Foundation
import Testing

@testable import BLEReports

/// The sequence chart drawn at each error: who sent each row to whom, the pairs, the silences, the deciding frame.
@Suite struct SequenceChartTests {
    static func row(_ frame: Int, _ us: Int64, _ direction: Direction, _ layer: String, _ name: String, paired: Int? = nil) -> ExchangeRow {
        ExchangeRow(
            frame: frame, timestamp: Timestamp(microseconds: us), direction: direction, layer: layer, name: name, summary: "",
            pairedFrame: paired)
    }

    /// An HCI log of a central: commands go to the controller, events come from it, ATT crosses to the peer; a
    /// peripheral's log puts this side on the right.
    @Test func arrowsGoBetweenTheRightColumns() {
        let rows = [
            Self.row(10, 1_000_000, .tx, "att", "Read Request", paired: 12),
            Self.row(11, 1_010_000, .rx, "hci", "Number Of Completed Packets"),
            Self.row(12, 1_040_000, .rx, "att", "Read Response", paired: 10),
            Self.row(13, 4_040_000, .tx, "hci", "Disconnect"),
        ]
        let central = SequenceChart(rows: rows, decidingFrame: 12, localRole: .central, hasController: true)
        #expect(central.ends(rows[0])! == (.central, .peripheral))
        #expect(central.ends(rows[1])! == (.controller, .central))
        #expect(central.ends(rows[2])! == (.peripheral, .central))
        #expect(central.ends(rows[3])! == (.central, .controller))
        let peripheral = SequenceChart(rows: rows, decidingFrame: 12, localRole: .peripheral, hasController: true)
        #expect(peripheral.ends(rows[0])! == (.peripheral, .central))
        #expect(peripheral.ends(rows[1])! == (.controller, .peripheral))
        // An air capture: tx is the central's.
        var terminate = Self.row(5, 0, .tx, "ll", "LL_TERMINATE_IND")
        terminate.summary = "LL_TERMINATE_IND error 0x13"
        let air = SequenceChart(rows: [terminate], decidingFrame: 5, localRole: nil, hasController: false)
        #expect(air.ends(air.rows[0])! == (.central, .peripheral))
        // A link-layer summary names its PDU already: said once.
        #expect(air.svg().contains("<title>#5 LL_TERMINATE_IND error 0x13</title>"))
        let svg = central.svg()
        #expect(svg.components(separatedBy: "<g class=\"msg").count - 1 == 4)
        #expect(svg.contains("<g class=\"msg decides\" data-frame=\"12\">"))
        #expect(svg.contains("central (this side)") && svg.contains("peripheral (peer)") && svg.contains(">controller<"))
        // The request joined to its response (30 ms later), the 3 s silence before the Disconnect drawn as a break.
        #expect(svg.contains("#10 Read Request answered by #12 after"))
        #expect(svg.components(separatedBy: "class=\"seqgap\"").count - 1 == 1)
        // Times from the deciding frame.
        #expect(svg.contains(">−0.040 s<") && svg.contains(">+3.000 s<"))
        // A row of another connection than the finding's: faded and named.
        var mixed = rows
        mixed[0].connection = 2
        mixed[2].connection = 1
        let other = SequenceChart(rows: mixed, decidingFrame: 12, localRole: .central, hasController: true, connection: 1).svg()
        #expect(other.contains("<g class=\"msg other\" data-frame=\"10\"><title>#10 conn #2 · Read Request</title>"))
        #expect(other.contains("<g class=\"msg decides\" data-frame=\"12\"><title>#12 Read Response</title>"))
    }

    /// The supervision-timeout Sample's error (frame 237, tshark: Disconnection Complete, reason 0x08) gets its chart in
    /// the page: the Disconnection Complete an arrow from the controller to this side, highlighted.
    @Test func theSampleErrorHasItsChart() throws {
        let f = Report.analyze(path: samplePath("diag-supervision-timeout.btsnoop"))
        let html = HTMLReport.diagnosis(f, index: 1)
        let start = try #require(html.range(of: "id=\"file1-d237\""))
        let block = html[start.lowerBound...]
        let chart = try #require(block.range(of: "<svg class=\"chart seq\""))
        let decides = try #require(block.range(of: "<g class=\"msg decides\" data-frame=\"237\"><title>#237 Disconnection Complete"))
        #expect(chart.lowerBound < decides.lowerBound)
        let rows = try #require(f.exchanges[237])
        let sequence = SequenceChart(rows: rows, decidingFrame: 237, localRole: f.connections.first?.role, hasController: true)
        let last = try #require(rows.first { $0.frame == 237 })
        #expect(sequence.ends(last)! == (.controller, f.connections.first?.role == .peripheral ? .peripheral : .central))
    }

    /// The rows before a link's finding are its own first: the Domyos treadmill log's DC-01 (0x08 at 5143) had six
    /// advertising reports there and not the unanswered Write Request at 5129 it names. Fewer own rows than room are
    /// filled with the others nearest the deciding frame; a finding of no link keeps the last rows as they come.
    @Test func theRowsBeforeAFindingAreItsLinksFirst() {
        var pool = (1...10).map { Self.row($0, Int64($0) * 1000, .rx, "hci", "LE Advertising Report") }
        for i in [0, 1, 2] { pool[i].connection = 1; pool[i].layer = "att" }
        let before = Report.pick(pool, connection: 1, count: 6, fromEnd: true).map(\.frame)
        #expect(before == [1, 2, 3, 8, 9, 10])
        let after = Report.pick(pool, connection: 1, count: 3, fromEnd: false).map(\.frame)
        #expect(after == [1, 2, 3])
        // Near misses: no link named, or a pool no larger than the room: the rows as they come.
        #expect(Report.pick(pool, connection: nil, count: 6, fromEnd: true).map(\.frame) == [5, 6, 7, 8, 9, 10])
        #expect(Report.pick(Array(pool.prefix(5)), connection: 2, count: 6, fromEnd: true).map(\.frame) == [1, 2, 3, 4, 5])
    }
}
