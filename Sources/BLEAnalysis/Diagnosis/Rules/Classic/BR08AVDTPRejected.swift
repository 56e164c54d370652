import BLECore
import BLEProtocols

/// BR-08: an AVDTP command rejected (AVDTP 1.3, 8.20.6; A2DP 1.4, 5.1.3), with its error code. A warning when it was
/// a configuration, open or start and no stream started after it (no audio); info when a stream started anyway.
struct BR08AVDTPRejected: DiagnosisRule {
    static let id = "BR-08"
    static let group = RuleGroup.classic
    static let severity = DiagnosisSeverity.warning
    static let title = "An AVDTP command rejected"
    static let evidence =
        "AVDTP Response Reject or General Reject (message type 3 or 1) with its error code; a warning for Set Configuration, Reconfigure, Open or Start when no Start was accepted later on the link"
    static let anchor = "Wireshark (btavdtp error codes)"
    static let blocking: Set<AVDTPSignal> = [.setConfiguration, .reconfigure, .open, .start]

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var out: [Diagnosis] = []
        for c in e.connections where c.isBREDR {
            guard let a = c.profiles?.a2dp else { continue }
            let name = e.deviceName(c)
            for r in a.rejections {
                let startedLater = a.streams.contains { s in s.starts.contains { $0 > r.frame } }
                let bad = blocking.contains(r.signal) && !startedLater
                let who = r.byPeer ? name : "this side"
                let what = r.error?.description ?? "general reject"
                out.append(
                    Diagnosis(
                        rule: id, severity: bad ? severity : .info, frame: r.frame,
                        message:
                            "\(who) rejected AVDTP \(r.signal) with \(what) (frame \(r.frame))"
                            + (bad ? ": no stream started after it, so no A2DP audio." : startedLater ? "; a stream started later." : "."),
                        headline: "AVDTP \(r.signal) rejected by \(who) (\(what))",
                        supporting: r.commandFrame.map { [CitedFrame($0, "the \(r.signal) command")] } ?? [],
                        causes: causes(r.error), device: c.peerAddress, connection: c.number,
                        foldKey: "BR-08 \(name) \(r.signal.rawValue) \(r.error?.rawValue ?? 0)"))
            }
        }
        return out
    }

    static func causes(_ error: AVDTPError?) -> [String] {
        switch error?.rawValue {
        case 0x13: ["the end point is already configured (a second source, or a configuration not closed)"]
        case 0x31: ["the command came in a state the end point does not allow (Start before Open, a second Start)"]
        case let v? where v >= 0xC1: ["the codec configuration is not one the peer supports (\(error!))"]
        default: ["the peer's AVDTP implementation refused it (\(error?.description ?? "general reject"))"]
        }
    }
}
