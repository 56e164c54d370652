import BLECore
import BLEProtocols

extension FindingCode {
    static let smallMTU = FindingCode(
        "GATT-07", layer: .att, severity: .warning,
        title: "ATT_MTU left at 23 for bulk data",
        explain: .init(
            meaning: "ATT_MTU stayed at its default 23 bytes, so each value carries at most 20 bytes while the traffic needs more.",
            advice: "Request a larger MTU (Android requestMtu(247); iOS negotiates it) right after connecting."),
        fold: .capture, traits: [.restsOnSetup, .readsPayloads])
}

/// GATT-07: ATT_MTU was left at 23 while the data came in 20-byte values (MTU − 3), the symptom of an app that never
/// asked for a larger MTU; or a value longer than the MTU allows.
struct GATT07SmallMTU: DiagnosisRule {
    static let code = FindingCode.smallMTU
    static let group = RuleGroup.gatt
    static let evidence =
        "No Exchange MTU and ATT_MTU 23 while at least 20 values (half of them or more) fill MTU − 3 = 20 bytes, or long values read/written in pieces; an ATT PDU longer than ATT_MTU"
    static let anchor = "W (mtu_exceeded / mtu_full)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var out: [Diagnosis] = []
        for c in e.connections {
            let mtu = c.link.mtu
            guard mtu.value == 23, !mtu.isObserved else { continue }
            let a = c.activity
            let bulk = a.valuesFillingMTU >= 20 && a.valuesFillingMTU * 2 >= a.values
            guard bulk || a.longValueRequests >= 4 else { continue }
            let device = e.deviceName(c)
            let how =
                bulk
                ? "\(a.valuesFillingMTU) of \(a.values) values were exactly 20 bytes"
                : "\(a.longValueRequests) long-value requests split values into pieces"
            out.append(
                Diagnosis(
                    rule: Self.code, severity: severity,
                    frame: a.firstFullValueFrame ?? (a.largestATTPDUFrame > 0 ? a.largestATTPDUFrame : c.startFrame),
                    message:
                        "ATT_MTU with \(device) stayed at 23 (\(mtu.source.description)): \(how). Request a larger MTU after connecting.",
                    headline: "ATT_MTU left at 23 with \(device)",
                    causes: ["the app never called requestMtu", "the peripheral caps its receive MTU"],
                    device: c.peerAddress, connection: c.number, facts: [UsedFact("ATT_MTU", "23", mtu.source)]))
        }
        for f in e.findings where f.kind.code == .attPDUExceedsMTU {
            guard let frame = f.frame else { continue }
            out.append(
                Diagnosis(
                    rule: Self.code, severity: severity, frame: frame,
                    message: "\(f.message) (frame \(frame)): one side ignores the MTU the other agreed.",
                    headline: "ATT PDUs longer than ATT_MTU", causes: ["firmware that assumes a larger MTU than was exchanged"],
                    fold: "exceeds"))
        }
        return out
    }
}
