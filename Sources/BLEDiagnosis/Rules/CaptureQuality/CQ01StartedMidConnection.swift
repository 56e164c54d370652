import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let startedMidConnection = FindingCode(
        "CQ-01", layer: .capture, severity: .info,
        title: "Capture starts mid-connection",
        explain: .init(
            meaning:
                "The capture began while a connection was already up: its parameters, MTU and pairing were set before the first record, so they are assumed, not seen.",
            advice: "Start the capture (Android: turn the HCI snoop log on, then toggle Bluetooth) before the devices connect."),
        fold: .never, traits: [.describesCapture])
}

/// CQ-01: the capture starts in the middle of connections: traffic on handles no Connection Complete opened. Their
/// setup, pairing and MTU exchange are not in the file (an Android log rotates at 65,535 records into `.last`).
struct CQ01StartedMidConnection: DiagnosisRule {
    static let code = FindingCode.startedMidConnection
    static let group = RuleGroup.captureQuality
    static let evidence = "ACL, Number Of Completed Packets or Disconnection Complete for a handle with no earlier Connection Complete"
    static let anchor = "hcidoc (Informational \"before snoop start\"); btmon -a (\"Connection setup missing\")"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        let inferred = e.connections.filter { $0.inferred && !HH06HandleDisagreement.reopened($0, in: e) }
        guard let first = inferred.first else { return [] }
        let rotated = e.fileName?.hasSuffix(".last") == true ? " (an Android `.last` file: the older half of a rotated log)" : ""
        let list = inferred.prefix(4).map { "\(hex($0.handle, width: 4)) (first seen at frame \($0.startFrame))" }.joined(separator: ", ")
        return [
            Diagnosis(
                rule: Self.code, severity: severity, frame: first.startFrame,
                message:
                    "The capture starts in the middle of \(inferred.count) connection\(inferred.count == 1 ? "" : "s"): \(list)\(inferred.count > 4 ? ", …" : ""); their setup, pairing and MTU exchange are not in this file\(rotated).",
                headline: "capture starts mid-connection",
                supporting: inferred.dropFirst().prefix(20).map {
                    CitedFrame($0.startFrame, "handle \(hex($0.handle, width: 4)) first seen")
                },
                causes: ["the log rotated (Android: every 65,535 records)", "logging was switched on late"])
        ]
    }
}

extension HH06HandleDisagreement {
    /// An inferred connection on a handle whose earlier connection ended in the capture (HH-06's case, not CQ-01's).
    static func reopened(_ c: Connection, in e: Evidence) -> Bool {
        e.connections.contains { $0.handle == c.handle && $0.number < c.number && ($0.endFrame ?? .max) < c.startFrame }
    }
}
