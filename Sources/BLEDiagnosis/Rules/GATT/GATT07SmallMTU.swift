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
/// round trips), or long values moved in pieces. Context (info) when every stream of full values was paced by its
/// sender or too short to judge: the capture shows no transfer the MTU slowed.
struct GATT07SmallMTU: DiagnosisRule {
    static let code = FindingCode.smallMTU
    static let group = RuleGroup.gatt
    static let evidence =
        "No Exchange MTU and ATT_MTU 23 while at least 20 values (half of them or more) fill MTU − 3 = 20 bytes, or long values read/written in pieces; an ATT PDU longer than ATT_MTU. Full values: a warning when a stream of them was limited by the link or the ATT round trip (its throughput verdict), info when paced by its sender"
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
            let cost = bulk ? Self.cost(of: c, e) : .limited("")
            let how =
                bulk
                ? "\(a.valuesFillingMTU) of \(a.values) values were exactly 20 bytes"
                : "\(a.longValueRequests) long-value requests split values into pieces"
            out.append(
                Diagnosis(
                    rule: Self.code, severity: cost.isLimited ? severity : .info,
                    frame: a.firstFullValueFrame ?? (a.largestATTPDUFrame > 0 ? a.largestATTPDUFrame : c.startFrame),
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

    static func name(_ s: JudgedStream) -> String {
        "\(s.kind.name) on \(s.handle.map { hex($0, width: 4) } ?? "several handles") (\(s.packets) values)"
    }
}
