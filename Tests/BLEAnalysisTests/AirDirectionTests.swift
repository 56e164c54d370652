import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Foundation
import Testing

/// Issue 49, point 3: on every air capture the tests find, the direction blescope gives each decoded link-layer, L2CAP,
/// ATT and SMP event is the one tshark reads from the pseudo-header where it has one: the nRF Sniffer's direction bit
/// (`nordic_ble.direction`, 1 = central → peripheral) and LINKTYPE 256's PDU type (`btle_rf.pdu_type` 2 = central →
/// peripheral, 3 = back). Where the header says nothing (LINKTYPE 251, PPI, LINKTYPE 256 type 0) blescope infers it
/// from the connection event and there is nothing of tshark's to hold it to.
@Suite struct AirDirectionTests {
    /// An nRF Sniffer header a tool wrote without filling it (SweynTooth's captures: every data packet event counter 0
    /// and flagged central → peripheral): its direction bit is not the sniffer's word, so tshark's reading of it is not
    /// held against blescope.
    static func headerUnfilled(_ rows: [[String]]) -> Bool {
        let data = rows.filter { $0.count >= 4 && !$0[1].isEmpty && !$0[3].isEmpty }
        return data.count > 2 && Set(data.map { $0[3] }).count == 1 && Set(data.map { $0[1] }).count == 1
    }

    @Test func directionsAgreeWithThePseudoHeader() throws {
        var compared = 0, captures = 0
        for path in AirLinkFactsTests.airCaptures {
            guard
                let rows = TestEnvironment.tsharkFields(
                    ClassicPcapHeaders.tsharkOptions(path) + [
                        "-r", path, "-Y", "btle.data_header", "-T", "fields", "-e", "frame.number", "-e", "nordic_ble.direction",
                        "-e", "btle_rf.pdu_type", "-e", "nordic_ble.event_counter",
                    ])
            else { return }
            if Self.headerUnfilled(rows) {
                print("AirDirectionTests: \(path): the nRF Sniffer header is not filled (one direction, one event counter); skipped")
                continue
            }
            var said: [Int: Direction] = [:]
            for r in rows where r.count >= 3 {
                guard let frame = Int(r[0]) else { continue }
                if r[1] == "1" { said[frame] = .tx } else if r[1] == "0" { said[frame] = .rx }
                if r[2] == "2" { said[frame] = .tx } else if r[2] == "3" { said[frame] = .rx }
            }
            guard !said.isEmpty else { continue }
            captures += 1
            var events: [(Int, Direction, String)] = []
            _ = Analyzer.analyze(
                try CaptureFile.open(path: path), options: AnalyzerOptions(timeline: true),
                configure: { a in
                    a.onEvent = { e in
                        guard [.ll, .l2cap, .att, .smp].contains(e.layer), e.connection != nil, e.direction != .unknown else { return }
                        events.append((e.frame, e.direction, e.name))
                    }
                })
            for (frame, direction, name) in events {
                guard let expected = said[frame] else { continue }
                compared += 1
                #expect(direction == expected, "\(path) frame \(frame) \(name): blescope \(direction), the pseudo-header \(expected)")
            }
        }
        print("AirDirectionTests: \(compared) events in \(captures) air captures compared with the pseudo-header's direction")
    }
}
