import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let dataNeverLeft = FindingCode(
        "DC-08", layer: .link, severity: .error,
        title: "Link dropped with data stuck in the controller",
        explain: .init(
            meaning:
                "The link ended while data sent to the controller had not been sent over the air for seconds: the link was stalled before it dropped.",
            advice: "Look at what stalled the link (peer not acknowledging, interference) and at the controller's flow control."),
        fold: .device, traits: [.claimsAbsence])
}

/// DC-08: the link dropped while packets the host sent more than 5 s earlier were still not reported sent by the
/// controller (no Number Of Completed Packets): the data never left.
struct DC08DataNeverLeft: DiagnosisRule {
    static let code = FindingCode.dataNeverLeft
    static let group = RuleGroup.disconnection
    static let evidence = "Disconnection Complete while host → controller ACL packets had no Number Of Completed Packets for more than 5 s"
    static let anchor = "hcidoc (Nocp)"
    static let threshold: Int64 = 5_000_000

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.disconnections.compactMap { d in
            guard let c = d.connection, c.inFlight > 0, let since = c.activity.waitingSince else { return nil }
            let waited = d.event.timestamp.microseconds(since: since.timestamp)
            guard waited > threshold else { return nil }
            let device = e.deviceName(c)
            return Diagnosis(
                rule: Self.code, severity: severity, frame: d.frame,
                message:
                    "Data to \(device) never left the controller: \(c.inFlight) packet\(c.inFlight == 1 ? "" : "s") waited \(duration(waited)) without being reported sent when the link dropped (frame \(d.frame)).",
                headline: "data to \(device) stuck in the controller when the link dropped",
                supporting: [CitedFrame(since.frame, "packets waiting for the controller since here")],
                causes: ["the peer stopped acknowledging (radio, hung peer)", "a controller stall"],
                device: c.peerAddress, connection: c.number, fold: "\(device)")
        }
    }
}
