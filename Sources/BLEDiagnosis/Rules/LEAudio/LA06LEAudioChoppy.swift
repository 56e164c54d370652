import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let leAudioChoppy = FindingCode(
        "LA-06", layer: .audio, severity: .warning,
        title: "LE Audio choppy (quality report)",
        explain: .init(
            meaning: "The controller reported choppy LE Audio while a stream was running, and packets were lost around it.",
            advice: "Check range and interference; Wi-Fi coexistence is a common cause."),
        fold: .value)
}

/// LA-06: the controller reported choppy LE Audio (Android Bluetooth Quality Report 0x07) while an audio stream was
/// running: the report tied to the stream, with what the stream lost around it (± 1 s).
struct LA06LEAudioChoppy: DiagnosisRule {
    static let code = FindingCode.leAudioChoppy
    static let group = RuleGroup.leAudio
    static let evidence =
        "Bluetooth Quality Report id 0x07 (LE Audio choppy) during an established CIS or BIS; the stream's SDUs lost within 1 s of it"
    static let anchor = "none (Android logs the report; nothing ties it to the stream)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        guard let iso = e.iso else { return [] }
        return e.events.compactMap { ev in
            guard case .qualityReport(let handle, let report, let rssi, _, _, _) = ev.kind, report == .leAudioChoppy else { return nil }
            // The report names the ACL link or the CIS; a stream open at its frame on either.
            let stream =
                iso.streams.first { s in
                    s.establishedFrame <= ev.frame && (s.endFrame ?? Int.max) >= ev.frame
                        && (s.handle == handle || s.aclHandle == handle || s.connectionNumber == ev.connection)
                } ?? iso.streams.first { $0.establishedFrame <= ev.frame && ($0.endFrame ?? Int.max) >= ev.frame }
            let health = stream.map { s in iso.health.filter { $0.streamNumber == s.number } } ?? []
            let lost = health.reduce(0) { total, h in
                total + h.bursts.filter { abs($0.timestamp.microseconds(since: ev.timestamp)) <= 1_000_000 }.reduce(0) { $0 + $1.sdus }
            }
            let c = e.connection(ev.connection ?? stream?.connectionNumber)
            let on = stream.map { " on \($0.label)" } ?? " with no ISO stream open"
            return Diagnosis(
                rule: Self.code, severity: severity, frame: ev.frame,
                message:
                    "The controller reported choppy LE Audio\(on) (frame \(ev.frame), RSSI \(rssi) dBm); the stream lost \(lost) SDU\(lost == 1 ? "" : "s") in the longest bursts within 1 s of it.",
                headline: "LE Audio choppy\(on)",
                causes: ["radio: range, body blocking, interference", "a scheduling conflict (another link, Wi-Fi coexistence)"],
                device: c?.peerAddress, connection: c?.number, fold: "\(stream?.label ?? "")")
        }
    }
}
