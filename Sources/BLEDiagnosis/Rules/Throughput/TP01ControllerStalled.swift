import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let controllerStalled = FindingCode(
        "TP-01", layer: .hci, severity: .error,
        title: "Sending stalled in the controller",
        explain: .init(
            meaning:
                "Data handed to the controller was not sent for more than 5 s: the controller's buffers stayed full (the link was not moving data).",
            advice: "Look at the link at that time (peer not acknowledging, interference, a long connection interval)."),
        fold: .never, traits: [.claimsAbsence, .readsPayloads])
}

/// TP-01: the controller stopped reporting sent packets: host → controller ACL packets waited more than 5 s for
/// Number Of Completed Packets while the link stayed up (hcidoc's `Nocp`). A wait across a gap of the log
/// (``CaptureCompleteness/gaps``: a minute or more without any record) is "cannot tell", at info: the controller's
/// reports of that time may be what the log lost.
struct TP01ControllerStalled: DiagnosisRule {
    static let code = FindingCode.controllerStalled
    static let group = RuleGroup.throughput
    static let evidence = "Host → controller ACL packets with no Number Of Completed Packets for more than 5 s"
    static let anchor = "hcidoc (Nocp)"
    static let threshold: Int64 = 5_000_000

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.connections.compactMap { c in
            guard let w = c.activity.longestWait, w.microseconds > threshold else { return nil }
            let device = e.deviceName(c)
            let packets = "\(w.packets) packet\(w.packets == 1 ? "" : "s")"
            if let gap = e.completeness?.gaps.first(where: { $0.frame > w.start.frame && $0.frame <= w.end.frame }) {
                return Diagnosis(
                    rule: Self.code, severity: .info, frame: w.end.frame,
                    message:
                        "Cannot tell whether sending to \(device) stalled: \(packets) waited \(duration(w.microseconds)) in the controller (frames \(w.start.frame)–\(w.end.frame)), across \(duration(gap.microseconds)) without any record in the log (before frame \(gap.frame)): the controller's reports of that time may be what the log lost.",
                    headline: "sending to \(device): cannot tell (log gap)",
                    supporting: [CitedFrame(w.start.frame, "waiting since"), CitedFrame(gap.frame, "after the gap")],
                    causes: ["the log was paused or rotated"], device: c.peerAddress, connection: c.number)
            }
            return Diagnosis(
                rule: Self.code, severity: severity, frame: w.end.frame,
                message:
                    "Sending to \(device) stalled: \(packets) waited \(duration(w.microseconds)) in the controller (frames \(w.start.frame)–\(w.end.frame)) before it reported them sent.",
                headline: "sending to \(device) stalled in the controller", supporting: [CitedFrame(w.start.frame, "waiting since")],
                causes: ["the peer stopped acknowledging (radio)", "a controller firmware stall"], device: c.peerAddress,
                connection: c.number)
        }
    }
}
