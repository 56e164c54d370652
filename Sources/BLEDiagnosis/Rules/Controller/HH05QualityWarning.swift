import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let qualityWarning = FindingCode(
        "HH-05", layer: .hci, severity: .error,
        title: "Controller quality warning",
        explain: .init(
            meaning:
                "The controller sent a Bluetooth Quality Report warning about the link (near supervision timeout, choppy audio, a failed connection).",
            advice: "Read the RSSI and counters the report gives: usually range or interference."),
        fold: .value)
}

/// HH-05: the controller's own quality reports (Android BQR, vendor event 0xFF sub-event 0x58) warned: approaching the
/// supervision timeout, choppy audio, root inflammation, connect failure. Monitoring reports alone say nothing. An RSSI
/// of −127 dBm is the bottom of the scale on a link that received nothing, never read as a measurement.
struct HH05QualityWarning: DiagnosisRule {
    static let code = FindingCode.qualityWarning
    static let group = RuleGroup.controller
    static let evidence =
        "Bluetooth Quality Report with id 0x02 approaching LSTO, 0x03/0x04/0x07 choppy audio, 0x05 root inflammation, 0x08 connect fail; RSSI, SNR, no-RX"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.events.compactMap { ev in
            if case .rootInflammation(let code, let vendorCode) = ev.kind {
                return Diagnosis(
                    rule: Self.code, severity: .error, frame: ev.frame,
                    message:
                        "The controller reported a fatal internal error (root inflammation, error \(hex(code)), vendor error \(hex(vendorCode)), frame \(ev.frame)): the stack restarts Bluetooth and every link drops.",
                    headline: "controller root inflammation (fatal internal error)",
                    causes: ["a controller firmware fault", "the controller's self-diagnosis"], fold: "root \(code) \(vendorCode)")
            }
            guard case .qualityReport(_, let report, let rssi, let snr, let noRx, let retransmissions) = ev.kind, report != .monitorMode,
                report != .energyMonitor, report != .rfStats
            else { return nil }
            let c = e.connection(ev.connection)
            let device = e.deviceName(c)
            let what: String =
                switch report {
                case .approachingLSTO: "warned that the link to \(device) was about to time out"
                case .connectFail: "reported a failed connection to \(device)"
                default: "reported \(report) on the link to \(device)"
                }
            let measures = rssi <= BQRSignal.noSignal ? rssiText(rssi) : "RSSI \(rssi) dBm, SNR \(snr) dB"
            // A report about the link degrading: a warning (the code's error is a fatal controller error, above).
            return Diagnosis(
                rule: Self.code, severity: .warning, frame: ev.frame,
                message: "The controller \(what) (frame \(ev.frame)): \(measures), \(noRx) no-RX, \(retransmissions) retransmissions.",
                headline: "controller quality report \(report) for \(device)",
                causes: ["radio: range, body blocking, interference", "the controller's self-diagnosis"], device: c?.peerAddress,
                connection: c?.number, fold: "\(device) \(report.rawValue)")
        }
    }
}
