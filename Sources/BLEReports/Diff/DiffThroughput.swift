import BLEAnalysis
import BLECore

/// Throughput and firmware-update differences. Streams are matched per pair of connections by characteristic UUID
/// (the handle when the capture does not name it), direction and kind; their figures are the `throughput` columns
/// (``ThroughputColumns``: rate, packets per event, what limited it, share of the ceiling). Updates are matched by
/// protocol, in order; their figures are the fleet's OTA columns (result, duration, rate, image).
enum DiffThroughput {
    /// Below this relative change a rate is the same rate (the windows of two runs never agree to the bit).
    static let rateTolerance = 0.01

    /// What names a stream in both captures (with its characteristic's UUID).
    static func streamKey(_ s: ThroughputStream) -> String {
        "\(s.characteristic?.description ?? "-") \(s.key.direction) \(s.key.kind.name)"
    }

    static func row(_ s: ThroughputStream, _ f: FileAnalysis) -> ThroughputRow {
        ThroughputRow(stream: s, connection: f.connections.first { $0.number == s.key.connectionNumber }, aclBuffers: f.aclBuffers)
    }

    /// A throughput column's JSON or CSV cell as text.
    static func cell(_ name: String, _ row: ThroughputRow) -> String? {
        guard let c = ThroughputColumns.table.columns.first(where: { ($0.key ?? $0.csv) == name }) else { return nil }
        let t = c.value(row).csv
        return t.isEmpty ? nil : t
    }

    /// The streams of A and B taken as the same: by characteristic UUID, direction and kind (the n-th of a UUID with
    /// the n-th, in handle order), then those left by handle, direction and kind when one side does not name it.
    static func match(_ sa: [ThroughputStream], _ sb: [ThroughputStream]) -> (
        pairs: [(ThroughputStream, ThroughputStream)], onlyA: [ThroughputStream], onlyB: [ThroughputStream]
    ) {
        func byUUID(_ list: [ThroughputStream]) -> [String: ThroughputStream] {
            var seen: [String: Int] = [:]
            var out: [String: ThroughputStream] = [:]
            for s in list.sorted(by: { $0.key.handle < $1.key.handle }) where s.characteristic != nil {
                let k = streamKey(s)
                seen[k, default: 0] += 1
                out[k + " #\(seen[k]!)"] = s
            }
            return out
        }
        func byHandle(_ s: ThroughputStream) -> String { "\(s.key.handle) \(s.key.direction) \(s.key.kind.name)" }
        let ua = byUUID(sa), ub = byUUID(sb)
        var pairs: [(ThroughputStream, ThroughputStream)] = []
        var usedA = Set<ThroughputStreamKey>(), usedB = Set<ThroughputStreamKey>()
        for (k, x) in ua.sorted(by: { $0.key < $1.key }) {
            guard let y = ub[k] else { continue }
            pairs.append((x, y))
            usedA.insert(x.key)
            usedB.insert(y.key)
        }
        let restB = sb.filter { !usedB.contains($0.key) }
        for x in sa where !usedA.contains(x.key) {
            // By handle only when one side does not name it: two names on one handle are two characteristics.
            guard
                let y = restB.first(where: {
                    !usedB.contains($0.key) && byHandle($0) == byHandle(x) && (x.characteristic == nil || $0.characteristic == nil)
                })
            else { continue }
            pairs.append((x, y))
            usedA.insert(x.key)
            usedB.insert(y.key)
        }
        return (pairs, sa.filter { !usedA.contains($0.key) }, sb.filter { !usedB.contains($0.key) })
    }

    static func compareStreams(_ pair: ConnectionPair, _ fa: FileAnalysis, _ fb: FileAnalysis) -> [Difference] {
        let sa = fa.throughput.filter { $0.key.connectionNumber == pair.a }
        let sb = fb.throughput.filter { $0.key.connectionNumber == pair.b }
        let (pairs, onlyA, onlyB) = match(sa, sb)
        let conns = (pair.a, pair.b)
        let label = "#\(pair.a)↔#\(pair.b)"
        var out: [Difference] = []
        for (s, inA) in onlyA.map({ ($0, true) }) + onlyB.map({ ($0, false) }) {
            let packets = "\(formatCount(s.packets)) packet" + (s.packets == 1 ? "" : "s")
            out.append(
                Difference(
                    .throughput, inA ? "stream-only-in-a" : "stream-only-in-b", impact: s.packets < 10 ? .info : .minor,
                    subject: "\(label) stream \(streamName(s))", a: inA ? packets : nil, b: inA ? nil : packets,
                    frames: inA ? (s.firstFrame, nil) : (nil, s.firstFrame), connections: conns, magnitude: Double(s.valueBytes)))
        }
        for (x, y) in pairs {
            let name = x.characteristic != nil ? streamName(x) : streamName(y)
            out += compareStream(x, y, fa, fb, subject: "\(label) stream \(name)", conns: conns)
        }
        return out
    }

    /// `0x2A37 (0x0012) rx notify`.
    static func streamName(_ s: ThroughputStream) -> String {
        let what = s.characteristic.map { "\($0) (\(hex(s.key.handle, width: 4)))" } ?? hex(s.key.handle, width: 4)
        return "\(what) \(s.key.direction) \(s.key.kind.name)"
    }

