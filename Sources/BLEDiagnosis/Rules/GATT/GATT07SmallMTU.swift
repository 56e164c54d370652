import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let smallMTU = FindingCode(
        "GATT-07", layer: .att, severity: .warning,
        title: "ATT_MTU left at 23 for bulk data",
        explain: .init(
            meaning: "ATT_MTU stayed at its default 23 bytes, so each value carries at most 20 bytes while the traffic needs more.",
            advice: "Request a larger MTU (Android requestMtu(247); iOS negotiates it) right after connecting."),
        fold: .capture, traits: [.restsOnSetup, .readsPayloads])
}

/// GATT-07: ATT_MTU was left at 23 while the data came in 20-byte values (MTU − 3), the symptom of an app that never
/// asked for a larger MTU; or a value longer than the MTU allows.
///
/// Severity follows what the small MTU cost on the capture. A warning when it did: a stream of those full values whose
/// throughput verdict names the link or the ATT round trip (a larger MTU carries the same data in fewer packets or
/// round trips), or long values moved in pieces again and again at a cost the link felt (``longValueCost(of:_:)``).
/// Context (info) when every stream of full values was paced by its sender or too short to judge, or when the pieces
/// were one read or write of each value (a report map read once at connect: the blueprobe BTlogs22 log, 5 Read Blobs
/// of 0x0025 in 109 ms, 0.2 % of its 45.5 s link) or cost little: the capture shows no transfer the MTU slowed.
struct GATT07SmallMTU: DiagnosisRule {
    static let code = FindingCode.smallMTU
    static let group = RuleGroup.gatt
    static let evidence =
        "No Exchange MTU and ATT_MTU 23 while at least 20 values (half of them or more) fill MTU − 3 = 20 bytes, or long values read/written in pieces; an ATT PDU longer than ATT_MTU. Full values: a warning when a stream of them was limited by the link or the ATT round trip (its throughput verdict), info when paced by its sender. Pieces: a warning when one handle's value went in pieces 2 times or more and their extra round trips took 1 s or more and 5 % or more of the link's time, info when each value went once (at connect) or cost less"
    static let anchor = "W (mtu_exceeded / mtu_full)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var out: [Diagnosis] = []
        for c in e.connections {
            let mtu = c.link.mtu
            guard mtu.value == 23, !mtu.isObserved else { continue }
            let a = c.activity
            let bulk = a.valuesFillingMTU >= 20 && a.valuesFillingMTU * 2 >= a.values
            guard bulk || a.longValueRequests >= 4 else { continue }
            let device = e.deviceName(c)
            let cost = bulk ? Self.cost(of: c, e) : Self.longValueCost(of: c, e)
            let how =
                bulk
                ? "\(a.valuesFillingMTU) of \(a.values) values were exactly 20 bytes"
                : "\(a.longValueRequests) long-value requests (Read Blob, Prepare Write) moved values in pieces"
            out.append(
                Diagnosis(
                    rule: Self.code, severity: cost.isLimited ? severity : .info,
                    // The first full value, or the first piece of a long value (its Read Blob or Prepare Write).
                    frame: (bulk ? a.firstFullValueFrame : a.longValues.first?.frame)
                        ?? (a.largestATTPDUFrame > 0 ? a.largestATTPDUFrame : c.startFrame),
                    message:
                        "ATT_MTU with \(device) stayed at 23 (\(mtu.source.description)): \(how)\(cost.text). "
                        + (cost.isLimited
                            ? "Request a larger MTU after connecting." : "A larger MTU would matter only for a faster transfer."),
                    headline: "ATT_MTU left at 23 with \(device)",
                    causes: ["the app never called requestMtu", "the peripheral caps its receive MTU"],
                    device: c.peerAddress, connection: c.number, facts: [UsedFact("ATT_MTU", "23", mtu.source)]))
        }
        for f in e.findings where f.kind.code == .attPDUExceedsMTU {
            guard let frame = f.frame else { continue }
            out.append(
                Diagnosis(
                    rule: Self.code, severity: severity, frame: frame,
                    message: "\(f.message) (frame \(frame)): one side ignores the MTU the other agreed.",
                    headline: "ATT PDUs longer than ATT_MTU", causes: ["firmware that assumes a larger MTU than was exchanged"],
                    fold: "exceeds"))
        }
        return out
    }

    /// What the MTU cost: limited, with the stream it slowed, or not, with why the capture shows no cost.
    enum Cost {
        case limited(String)
        case notShown(String)
        var isLimited: Bool { if case .limited = self { true } else { false } }
        var text: String {
            switch self {
            case .limited(let s), .notShown(let s): s
            }
        }
    }

    /// Verdicts under which a larger MTU would have moved the same values faster: the link's settings or ceiling, or
    /// one ATT round trip per value.
    static let mtuBound: Set<ThroughputLimit> = TP03ParameterLimited.linkLimits.union([.roundTrip])

    /// The streams of this connection whose values mostly fill the MTU (at least 18 bytes on average), judged by the
    /// throughput tracker: one limited by the link, or by the round trip while its sender mostly kept it busy (idle
    /// under half its time: a queue of values, not commands sent now and then), makes the MTU a cost; all of them paced
    /// by their sender (or none long enough to judge) show none.
    static func cost(of c: Connection, _ e: Evidence) -> Cost {
        let full = e.judgedStreams.filter { s in
            s.connection?.number == c.number && s.packets >= 20 && s.valueBytes >= 18 * s.packets
        }
        let bound = full.filter { mtuBound.contains($0.verdict.limit) && ($0.verdict.limit != .roundTrip || $0.idleShare < 0.5) }
        if let s = bound.max(by: { $0.valueBytes < $1.valueBytes }) {
            return .limited(
                "; \(Self.name(s)) ran at \(s.verdict.head), limited by the \(s.verdict.limit == .roundTrip ? "ATT round trip" : "link")")
        }
        guard let s = full.max(by: { $0.valueBytes < $1.valueBytes }) else {
            return .notShown("; no stream made mostly of such values was busy enough to show whether the MTU slowed it")
        }
        let why =
            [.app, .idleGaps].contains(s.verdict.limit) || s.idleShare >= 0.5
            ? "was paced by its sender" : "was not limited by the link"
        return .notShown(
            "; it cost nothing the capture shows: \(Self.name(s)) \(why) (\(s.verdict.head); idle \(Int(s.idleShare * 100)) % of its time)")
    }

    /// A long-value cost worth a warning: one handle's value moved in pieces `repeatedRuns` times or more (not a value
    /// read once at connect), its extra round trips `noticeable` or more in all, and `share` or more of the link's time
    /// (a value re-read now and then over hours costs the link little). The corpus (341 captures, 2026-12-01) has one
    /// link that moves values in pieces without an Exchange MTU, one read at connect; the thresholds are the cost a
    /// user sees: a second of waiting, a twentieth of the link.
    static let repeatedRuns = 2
    static let noticeable: Int64 = 1_000_000
    static let share = 0.05

    /// What moving long values in pieces cost: limited when it was repeated, long and a share of the link's time
    /// (from its start to its end, or to the capture's end), else not shown, with the numbers either way.
    static func longValueCost(of c: Connection, _ e: Evidence) -> Cost {
        let l = c.activity.longValues
        let runs = l.mostRepeated
        let end = c.endTime ?? e.lastTime ?? c.startTime
        let span = max(1, end.microseconds(since: c.startTime))
        let part = Double(l.roundTripMicroseconds) / Double(span)
        let percent = part < 0.001 ? "< 0.1" : String(fractionDigits: part < 0.1 ? 1 : 0, part * 100)
        let times = runs.map { " (\(hex($0.handle, width: 4)) \($0.runs == 1 ? "once" : "\($0.runs) times"))" } ?? ""
        let text =
            "; \(l.answered) extra round trips\(times) took \(duration(l.roundTripMicroseconds)), \(percent) % of the link's \(duration(span))"
        let repeated = (runs?.runs ?? 0) >= repeatedRuns
        if repeated && l.roundTripMicroseconds >= noticeable && part >= share { return .limited(text) }
        let why =
            !repeated
            ? "each value went in pieces once" : "they cost under \(duration(noticeable)) or \(Int(share * 100)) % of the link"
        return .notShown("\(text): \(why)")
    }

    static func name(_ s: JudgedStream) -> String {
        "\(s.kind.name) on \(s.handle.map { hex($0, width: 4) } ?? "several handles") (\(s.packets) values)"
    }
}
