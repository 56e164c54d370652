import BLEAnalysis
import BLECore
import Dispatch

/// `blescope diff A B`: what changed between two captures, compared on their analyses as `report` computes them
/// (``Report/analyze(path:options:analyzerOptions:progress:)``), section by section (``DiffSection``), each
/// difference ranked (``Difference/ranked(_:_:)``) with the frames that show it on both sides. Two captures of the
/// same traffic in different formats compare equal: frames, file sizes and formats are where to look, not what
/// differs.
public enum CaptureDiffer {
    /// Both captures analysed at once (one per core; the results are the same as one after the other).
    public static func analyze(
        _ pathA: String, _ pathB: String, options: ReportOptions = ReportOptions(),
        analyzerOptions: AnalyzerOptions = AnalyzerOptions(timeline: false)
    ) -> (FileAnalysis, FileAnalysis) {
        var options = options
        options.backgroundTrackers = false
        options.throughputBeside = false
        let opts = options
        let paths = [pathA, pathB]
        let results = Locked<[FileAnalysis?]>([nil, nil])
        DispatchQueue.concurrentPerform(iterations: 2) { i in
            let f = Report.analyze(path: paths[i], options: opts, analyzerOptions: analyzerOptions)
            results.withLock { $0[i] = f }
        }
        let r = results.withLock { $0 }
        return (r[0]!, r[1]!)
    }

    /// The differences between two analyses, most important first.
    public static func compare(_ a: FileAnalysis, _ b: FileAnalysis, options: DiffOptions = DiffOptions()) -> CaptureDiff {
        var a = a, b = b
        a.connections = DiffMatching.resolved(a.connections, keys: options.identityKeys)
        b.connections = DiffMatching.resolved(b.connections, keys: options.identityKeys)
        let (fa, fb) = (a, b)
        let (pairs, onlyA, onlyB) = DiffMatching.pair(a, b, options: options) {
            // Read only when some connections are left unpaired by address on both sides: a pass of each file's adverts.
            (
                DiffNames(fa, advertised: DiffNames.advertisedNames(path: fa.path)),
                DiffNames(fb, advertised: DiffNames.advertisedNames(path: fb.path))
            )
        }
        var notes: [String] = []
        var out: [Difference] = []
        for c in onlyA { out.append(unpaired(c, inA: true)) }
        for c in onlyB { out.append(unpaired(c, inA: false)) }
        var comparedPeers = Set<String>()
        for p in pairs {
            guard let ca = a.connections.first(where: { $0.number == p.a }),
                let cb = b.connections.first(where: { $0.number == p.b })
            else { continue }
            out += ending(ca, cb)
            let peers = (DiffMatching.peerKey(ca) ?? "#\(ca.number)") + "|" + (DiffMatching.peerKey(cb) ?? "#\(cb.number)")
            if comparedPeers.insert(peers).inserted {
                let da = DiffMatching.peerDatabase(of: ca, in: a.connections)
                let db = DiffMatching.peerDatabase(of: cb, in: b.connections)
                switch (da.services.isEmpty, db.services.isEmpty) {
                case (false, false): out += DiffGATT.compare(da, db, connections: (ca.number, cb.number))
                case (true, false): notes.append("GATT of \(DiffMatching.label(cb)) not discovered in A: not compared")
                case (false, true): notes.append("GATT of \(DiffMatching.label(ca)) not discovered in B: not compared")
                case (true, true): break
                }
            }
            out += DiffLink.compare(ca, cb, evidenceA: a.evidence, evidenceB: b.evidence)
            out += DiffBehaviour.compare(ca, cb, fileA: a, fileB: b)
            out += DiffThroughput.compareStreams(p, a, b)
            out += DiffAudio.compare(ca, cb, fileA: a, fileB: b)
        }
        out += thisSide(a, b, notes: &notes)
        out += DiffThroughput.compareOTA(a, b)
        out += DiffDiagnosis.compare(a, b)
        out += DiffDiagnosis.compareAudio(a, b)
        out.sort(by: Difference.ranked)
        return CaptureDiff(pathA: a.path, pathB: b.path, pairs: pairs, differences: out, notes: notes)
    }

    /// This side's own database (this side as GATT server: a peripheral-side log), as the peers discovered it in each
    /// capture, compared like a peer's and named as this side's (issue 49, point 6).
    static func thisSide(_ a: FileAnalysis, _ b: FileAnalysis, notes: inout [String]) -> [Difference] {
        func database(_ f: FileAnalysis) -> (GATTDatabase, Int?) {
            var db = GATTDatabase()
            for c in f.connections { db.merge(c.localGATT) }
            return (db, f.connections.first { !$0.localGATT.isEmpty }?.number)
        }
        let (da, na) = database(a), (db, nb) = database(b)
        switch (da.services.isEmpty, db.services.isEmpty) {
        case (false, false): return DiffGATT.compare(da, db, connections: (na, nb), side: "this side's ")
        case (true, false): notes.append("this side's GATT database not discovered in A: not compared")
        case (false, true): notes.append("this side's GATT database not discovered in B: not compared")
        case (true, true): break
        }
        return []
    }

    static func unpaired(_ c: Connection, inA: Bool) -> Difference {
        let what = "\(c.isLE ? "LE" : c.isBREDR ? "BR/EDR" : "transport-unknown") connection \(DiffMatching.label(c))"
        let value = "\(formatCount(c.attPDUs)) ATT PDUs"
        return Difference(
            .connections, inA ? "connection-only-in-a" : "connection-only-in-b", impact: .major, subject: what,
            a: inA ? value : nil, b: inA ? nil : value, frames: inA ? (c.startFrame, nil) : (nil, c.startFrame),
            connections: inA ? (c.number, nil) : (nil, c.number), magnitude: Double(c.attPDUs))
    }

    /// Another peer (paired by the services or handles used, or in order), and how the link ended (the connections
    /// table's `end_reason` and `ended_by`), when they differ.
    static func ending(_ a: Connection, _ b: Connection) -> [Difference] {
        var out: [Difference] = []
        if let x = DiffMatching.peerKey(a), let y = DiffMatching.peerKey(b), x != y {
            out.append(
                Difference(
                    .connections, "peer", impact: .minor, subject: "#\(a.number)↔#\(b.number) peer address", a: x, b: y,
                    frames: (a.startFrame, b.startFrame), connections: (a.number, b.number), magnitude: 1))
        }
        for (column, title) in [("end_reason", "ended with"), ("ended_by", "ended by")] {
            let va = DiffLink.cell(column, a), vb = DiffLink.cell(column, b)
            guard va != vb else { continue }
            out.append(
                Difference(
                    .connections, column.replacing("_", with: "-"), impact: .minor,
                    subject: "#\(a.number)↔#\(b.number) \(title)", a: va ?? "(still up)", b: vb ?? "(still up)",
                    frames: (a.endFrame, b.endFrame), connections: (a.number, b.number), magnitude: 1))
        }
        return out
    }
}
