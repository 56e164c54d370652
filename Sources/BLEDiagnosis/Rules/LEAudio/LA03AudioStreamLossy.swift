import BLEAnalysis
import BLECore

extension FindingCode {
    static let audioStreamLossy = FindingCode(
        "LA-03", layer: .audio, severity: .warning,
        title: "Audio stream lossy",
        explain: .init(
            meaning: "Audio packets were lost or flagged lost on a stream: what was heard had gaps.",
            advice: "Check range and interference; more retransmissions or a longer latency trade delay for robustness."),
        fold: .value)
}

/// LA-03: a received audio stream lost SDUs: at least 1 % of those expected, or a gap of at least 100 ms (never
/// delivered, a sequence gap, or delivered flagged lost). The verdict line of the stream's health says how many, in how
/// many bursts and where the longest was.
struct LA03AudioStreamLossy: DiagnosisRule {
    static let code = FindingCode.audioStreamLossy
    static let group = RuleGroup.leAudio
    static let evidence =
        "HCI ISO data: sequence-number gaps and Packet_Status_Flag 0b10 (lost) against the SDUs expected, per CIS/BIS and direction"
    static let anchor = "none (btmon and Wireshark show each packet's flags; none counts the loss)"

    static let lossShare = 0.01
    static let longGapMicroseconds: Int64 = 100_000

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        guard let iso = e.iso else { return [] }
        return iso.health.compactMap { h in
            let longest = h.longestBurst?.durationMicroseconds ?? 0
            guard h.lostSDUs > 0, h.lossRatio >= lossShare || longest >= longGapMicroseconds else { return nil }
            let label = iso.label(of: h)
            let stream = iso.stream(of: h)
            let c = e.connection(stream?.connectionNumber)
            let frame = h.longestBurst?.frame ?? h.lostFrames.first ?? h.lastFrame
            var supporting = h.bursts.prefix(3).map { CitedFrame($0.frame, "\($0.sdus) SDUs lost from sequence \($0.firstSequence)") }
            if let first = h.lostFrames.first, !supporting.contains(where: { $0.frame == first }) {
                supporting.append(CitedFrame(first, "first SDU flagged lost"))
            }
            return Diagnosis(
                rule: Self.code, severity: severity, frame: frame, message: h.verdict(label: label) + ".",
                headline: "\(label) \(h.direction == .tx ? "tx" : "rx") lost \(String(fractionDigits: 1, h.lossRatio * 100)) % of its SDUs",
                supporting: supporting.sorted { $0.frame < $1.frame },
                causes: [
                    "radio: range, body blocking (an earbud on the far ear), 2.4 GHz interference (Wi-Fi)",
                    "too few retransmissions for the link (RTN, NSE, FT) or a scheduling conflict with other links",
                ], device: c?.peerAddress, connection: c?.number, fold: "\(label) \(h.direction)")
        }
    }
}
