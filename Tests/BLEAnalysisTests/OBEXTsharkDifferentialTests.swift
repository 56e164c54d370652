import BLEAnalysis
import BLECapture
import BLECore
import BLETestSupport
import Foundation
import Testing

/// OBEX over RFCOMM against tshark, packet by packet, on the corpus captures that carry it (found by running
/// `tshark -Y obex` over every capture of `/work/corpus-files`): opcode or response code, Final bit, packet length,
/// Connection Id, Name, Type, and the body bytes (Body and End Of Body header lengths less their 3-byte headers). Both
/// tools put a packet at the frame where its last RFCOMM frame completed it.
///
/// Not compared: the OPP session of the Linux log (`pcap-ns-lt201-…`) runs OBEX over L2CAP (GOEP 2.0, ERTM), which
/// blescope does not follow yet.
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

    /// Capture, OBEX packets tshark reads there (checked by hand on 2026-11-29 with tshark 4.0.17).
    static let captures: [(String, Int)] = [
        ("android-btsnoop_btagent-honda-hfp-pbap-a2dp-earfeel-ssp-ldac-then-aac.log", 24),
        ("btsnoop-h4-headunit_btagent-marvell-carkit-hf-pbap-client-huawei-nobond-then-bond-autoconfirm.log", 16),
        ("android-btsnoop-cfa_sony-headphones-bugreport-19h-a2dp-hfp-avrcp-obex.cfa", 30),
        ("android-btsnoop-cfa_zabbits-bredr-conn-accept-timeout-10.cfa", 16),
    ]

    static func theirs(_ path: String) -> [Int: Packet]? {
        let fields = [
            "frame.number", "obex.opcode", "obex.resp_code", "obex.final_flag", "obex.pkt_len", "obex.connection_id", "obex.name",
            "obex.type", "obex.header.id", "obex.header.length",
        ]
        guard
            let rows = TestEnvironment.tsharkFields(
                ["-n", "-r", path, "-Y", "obex && obex.pkt_len", "-T", "fields", "-E", "separator=/t", "-E", "aggregator=;"]
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

    @Test(arguments: captures.map(\.0))
    func obexAgreesWithTshark(_ name: String) throws {
        guard let dir = TestEnvironment.corpusDirectory, FileManager.default.fileExists(atPath: dir + "/" + name) else { return }
        let path = dir + "/" + name
        guard let theirs = Self.theirs(path) else { return }  // no tshark
        let ours = try Self.ours(path)
        #expect(theirs.count == Self.captures.first { $0.0 == name }!.1)
        var differ: [String] = []
        for frame in Set(theirs.keys).union(ours.keys).sorted() where theirs[frame] != ours[frame] {
            differ.append("frame \(frame): tshark \(theirs[frame]?.description ?? "none"), blescope \(ours[frame]?.description ?? "none")")
        }
        print("obex tshark differential \(name): \(theirs.count) packets, \(theirs.count * 7) fields compared, \(differ.count) differ")
        #expect(differ.isEmpty, "\(differ.prefix(10).joined(separator: "\n"))")
    }
}
