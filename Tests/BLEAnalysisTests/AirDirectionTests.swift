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

    /// Frames whose pseudo-header says the same side as the data packet just before, though tshark's own fields show
    /// them that packet's answer: T_IFS after it (150 µs, the longer 1M air time, 40 µs of slack) with its SN the
    /// other's NESN and its NESN the other's SN + 1 (Core Spec Vol 6, Part B, 4.5.1 and 4.5.9). No side sends twice in
    /// a row within an event, so the header is wrong there (WHAD's third packet of an event), and blescope corrects it.
    static func sameSideTwiceInARow(_ rows: [[String]], _ said: [Int: Direction]) -> Set<Int> {
        var found: Set<Int> = []
        var previous: (frame: Int, time: Double, length: Int, sn: String, nesn: String)?
        for r in rows where r.count >= 8 {
            guard let frame = Int(r[0]), let time = Double(r[4]), let length = Int(r[5]) else { continue }
            if let p = previous, let side = said[frame], said[p.frame] == side {
                let gap = (time - p.time) * 1e6
                let answers = r[6] == p.nesn && r[7] == (p.sn == "1" ? "0" : "1")
                if gap >= 0, gap <= Double(150 + (max(length, p.length) + 10) * 8 + 40), answers { found.insert(frame) }
            }
            previous = (frame, time, length, r[6], r[7])
        }
        return found
    }

    @Test func directionsAgreeWithThePseudoHeader() throws {
        var compared = 0, captures = 0
        for path in AirLinkFactsTests.airCaptures {
            guard
                let rows = TestEnvironment.tsharkFields(
                    ClassicPcapHeaders.tsharkOptions(path) + [
                        "-r", path, "-Y", "btle.data_header", "-T", "fields", "-e", "frame.number", "-e", "nordic_ble.direction",
                        "-e", "btle_rf.pdu_type", "-e", "nordic_ble.event_counter", "-e", "frame.time_epoch", "-e",
                        "btle.data_header.length", "-e", "btle.data_header.sequence_number", "-e",
                        "btle.data_header.next_expected_sequence_number", "-e", "nordic_ble.encrypted", "-e", "nordic_ble.micok",
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
            let contradicted = Self.sameSideTwiceInARow(rows, said)
            for frame in contradicted { said[frame] = said[frame] == .tx ? .rx : .tx }
            // From an nRF Sniffer's first bad MIC it has lost the link, its direction flag too: the LESC debug-key capture
            // flags the peripheral's Read By Type Response 503 as the central's, and the central's request 504 as the
            // peripheral's. The MIC of the key blescope derives checks only with the other direction bit in the nonce
            // (audit49's ccm.py agrees), so the flag is no reference from there on.
            if let lost = rows.first(where: { $0.count >= 10 && $0[8] == "1" && $0[9] == "0" }).flatMap({ Int($0[0]) }) {
                said = said.filter { $0.key < lost }
            }
            captures += 1
            var events: [(Int, Direction, String)] = []
            _ = Analyzer.analyze(
                try CaptureFile.open(path: path), options: AnalyzerOptions(timeline: true),
                configure: { a in
                    a.onEvent = { e in
                        // A connection inferred from its data PDUs is no PDU of its own (its event is the central's).
                        guard [.ll, .l2cap, .att, .smp].contains(e.layer), e.connection != nil, e.direction != .unknown,
                            !e.name.hasPrefix("Connection (inferred")
                        else { return }
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
