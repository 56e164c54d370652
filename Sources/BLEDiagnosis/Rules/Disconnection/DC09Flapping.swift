import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let flapping = FindingCode(
        "DC-09", layer: .link, severity: .warning,
        title: "Connection flapping",
        explain: .init(
            meaning:
                "The same peer connected and disconnected three or more times within minutes: the link keeps failing and the app keeps retrying.",
            advice: "Fix the first disconnection's cause; add back-off to the reconnection logic."),
        fold: .never)
}

/// DC-09: three or more connect → disconnect cycles with the same peer within 5 minutes, not ended by this side: a
/// marginal link, an auto-reconnect loop or a peer reset loop. Summarises the reasons.
struct DC09Flapping: DiagnosisRule {
    static let code = FindingCode.flapping
    static let group = RuleGroup.disconnection
    static let evidence =
        "Three or more connections to the same peer that each ended, not by this side, within 5 minutes of the first; their end reasons"
    static let anchor = "none (hcidoc lists the connections only)"
    static let window: Int64 = 300_000_000

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var byPeer: [String: [DisconnectionStory]] = [:]
        // A link this side closed (the user, Bluetooth switched off) is no cycle of a flapping link, nor one that ended
        // the device's probable firmware update (its reboot into it, SC-01), nor a session the peer ended after its
        // profiles were taken down in order (PeerOrderlyEnd: the BLUFFS buds' 7 sessions).
        for d in e.disconnections
        where !d.byThisSide && e.scenarios?.update(endingAt: d.frame, connection: d.connection?.number) == nil
            && !DC02PeerEndedLink.isOrderlyEnd(d, in: e)
        {
            guard let peer = d.connection?.peerIdentity ?? d.connection?.peerAddress else { continue }
            byPeer[peer, default: []].append(d)
        }
        var out: [Diagnosis] = []
        for (peer, cycles) in byPeer.sorted(by: { $0.value[0].frame < $1.value[0].frame }) {
            // The longest run of cycles that fits in the window.
            var best: ArraySlice<DisconnectionStory> = []
            var start = 0
            for end in cycles.indices {
                while cycles[end].event.timestamp.microseconds(since: cycles[start].event.timestamp) > window { start += 1 }
                if end - start + 1 > best.count { best = cycles[start...end] }
            }
            guard best.count >= 3, let first = best.first, let last = best.last else { continue }
            var reasons: [UInt8: Int] = [:]
            for d in best { reasons[d.reason.rawValue, default: 0] += 1 }
            let reasonText = reasons.sorted { ($0.value, $1.key) > ($1.value, $0.key) }.map { "\($0.value)× \(hex($0.key))" }
                .joined(separator: ", ")
            let span = last.event.timestamp.microseconds(since: first.event.timestamp)
            out.append(
                Diagnosis(
                    rule: Self.code, severity: severity, frame: last.frame,
                    message: "The connection to \(peer) flapped: \(best.count) connections ended in \(duration(span)) (\(reasonText)).",
                    headline: "connection to \(peer) flapped",
                    supporting: best.dropLast().map { CitedFrame($0.frame, "ended: \(codeName($0.reason))") },
                    causes: ["a marginal radio link", "an auto-reconnect loop", "the peer resetting"], device: peer,
                    connection: last.connection?.number))
        }
        return out
    }
}
