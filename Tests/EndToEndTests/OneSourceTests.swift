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

/// The link and connection fields (interval, latency, timeout, PHY, data length, ATT_MTU with its source, encryption,
/// role, peer) have one value in every output that writes them: `throughput`'s stream periods, `ota`'s session links,
/// `report`'s connections (their `link` at the end, their change history and link facts), `gatt` and the fleet tables
/// (`export --tables`). Run on Samples and real air captures (nRF Sniffer), whose link facts come from LL control PDUs.
extension OneSourceTests {
    static var linkCaptures: [String] {
        ["nordic-dfu.btsnoop", "headset-ota.pklg", "bracelet.btsnoop", "mcumgr-upload.btsnoop", "eom-transfer.pcap"]
            .map(TestEnvironment.sample)
            + (TestEnvironment.sharedCaptures.map { dir in
                [
                    "nrfsniffer-lt272_surplife-led-ll-fragmentation.pcapng",
                    "nrfsniffer-lt272_bsniffhub-lesc-debugkey-enc-micok-then-badmic.pcap",
                ].map { dir + "/" + $0 }
            } ?? [])
    }

    /// The keys every link object has, in every output (`schemas/throughput.schema.json#/$defs/link`).
    static let linkKeys: Set<String> = [
        "interval_ms", "latency", "timeout_ms", "phy_tx", "phy_rx", "max_tx_octets", "max_rx_octets", "mtu", "encrypted",
        "ceiling_tx_bps", "assumed", "inferred",
    ]
    /// The fields compared between outputs.
    static let comparedLinkKeys = [
        "interval_ms", "latency", "timeout_ms", "phy_tx", "phy_rx", "max_tx_octets", "max_rx_octets", "mtu", "encrypted",
    ]

    static func text(_ v: Any?) -> String {
        guard let v, !(v is NSNull) else { return "null" }
        if let d = v as? Double, d != d.rounded() { return String(format: "%.2f", d) }
        return "\(v)"
    }

    /// The link in force at `frame` from a report connection's change history (its values before any change: the
    /// spec's initial ones).
    static func linkInForce(_ connection: [String: Any], at frame: Int) -> [String: String] {
        func last(_ key: String) -> [String: Any]? {
            (connection[key] as? [[String: Any]] ?? []).last { ($0["frame"] as? Int ?? .max) <= frame }
        }
        let p = last("parameters"), phy = last("phy"), dl = last("data_length"), mtu = last("mtu"), enc = last("encryption")
        return [
            "interval_ms": text(p?["interval_ms"]), "latency": text(p?["latency"]), "timeout_ms": text(p?["timeout_ms"]),
            "phy_tx": text(phy?["tx"] ?? "1M"), "phy_rx": text(phy?["rx"] ?? "1M"),
            "max_tx_octets": text(dl?["max_tx_octets"] ?? 27), "max_rx_octets": text(dl?["max_rx_octets"] ?? 27),
            "mtu": text(mtu?["mtu"] ?? 23), "encrypted": text(enc?["encrypted"] ?? NSNumber(value: false)),
        ]
    }

    static func fields(_ link: [String: Any], _ keys: [String] = comparedLinkKeys) -> [String: String] {
        Dictionary(uniqueKeysWithValues: keys.map { ($0, text(link[$0])) })
    }

