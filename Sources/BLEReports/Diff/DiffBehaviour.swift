import BLEAnalysis
import BLECore

/// The order of the GATT procedures on one pair of connections: discovery (services, characteristics, descriptors),
/// the ATT_MTU exchange, pairing and encryption, subscriptions (each CCCD written, with its value) and the first write
/// of each characteristic; the two sequences aligned (longest common subsequence) and the first step where
/// they part said with its frame on both sides.
enum DiffBehaviour {
    struct Step: Equatable {
        var text: String
        var frame: Int
    }

    /// The steps of connection `c`, in frame order: a procedure that goes on over several exchanges (the services,
    /// the characteristics of several services one after another, the descriptors) is one step until another step
    /// comes between.
    static func steps(_ c: Connection, evidence: [EvidenceEvent], streams: [ThroughputStream]) -> [Step] {
        var out: [Step] = []
        let db = c.gatt
        for s in db.services { out.append(Step(text: "discover services", frame: s.discoveredAt)) }
        for ch in db.characteristics { out.append(Step(text: "discover characteristics", frame: ch.discoveredAt)) }
        for frame in db.descriptorDiscoveryFrames { out.append(Step(text: "discover descriptors", frame: frame)) }
        // The ATT_MTU exchange: the link fact it set, observed at the response.
        for m in c.link.mtu.changes { if case .observed = m.source { out.append(Step(text: "ATT_MTU exchange", frame: m.frame)) } }
        for e in evidence where e.connection == c.number {
            switch e.kind {
            case .pairingRequest(let sender, _): out.append(Step(text: "pairing asked by \(sender.rawValue)", frame: e.frame))
            case .encryptionChange(_, _, let on): out.append(Step(text: "encryption \(on ? "on" : "off")", frame: e.frame))
            case .cccdWrite(let handle, let valueHandle, let value, _, _):
                let name = (valueHandle ?? (handle > 0 ? handle - 1 : 0))
                let what = db.uuid(for: name)?.description ?? hex(name, width: 4)
                let mode = value & 0x3 == 0 ? "off" : value & 0x2 != 0 ? "indicate" : "notify"
                out.append(Step(text: "subscribe \(what) \(mode)", frame: e.frame))
            default: continue
            }
        }
        // First writes of each characteristic; a CCCD written is a subscription, said above.
        let cccd = BluetoothUUID(uuid16: 0x2902)
        for s in streams where s.key.connectionNumber == c.number && [.writeRequest, .writeCommand].contains(s.key.kind) {
            guard s.characteristic != cccd else { continue }
            let what = s.characteristic?.description ?? hex(s.key.handle, width: 4)
            out.append(Step(text: "first \(s.key.kind.name) \(what)", frame: s.firstFrame))
        }
        out.sort { ($0.frame, $0.text) < ($1.frame, $1.text) }
        // One step per run of the same procedure.
        return out.enumerated().filter { $0.offset == 0 || out[$0.offset - 1].text != $0.element.text }.map(\.element)
    }

    /// One line of the aligned sequences: a step on both sides, or on one only.
    enum Aligned: Equatable {
        case both(Step, Step)
        case onlyA(Step)
        case onlyB(Step)
    }

    /// The two sequences aligned on their longest common subsequence of step texts. Sequences past `limit` steps are
    /// cut (the alignment is quadratic); a connection has tens of GATT procedures, not thousands.
    static func align(_ a: [Step], _ b: [Step], limit: Int = 2_000) -> [Aligned] {
        let x = Array(a.prefix(limit)), y = Array(b.prefix(limit))
        let n = x.count, m = y.count
        var table = [[Int32]](repeating: [Int32](repeating: 0, count: m + 1), count: n + 1)
        for i in stride(from: n - 1, through: 0, by: -1) {
            for j in stride(from: m - 1, through: 0, by: -1) {
                table[i][j] = x[i].text == y[j].text ? table[i + 1][j + 1] + 1 : max(table[i + 1][j], table[i][j + 1])
            }
        }
        var out: [Aligned] = []
        var i = 0, j = 0
        while i < n || j < m {
            if i < n, j < m, x[i].text == y[j].text {
                out.append(.both(x[i], y[j]))
                i += 1
                j += 1
            } else if j >= m || (i < n && table[i + 1][j] >= table[i][j + 1]) {
                out.append(.onlyA(x[i]))
                i += 1
            } else {
                out.append(.onlyB(y[j]))
                j += 1
            }
        }
        return out
    }

    static func compare(_ a: Connection, _ b: Connection, fileA: FileAnalysis, fileB: FileAnalysis) -> [Difference] {
        let sa = steps(a, evidence: fileA.evidence, streams: fileA.throughput)
        let sb = steps(b, evidence: fileB.evidence, streams: fileB.throughput)
        let aligned = align(sa, sb)
        guard let index = aligned.firstIndex(where: { if case .both = $0 { false } else { true } }) else { return [] }
        let pair = "#\(a.number)↔#\(b.number)"
        let conns = (a.number, b.number)
        var out: [Difference] = []
        let (stepA, stepB) = divergence(aligned, at: index)
        out.append(
            Difference(
                .behaviour, "first-divergence", impact: .minor, subject: "\(pair) procedures part at step \(index + 1)",
                a: stepA?.text ?? "(nothing more)", b: stepB?.text ?? "(nothing more)", frames: (stepA?.frame, stepB?.frame),
                connections: conns, magnitude: Double(aligned.count - index)))
        let onlyA = aligned.compactMap { if case .onlyA(let s) = $0 { s } else { nil } }
        let onlyB = aligned.compactMap { if case .onlyB(let s) = $0 { s } else { nil } }
        if !onlyA.isEmpty {
            out.append(
                Difference(
                    .behaviour, "steps-only-in-a", impact: .info, subject: "\(pair) steps",
                    a: "\(onlyA.count): " + summary(onlyA), b: nil, frames: (onlyA[0].frame, nil), connections: conns,
                    magnitude: Double(onlyA.count)))
        }
        if !onlyB.isEmpty {
            out.append(
                Difference(
                    .behaviour, "steps-only-in-b", impact: .info, subject: "\(pair) steps",
                    a: nil, b: "\(onlyB.count): " + summary(onlyB), frames: (nil, onlyB[0].frame), connections: conns,
                    magnitude: Double(onlyB.count)))
        }
        return out
    }

    /// The step each side takes where the sequences part: A's first step B lacks and B's first step A lacks, from there.
    static func divergence(_ aligned: [Aligned], at index: Int) -> (Step?, Step?) {
        var a: Step?, b: Step?
        for item in aligned[index...] {
            switch item {
            case .onlyA(let s): if a == nil { a = s }
            case .onlyB(let s): if b == nil { b = s }
            case .both(let x, let y):
                if a == nil { a = x }
                if b == nil { b = y }
            }
            if a != nil && b != nil { break }
        }
        return (a, b)
    }

    /// `discover service 0x180F, subscribe 0x2A19 notify, …` (the first three).
    static func summary(_ steps: [Step]) -> String {
        steps.prefix(3).map { "\($0.text) (#\($0.frame))" }.joined(separator: ", ") + (steps.count > 3 ? ", …" : "")
    }
}
