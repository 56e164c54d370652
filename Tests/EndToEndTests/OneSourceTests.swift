import BLETestSupport
import Foundation
import Testing

/// One answer per question across commands: on every Sample (btsnoop), shared capture and corpus capture
/// (`BLESCOPE_CORPUS`), the figures two commands both print come from one computation and agree in their JSON:
/// completeness (`info`, `diagnose`, `throughput`, `report`), the diagnosis (`info`, `diagnose`, `report`), each
/// stream's packets, bytes, duration and rate (`throughput`, `report`, and the throughput rules' messages), each
/// firmware update (`ota`, `report`), each isochronous stream with its per-direction counts (`iso`, `report`), each
/// connection's ATT_MTU (`gatt`, `report`).
@Suite struct OneSourceTests {
    static var captures: [String] {
        TestEnvironment.sampleNames.map { TestEnvironment.sample("\($0).btsnoop") } + TestEnvironment.realCaptures
    }

    static func json(_ arguments: [String]) throws -> [String: Any] {
        let r = try Blescope.run(arguments + ["--quiet"])
        return try #require(r.json as? [String: Any], "\(arguments): \(r.stderr.prefix(300))")
    }

    /// `(rule, frame, message)` of each finding.
    static func findings(_ diagnosis: Any?) -> [String] {
        ((diagnosis as? [String: Any])?["findings"] as? [[String: Any]] ?? []).map {
            "\($0["rule"] ?? "") \($0["frame"] ?? "") \($0["message"] ?? "")"
        }
    }

    /// A stream's identity and its shared figures.
    static func streams(_ list: Any?) -> [String] {
        (list as? [[String: Any]] ?? []).map { s in
            ["conn_number", "dir", "handle", "kind", "packets", "value_bytes", "duration_s", "rate_bps"].map { "\(s[$0] ?? "nil")" }
                .joined(separator: " ")
        }
    }

    static let otaKeys = ["conn_number", "protocol", "result", "start_frame", "end_frame", "image_size", "packets", "image_sha256"]
    static let isoKeys = ["number", "kind", "handle", "conn_number", "established_frame", "end_frame", "tx", "rx"]

    /// The `keys` of each object of `list`, as text (nested objects included), in order.
    static func rows(_ list: Any?, _ keys: [String]) -> [String] {
        (list as? [[String: Any]] ?? []).map { item in
            keys.map { key in
                guard let v = item[key] else { return "nil" }
                if let data = try? JSONSerialization.data(withJSONObject: v, options: [.sortedKeys, .fragmentsAllowed]) {
                    return String(decoding: data, as: UTF8.self)
                }
                return "\(v)"
            }.joined(separator: " ")
        }
    }

    @Test(arguments: captures)
    func commandsAgree(_ path: String) throws {
        // A corpus folder's notes (STATUS.txt, READY) are no captures.
        let probe = try Blescope.run(["info", "--json", "--quiet", path])
        guard probe.status == 0 else {
            print("not a capture, skipped: \(path): \(probe.stderr.prefix(120))")
            return
        }
        let info = try Self.json(["info", "--json", path])
        let diagnose = try Self.json(["diagnose", "--json", path])
        let throughput = try Self.json(["throughput", "--json", path])
        let gatt = try Self.json(["gatt", "--json", path])
        let report = try #require((try Self.json(["report", "--format", "json", path])["files"] as? [[String: Any]])?.first)
        let name = path.split(separator: "/").last.map(String.init) ?? path

        // Completeness: one verdict.
        let verdict = (info["completeness"] as? [String: Any])?["verdict"] as? String
        #expect(verdict != nil, "\(name)")
        #expect((diagnose["completeness"] as? [String: Any])?["verdict"] as? String == verdict, "\(name): diagnose")
        #expect((throughput["completeness"] as? [String: Any])?["verdict"] as? String == verdict, "\(name): throughput")
        let reportCapture = report["capture"] as? [String: Any]
        #expect((reportCapture?["completeness"] as? [String: Any])?["verdict"] as? String == verdict, "\(name): report")

        // The diagnosis: the same findings, frames and words.
        let diagnosed = Self.findings(diagnose)
        #expect(Self.findings(info["diagnosis"]) == diagnosed, "\(name): info vs diagnose")
        #expect(Self.findings(report["diagnosis"]) == diagnosed, "\(name): report vs diagnose")

        // Streams: the same packets, bytes, duration and rate.
        let streams = Self.streams(throughput["streams"])
        #expect(Self.streams((report["throughput"] as? [String: Any])?["streams"]) == streams, "\(name): report vs throughput")

        // A throughput rule's "(N values, B bytes)" is a stream `throughput` lists on that handle.
        let listed = throughput["streams"] as? [[String: Any]] ?? []
        for finding in (diagnose["findings"] as? [[String: Any]] ?? []) where (finding["rule"] as? String)?.hasPrefix("TP-") == true {
            let message = finding["message"] as? String ?? ""
            guard let figures = message.firstMatch(of: /on 0x([0-9a-f]{4}) \((\d+) values, (\d+) bytes\)/) else { continue }
            let handle = Int(figures.1, radix: 16), packets = Int(figures.2), bytes = Int(figures.3)
            #expect(
                listed.contains {
                    $0["handle"] as? Int == handle && $0["packets"] as? Int == packets && $0["value_bytes"] as? Int == bytes
                },
                "\(name): \(message)")
        }

        // Firmware updates (`ota`) and isochronous streams (`iso`): the report's sections are the commands' figures.
        let ota = try Self.json(["ota", "--json", path])
        #expect(
            Self.rows(ota["sessions"], Self.otaKeys) == Self.rows((report["ota"] as? [String: Any])?["sessions"], Self.otaKeys),
            "\(name): ota vs report")
        let iso = try Self.json(["iso", "--json", path])
        #expect(
            Self.rows(iso["streams"], Self.isoKeys) == Self.rows((report["iso"] as? [String: Any])?["streams"], Self.isoKeys),
            "\(name): iso vs report")

        // ATT_MTU per connection: `gatt` and the report's link facts.
        let reportMTU = Dictionary(
            (report["connections"] as? [[String: Any]] ?? []).compactMap { c -> (Int, String)? in
                guard let n = c["number"] as? Int, let facts = c["link_facts"] as? [String: Any],
                    let mtu = (facts["mtu"] as? [String: Any])?["value"] as? String
                else { return nil }
                return (n, mtu.replacingOccurrences(of: "≥", with: ""))
            }, uniquingKeysWith: { a, _ in a })
        for c in (gatt["connections"] as? [[String: Any]] ?? []) {
            guard let n = c["conn_number"] as? Int, let mtu = c["mtu"] as? Int, let theirs = reportMTU[n] else { continue }
            #expect(theirs == String(mtu), "\(name): connection #\(n) gatt MTU \(mtu), report \(theirs)")
        }
    }
}
