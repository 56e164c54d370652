import BLEAnalysis
import BLECapture
import BLECore
import BLETestSupport
import Foundation
import Testing

/// Every HCI ISO data packet: handle, PB flag, data load length, sequence number, SDU length and status from blescope
/// equal tshark's (`bthci_iso`, `bthci_iso_data`), on the LE Audio Samples (btsnoop and pcap; Wireshark 4.0 names no
/// PacketLogger ISO type) and any corpus capture with ISO data.
///
/// One difference is tshark's and named here: it reassembles a fragmented SDU and shows the first fragment (PB 00)
/// without its SDU header and the last (PB 11) with an SDU header read at the wrong offset of the reassembled bytes
/// (Wireshark 4.0.17); those packets are compared on handle, PB and length only, and counted.
@Suite struct ISOTsharkDifferentialTests {
    struct Row: Equatable {
        var handle: Int
        var pb: Int
        var length: Int
        var sequence: Int?
        var sduLength: Int?
        var status: Int?
        var timestamp: Int?
    }

    static var captures: [String] {
        let samples = ["le-audio-unicast", "le-audio-broadcast", "le-audio-broadcast-receiver"].flatMap { name in
            ["btsnoop", "pcap"].map { TestEnvironment.sample("\(name).\($0)") }
        }
        return samples + TestEnvironment.realCaptures
    }

    static func tsharkRows(_ path: String) -> [Int: Row]? {
        guard
            let out = TestEnvironment.tshark([
                "-n", "-r", path, "-Y", "bthci_iso", "-T", "fields", "-E", "separator=/t", "-e", "frame.number",
                "-e", "bthci_iso.chandle", "-e", "bthci_iso.pb_flag", "-e", "bthci_iso.data_length",
                "-e", "bthci_iso_data.packet_seq_num", "-e", "bthci_iso_data.sdu_length", "-e", "bthci_iso_data.status_flag",
                "-e", "bthci_iso_data.timestamp",
            ])
        else { return nil }
        var rows: [Int: Row] = [:]
        for line in out.split(separator: "\n") {
            let f = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard f.count >= 8, let frame = Int(f[0]), let handle = Int(f[1].dropFirst(2), radix: 16),
                let pb = Int(f[2].dropFirst(2), radix: 16), let length = Int(f[3])
            else { continue }
            rows[frame] = Row(
                handle: handle, pb: pb, length: length, sequence: Int(f[4]), sduLength: Int(f[5]), status: Int(f[6]),
                timestamp: Int(f[7]))
        }
        return rows
    }

    static func ourRows(_ path: String) throws -> [Int: Row] {
        var rows: [Int: Row] = [:]
        _ = Analyzer.analyze(
            try CaptureFile.open(path: path), options: AnalyzerOptions(timeline: true),
            configure: { analyzer in
                analyzer.onEvent = { e in
                    guard e.layer == .iso, let fields = e.fields else { return }
                    let f = Dictionary(fields, uniquingKeysWith: { a, _ in a })
                    let header = f["sequence_number"] != nil ? 4 : 0
                    let ts = f["time_stamp"] != nil ? 4 : 0
                    rows[e.frame] = Row(
                        handle: Int(f["iso_handle"] ?? -1), pb: Int(f["pb"] ?? -1),
                        length: Int(f["fragment_length"] ?? 0) + header + ts, sequence: f["sequence_number"].map(Int.init),
                        sduLength: f["sdu_length"].map(Int.init), status: f["packet_status"].map(Int.init),
                        timestamp: f["time_stamp"].map(Int.init))
                }
            })
        return rows
    }

    @Test(arguments: captures)
    func everyISOPacketAgreesWithTshark(_ path: String) throws {
        guard let theirs = Self.tsharkRows(path) else { return }  // no tshark here
        let ours = try Self.ourRows(path)
        #expect(Set(ours.keys) == Set(theirs.keys), "the ISO frames")
        var compared = 0, fragments = 0
        for (frame, t) in theirs {
            guard let o = ours[frame] else { continue }
            #expect(o.handle == t.handle && o.pb == t.pb && o.length == t.length, "frame \(frame)")
            guard o.pb == 2 else {
                fragments += 1
                continue
            }
            compared += 1
            #expect(o.sequence == t.sequence && o.sduLength == t.sduLength, "frame \(frame)")
            #expect(o.timestamp == t.timestamp, "frame \(frame)")
            // tshark shows the status only on packets it reads as controller → host.
            if let status = t.status { #expect(o.status == status, "frame \(frame)") }
        }
        // The LE Audio Samples carry their SDUs over HCI; a phone's LE Audio log with a transparent data path (the
        // corpus's Redmi K70 log: no ISO data packet at all, tshark agrees) has none to compare.
        let name = path.split(separator: "/").last.map(String.init) ?? path
        if name.hasPrefix("le-audio") { #expect(compared > 0) }
        // The fragments tshark misreads are those of the fragmented SDUs: two packets each in the Samples.
        if path.contains("le-audio-unicast") { #expect(fragments == 2) }
    }
}