    static func compareStream(
        _ x: ThroughputStream, _ y: ThroughputStream, _ fa: FileAnalysis, _ fb: FileAnalysis, subject: String, conns: (Int, Int)
    ) -> [Difference] {
        var out: [Difference] = []
        let frames = (Optional(x.firstFrame), Optional(y.firstFrame))
        if let ra = x.rateBitsPerSecond, let rb = y.rateBitsPerSecond, ra > 0, abs(rb - ra) / ra >= rateTolerance {
            let change = (rb - ra) / ra
            out.append(
                Difference(
                    .throughput, "rate", impact: min(x.packets, y.packets) < 10 ? .info : change <= -0.25 ? .major : .minor,
                    subject: subject + " rate",
                    a: formatRate(ra), b: formatRate(rb) + " (" + percent(change) + ")", frames: frames, connections: conns,
                    magnitude: abs(change)))
            out[out.count - 1].change = change
        }
        let rowA = row(x, fa), rowB = row(y, fb)
        for (column, title) in [("packets_per_event", "packets per event"), ("limit", "limited by")] {
            let va = cell(column, rowA), vb = cell(column, rowB)
            guard va != vb else { continue }
            out.append(
                Difference(
                    .throughput, column.replacing("_", with: "-"), impact: .minor, subject: subject + " " + title,
                    a: va, b: vb, frames: frames, connections: conns, magnitude: DiffLink.relative(va, vb)))
        }
        let shareA = ThroughputColumns.shareText(x), shareB = ThroughputColumns.shareText(y)
        if shareA != shareB {
            out.append(
                Difference(
                    .throughput, "share", impact: .info, subject: subject + " share of the ceiling", a: shareA, b: shareB,
                    frames: frames, connections: conns))
        }
        return out
    }

    /// `-23 %`, `+4 %`.
    static func percent(_ change: Double) -> String {
        (change >= 0 ? "+" : "") + String(fractionDigits: 0, change * 100) + " %"
    }

    static let otaFields: [(column: String, title: String)] = [
        ("result", "result"), ("result_detail", "result detail"), ("image_size", "image size"), ("image_sha256", "image SHA-256"),
        ("packets", "packets"),
    ]

    static func otaCell(_ name: String, _ s: OTASession) -> String? {
        guard let c = FleetColumns.otaSessions.columns.first(where: { $0.key == name }) else { return nil }
        let t = c.value(OTARow(id: "", session: s)).csv
        return t.isEmpty ? nil : t
    }

    static func compareOTA(_ fa: FileAnalysis, _ fb: FileAnalysis) -> [Difference] {
        var out: [Difference] = []
        let protocols = Set(fa.otaSessions.map(\.protocolName.rawValue) + fb.otaSessions.map(\.protocolName.rawValue)).sorted()
        for p in protocols {
            let la = fa.otaSessions.filter { $0.protocolName.rawValue == p }
            let lb = fb.otaSessions.filter { $0.protocolName.rawValue == p }
            for i in 0..<max(la.count, lb.count) {
                let x = i < la.count ? la[i] : nil, y = i < lb.count ? lb[i] : nil
                let subject = "\(p) update \(i + 1)"
                guard let x, let y else {
                    let s = (x ?? y)!
                    out.append(
                        Difference(
                            .ota, x == nil ? "update-only-in-b" : "update-only-in-a", impact: .major, subject: subject,
                            a: x.map(\.result.label), b: y.map(\.result.label), frames: (x?.startFrame, y?.startFrame),
                            connections: (x?.connectionNumber, y?.connectionNumber), magnitude: Double(s.image.count)))
                    continue
                }
                out += compareSession(x, y, subject: subject)
            }
        }
        return out
    }

    static func compareSession(_ x: OTASession, _ y: OTASession, subject: String) -> [Difference] {
        var out: [Difference] = []
        let frames = (Optional(x.startFrame), Optional(y.startFrame))
        let conns = (x.connectionNumber, y.connectionNumber)
        for f in otaFields {
            let va = otaCell(f.column, x), vb = otaCell(f.column, y)
            guard va != vb else { continue }
            let major = f.column == "result" || f.column == "image_sha256"
            out.append(
                Difference(
                    .ota, f.column.replacing("_", with: "-"), impact: major ? .major : .minor,
                    subject: subject + " " + f.title, a: va, b: vb, frames: frames, connections: conns, magnitude: 1))
        }
        if x.durationMicroseconds != y.durationMicroseconds, x.durationMicroseconds > 0 {
            let change = Double(y.durationMicroseconds - x.durationMicroseconds) / Double(x.durationMicroseconds)
            if abs(change) >= rateTolerance {
                out.append(
                    Difference(
                        .ota, "duration", impact: change >= 0.25 ? .major : .minor, subject: subject + " duration",
                        a: formatDuration(microseconds: x.durationMicroseconds),
                        b: formatDuration(microseconds: y.durationMicroseconds) + " (" + percent(change) + ")", frames: frames,
                        connections: conns, magnitude: abs(change)))
            }
        }
        if let ra = x.throughputBitsPerSecond, let rb = y.throughputBitsPerSecond, ra > 0, abs(rb - ra) / ra >= rateTolerance {
            let change = (rb - ra) / ra
            out.append(
                Difference(
                    .ota, "rate", impact: change <= -0.25 ? .major : .minor, subject: subject + " rate", a: formatRate(ra),
                    b: formatRate(rb) + " (" + percent(change) + ")", frames: frames, connections: conns, magnitude: abs(change)))
            out[out.count - 1].change = change
        }
        return out
    }
}