    @Test(arguments: linkCaptures)
    func linkFieldsAgree(_ path: String) throws {
        let name = (path as NSString).lastPathComponent
        let report = try #require((try Self.json(["report", "--format", "json", path])["files"] as? [[String: Any]])?.first)
        let throughput = try Self.json(["throughput", "--json", path])
        let ota = try Self.json(["ota", "--json", path])
        let gatt = try Self.json(["gatt", "--json", path])
        let connections = report["connections"] as? [[String: Any]] ?? []
        #expect(!connections.isEmpty, "\(name)")
        let byNumber = Dictionary(connections.map { ($0["number"] as? Int ?? 0, $0) }, uniquingKeysWith: { a, _ in a })

        // The report's link at each connection's end: the shared object, and the last value of each history.
        for c in connections {
            let link = try #require(c["link"] as? [String: Any], "\(name)")
            #expect(Set(link.keys) == Self.linkKeys, "\(name)")
            #expect(Self.fields(link) == Self.linkInForce(c, at: .max), "\(name): connection #\(c["number"] ?? "?")")
            let facts = c["link_facts"] as? [String: Any]
            #expect((facts?["mtu"] as? [String: Any])?["value"] as? String == Self.text(link["mtu"]), "\(name)")
        }

        // `throughput`: every period's link is the one the report's history has in force over the period.
        var periodsSeen = 0
        for s in throughput["streams"] as? [[String: Any]] ?? [] {
            let c = try #require(byNumber[s["conn_number"] as? Int ?? 0], "\(name): stream on an unknown connection")
            for p in s["periods"] as? [[String: Any]] ?? [] {
                let link = try #require(p["link"] as? [String: Any])
                #expect(Set(link.keys) == Self.linkKeys, "\(name)")
                let last = p["last_frame"] as? Int ?? 0
                #expect(Self.fields(link) == Self.linkInForce(c, at: last), "\(name): period ending at frame \(last)")
                periodsSeen += 1
            }
        }

        // `ota`: each link a session ran with is one the report's history had in force during the session.
        for s in ota["sessions"] as? [[String: Any]] ?? [] {
            let c = try #require(byNumber[s["conn_number"] as? Int ?? 0])
            let start = s["start_frame"] as? Int ?? 0, end = s["end_frame"] as? Int ?? 0
            let changeFrames = Set(
                ["parameters", "phy", "data_length", "mtu", "encryption"].flatMap { key in
                    (c[key] as? [[String: Any]] ?? []).compactMap { $0["frame"] as? Int }.filter { $0 > start && $0 <= end }
                })
            let inForce = ([start] + changeFrames.sorted()).map { Self.linkInForce(c, at: $0) }
            for link in s["link"] as? [[String: Any]] ?? [] {
                #expect(Set(link.keys) == Self.linkKeys, "\(name)")
                #expect(inForce.contains(Self.fields(link)), "\(name): OTA link \(Self.fields(link)) not in \(inForce)")
            }
            // A session's peer is its connection's.
            for step in s["connections"] as? [[String: Any]] ?? [] {
                let n = step["conn_number"] as? Int ?? 0
                #expect(Self.text(step["peer"]) == Self.text(byNumber[n]?["peer"]), "\(name): OTA connection #\(n)")
            }
        }

        // `gatt`: peer, ATT_MTU and its source, as the report has them.
        for g in gatt["connections"] as? [[String: Any]] ?? [] {
            let c = try #require(byNumber[g["conn_number"] as? Int ?? 0])
            let link = c["link"] as? [String: Any] ?? [:]
            #expect(Self.text(g["peer"]) == Self.text(c["peer"]), "\(name): gatt peer")
            #expect(Self.text(g["mtu"]) == Self.text(link["mtu"]), "\(name): gatt mtu")
            let source = (c["link_facts"] as? [String: Any])?["mtu"] as? [String: Any]
            #expect(g["mtu_source"] as? String == source?["source"] as? String, "\(name): gatt mtu_source")
            #expect(g["mtu_basis"] as? String == source?["basis"] as? String, "\(name): gatt mtu_basis")
        }

        // The fleet tables' connection rows: the same peer, role and link.
        let directory = NSTemporaryDirectory() + "blescope-link-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let export = try Blescope.run(["export", "--quiet", "--tables", directory, path])
        #expect(export.status == 0, "\(name): \(export.stderr.prefix(300))")
        let rows = try String(contentsOfFile: directory + "/connections.jsonl", encoding: .utf8).split(separator: "\n").map {
            try #require(try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any])
        }
        #expect(rows.count == connections.count, "\(name)")
        for row in rows {
            let c = try #require(byNumber[row["conn_number"] as? Int ?? 0])
            let link = c["link"] as? [String: Any] ?? [:]
            let keys = ["interval_ms", "latency", "timeout_ms", "phy_tx", "phy_rx", "max_tx_octets", "mtu", "encrypted"]
            #expect(Self.fields(row, keys) == Self.fields(link, keys), "\(name): fleet connection #\(row["conn_number"] ?? "?")")
            #expect(Self.text(row["peer"]) == Self.text(c["peer"]) && Self.text(row["role"]) == Self.text(c["role"]), "\(name)")
            let source = (c["link_facts"] as? [String: Any])?["mtu"] as? [String: Any]
            #expect(row["mtu_source"] as? String == source?["source"] as? String, "\(name): fleet mtu_source")
        }
        print("\(name): \(connections.count) connections, \(periodsSeen) throughput periods compared")
    }
}
