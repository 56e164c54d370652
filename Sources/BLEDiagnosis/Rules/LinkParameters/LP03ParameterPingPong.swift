import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let parameterPingPong = FindingCode(
        "LP-03", layer: .link, severity: .info,
        title: "Connection-parameter ping-pong",
        explain: .init(
            meaning:
                "The connection parameters switched back and forth between two settings: the two sides (or two apps) want different ones.",
            advice: "Decide which side sets the parameters and stop the other from requesting its own."),
        fold: .never)
}

/// LP-03: the connection parameters bounced between two sets three or more times within a minute: the peripheral asks
/// again and the phone overrides.
struct LP03ParameterPingPong: DiagnosisRule {
    static let code = FindingCode.parameterPingPong
    static let group = RuleGroup.linkParameters
    static let evidence =
        "Three or more connection updates within 60 s alternating between two parameter sets; the peer's own policy when it asked for each change (its parameter requests within the run)"
    static let anchor = "none"
    static let window: Int64 = 60_000_000

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.connections.compactMap { c in
            let changes = c.link.parameters.changes
            guard changes.count >= 4 else { return nil }
            for start in 0..<(changes.count - 3) {
                let run = changes[start..<(start + 4)]
                let values = run.map(\.value)
                guard values[0] != values[1], values[0] == values[2], values[1] == values[3],
                    run.last!.timestamp.microseconds(since: run.first!.timestamp) <= window
                else { continue }
                let device = e.deviceName(c)
                let asked = peerRequests(c, from: run.first!.timestamp, to: run.last!.frame, e)
                let byPeer = asked.count >= run.count - 1
                return Diagnosis(
                    rule: Self.code, severity: severity, frame: run.last!.frame,
                    message:
                        "The connection parameters with \(device) bounced between two sets (\(values[0].description) and \(values[1].description)), frames \(run.map { String($0.frame) }.joined(separator: ", "))"
                        + (byPeer
                            ? "; the peer asked for each change (its requests at \(asked.map(String.init).joined(separator: ", ")))."
                            : "."),
                    headline: "parameter ping-pong with \(device)",
                    supporting: run.dropLast().map { CitedFrame($0.frame, $0.value.description) },
                    causes: [
                        byPeer
                            ? "the peer's own policy: it asks for one set, then the other"
                            : "iOS or Android override the accepted request and the peripheral asks again"
                    ], device: c.peerAddress,
                    connection: c.number)
            }
            return nil
        }
    }

    /// The peer's parameter requests on `c` (L2CAP Connection Parameter Update Request, or the link layer's request
    /// the controller reports) from 2 s before the run's first change to its last (the blueprobe Xiaomi band: 58689,
    /// 58709, 58718 … each a few ms before the change it asked for).
    static func peerRequests(_ c: Connection, from start: Timestamp, to end: Int, _ e: Evidence) -> [Int] {
        e.events.compactMap { ev in
            guard ev.connection == c.number, ev.frame <= end, ev.timestamp.microseconds(since: start) >= -2_000_000 else { return nil }
            switch ev.kind {
            case .parameterUpdateRequest(.peer, _, _), .remoteParameterRequest: return ev.frame
            default: return nil
            }
        }
    }
}
