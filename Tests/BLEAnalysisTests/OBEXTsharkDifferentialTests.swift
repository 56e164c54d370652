import BLEAnalysis
import BLECapture
import BLECore
import BLETestSupport
import Foundation
import Testing

/// OBEX over RFCOMM against tshark, packet by packet, on the corpus captures that carry it (found by running
/// `tshark -Y obex` over every capture of the corpus, `BLESCOPE_CORPUS`): opcode or response code, Final bit, packet length,
/// Connection Id, Name, Type, and the body bytes (Body and End Of Body header lengths less their 3-byte headers). Both
/// tools put a packet at the frame where its last RFCOMM frame completed it.
///
/// The Linux log (`pcap-ns-lt201-…`) runs OPP over L2CAP (GOEP 2.0: PSM 0x1001 in ERTM, a Put of `test.txt` in two
/// packets): tshark knows the PSM from SDP, blescope from the channel's first I-frame, an OBEX Connect.
@Suite struct OBEXTsharkDifferentialTests {
    struct Packet: Equatable, CustomStringConvertible {
        var code: Int
        var final: Int
        var length: Int
        var connectionID: Int?
        var name: String?
        var type: String?
        var body: Int
        var description: String {
            "\(code) final=\(final) len=\(length) cid=\(connectionID.map(String.init) ?? "-") \(name ?? "-") \(type ?? "-") body=\(body)"
        }
    }

    /// Capture, tshark's extra options, the OBEX packets tshark reads there, those only blescope reads (checked by hand on
    /// 2026-11-29 with tshark 4.0.17). The Honda log's AVRCP cover art channel (PSM 0x1001, ERTM) is OBEX (BIP, GOEP
    /// 2.0): tshark takes it for AVRCP from SDP unless told (`-d btl2cap.psm==0x1001,obex`), and then does not put
    /// together a packet sent in SAR segments (31 responses of 1024 bytes, Start 1014 + End, e.g. 3633-3634): blescope
    /// does (docs/tshark-differences.md).
    static let captures: [(name: String, options: [String], theirs: Int, onlyOurs: Int)] = [
        ("android-btsnoop_btagent-honda-hfp-pbap-a2dp-earfeel-ssp-ldac-then-aac.log", ["-d", "btl2cap.psm==0x1001,obex"], 59, 31),
        ("btsnoop-h4-headunit_btagent-marvell-carkit-hf-pbap-client-huawei-nobond-then-bond-autoconfirm.log", [], 16, 0),
        ("android-btsnoop-cfa_sony-headphones-bugreport-19h-a2dp-hfp-avrcp-obex.cfa", [], 30, 0),
        ("android-btsnoop-cfa_zabbits-bredr-conn-accept-timeout-10.cfa", [], 16, 0),
        ("pcap-ns-lt201-h4phdr_linux-inquiry-sdp-vendor-ff.pcap", [], 8, 0),
    ]

    static func theirs(_ path: String, options: [String]) -> [Int: Packet]? {
        let fields = [
            "frame.number", "obex.opcode", "obex.resp_code", "obex.final_flag", "obex.pkt_len", "obex.connection_id", "obex.name",
            "obex.type", "obex.header.id", "obex.header.length",
        ]
        guard
            let rows = TestEnvironment.tsharkFields(
                ["-n", "-r", path] + options + ["-Y", "obex && obex.pkt_len", "-T", "fields", "-E", "separator=/t", "-E", "aggregator=;"]
                    + fields.flatMap { ["-e", $0] })
        else { return nil }
        var out: [Int: Packet] = [:]
        for f in rows where f.count >= fields.count {
            func int(_ s: String) -> Int? { s.hasPrefix("0x") ? Int(s.dropFirst(2), radix: 16) : Int(s) }
            guard let frame = Int(f[0]), let code = int(f[1]) ?? int(f[2]), let length = Int(f[4]) else { continue }
            let ids = f[8].split(separator: ";").compactMap { int(String($0)) }
            let lengths = f[9].split(separator: ";").compactMap { Int($0) }
            // tshark lists a length for each text or byte-sequence header only (encodings 0 and 1), in order.
            let counted = ids.filter { $0 >> 6 < 2 }
            let body = zip(counted, lengths).reduce(0) { $0 + ($1.0 == 0x48 || $1.0 == 0x49 ? $1.1 - 3 : 0) }
            out[frame] = Packet(
                code: code, final: f[3] == "1" || f[3] == "True" ? 1 : 0, length: length, connectionID: int(f[5]),
                name: ids.contains(0x01) ? f[6] : nil, type: f[7].isEmpty ? nil : f[7], body: body)
        }
        return out
    }

    static func ours(_ path: String) throws -> [Int: Packet] {
        var out: [Int: Packet] = [:]
        _ = Analyzer.analyze(
            try CaptureFile.open(path: path), options: AnalyzerOptions(timeline: true),
            configure: { analyzer in
                analyzer.onEvent = { e in
                    guard e.layer == .obex, let fields = e.fields else { return }
                    let v = Dictionary(fields, uniquingKeysWith: { a, _ in a })
                    let s = e.summary
                    // `Get final "telecom/pb.vcf" (x-bt/phonebook) connection 1`: the Name in quotes, the Type in brackets.
                    let quoted = s.split(separator: "\"", omittingEmptySubsequences: false)
                    let name = quoted.count >= 3 ? String(quoted[1]) : nil
                    let type = s.range(of: #"\(([a-z-]+/[^)]+)\)"#, options: .regularExpression).map {
                        String(s[$0].dropFirst().dropLast())
                    }
                    out[e.frame] = Packet(
                        code: Int(v["opcode"] ?? v["resp_code"] ?? -1), final: Int(v["final"] ?? -1), length: Int(v["length"] ?? -1),
                        connectionID: v["connection_id"].map(Int.init), name: name, type: type, body: Int(v["body_bytes"] ?? 0))
                }
            })
        return out
    }

    @Test(arguments: captures.map(\.name))
    func obexAgreesWithTshark(_ name: String) throws {
        guard let dir = TestEnvironment.corpusDirectory, FileManager.default.fileExists(atPath: dir + "/" + name) else { return }
        let path = dir + "/" + name, expected = Self.captures.first { $0.name == name }!
        guard let theirs = Self.theirs(path, options: expected.options) else { return }  // no tshark
        let ours = try Self.ours(path)
        #expect(theirs.count == expected.theirs)
        var differ: [String] = [], onlyOurs = 0
        for frame in Set(theirs.keys).union(ours.keys).sorted() where theirs[frame] != ours[frame] {
            if theirs[frame] == nil { onlyOurs += 1; continue }
            differ.append("frame \(frame): tshark \(theirs[frame]!), blescope \(ours[frame]?.description ?? "none")")
        }
        print(
            "obex tshark differential \(name): \(theirs.count) packets, \(theirs.count * 7) fields compared, \(differ.count) differ, \(onlyOurs) only blescope's"
        )
        #expect(differ.isEmpty, "\(differ.prefix(10).joined(separator: "\n"))")
        #expect(onlyOurs == expected.onlyOurs)
    }
}
