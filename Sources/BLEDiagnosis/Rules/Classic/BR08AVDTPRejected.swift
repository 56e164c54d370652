import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let avdtpRejected = FindingCode(
        "BR-08", layer: .classic, severity: .error,
        title: "An AVDTP command rejected",
        explain: .init(
            meaning:
                "One side refused an AVDTP command with an error code. A refused configuration, open or start with no stream started after it means no A2DP audio.",
            advice:
                "Read the error code: a codec the headset does not support (0xC1–0xE3), an end point already in use (0x13), or a command in the wrong state (0x31)."
        ),
        fold: .value)
}

/// BR-08: an AVDTP command rejected (AVDTP 1.3, 8.20.6; A2DP 1.4, 5.1.3), with its error code. An error when it was
/// a configuration, open or start and no stream started after it (no A2DP audio: the setup failed silently, the music
/// will not play); info when a stream started anyway.
struct BR08AVDTPRejected: DiagnosisRule {
    static let code = FindingCode.avdtpRejected
    static let group = RuleGroup.classic
    static let evidence =
        "AVDTP Response Reject or General Reject (message type 3 or 1) with its error code; an error for Set Configuration, Reconfigure, Open or Start when no Start was accepted later on the link"
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
                        rule: Self.code, severity: bad ? severity : .info, frame: r.frame,
                        message:
                            "\(who) rejected AVDTP \(r.signal) with \(what) (frame \(r.frame))"
                            + (bad ? ": no stream started after it, so no A2DP audio." : startedLater ? "; a stream started later." : "."),
                        headline: "AVDTP \(r.signal) rejected by \(who) (\(what))",
                        supporting: r.commandFrame.map { [CitedFrame($0, "the \(r.signal) command")] } ?? [],
                        causes: causes(r.error), device: c.peerAddress, connection: c.number,
                        fold: "\(name) \(r.signal.rawValue) \(r.error?.rawValue ?? 0)"))
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
