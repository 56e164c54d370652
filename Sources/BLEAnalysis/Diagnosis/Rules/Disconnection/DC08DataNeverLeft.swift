import BLECore
import BLEProtocols

/// DC-08: the link dropped while packets the host sent more than 5 s earlier were still not reported sent by the
/// controller (no Number Of Completed Packets): the data never left.
struct DC08DataNeverLeft: DiagnosisRule {
    static let id = "DC-08"
    static let group = RuleGroup.disconnection
    static let severity = DiagnosisSeverity.error
    static let title = "Link dropped with data stuck in the controller"
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
                rule: id, severity: severity, frame: d.frame,
                message:
                    "Data to \(device) never left the controller: \(c.inFlight) packet\(c.inFlight == 1 ? "" : "s") waited \(duration(waited)) without being reported sent when the link dropped (frame \(d.frame)).",
                headline: "data to \(device) stuck in the controller when the link dropped",
                supporting: [CitedFrame(since.frame, "packets waiting for the controller since here")],
                causes: ["the peer stopped acknowledging (radio, hung peer)", "a controller stall"],
                device: c.peerAddress, connection: c.number, foldKey: "DC-08 \(device)")
        }
    }
}
