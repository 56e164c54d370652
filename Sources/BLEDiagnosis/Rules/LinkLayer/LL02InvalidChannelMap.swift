import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let invalidChannelMap = FindingCode(
        "LL-02", layer: .link, severity: .error,
        title: "Channel map with fewer than 2 channels",
        explain: .init(
            meaning:
                "A connect request or channel map update used fewer than 2 data channels: no connection can hop on it. A peripheral must ignore it; one that accepts may hang or crash (SweynTooth).",
            advice: "The central is a fuzzer or has a channel-classification bug; the peripheral should drop such a request."),
        fold: .value)
}

/// LL-02: a CONNECT_IND or LL_CHANNEL_MAP_IND whose channel map uses fewer than 2 data channels (Core Spec Vol 6,
/// Part B, 2.3.3.1 and 5.1.2: at least two shall be used). No connection can hop on it: a peripheral must ignore the
/// request, and one that takes it may hang or crash (SweynTooth's Zephyr case).
struct LL02InvalidChannelMap: DiagnosisRule {
    static let code = FindingCode.invalidChannelMap
    static let group = RuleGroup.linkLayer
    static let evidence = "CONNECT_IND / AUX_CONNECT_REQ ChM, LL_CHANNEL_MAP_IND (air captures)"
    static let anchor = "SweynTooth (Invalid Channel Map, CVE-2019-19195 family)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var out: [Diagnosis] = []
        for ev in e.events {
            guard case .linkLayerNonCompliance(let n) = ev.kind, case let .channelMap(pdu, used, map) = n.kind else { continue }
            let c = e.connection(ev.connection)
            let device = e.deviceName(c)
            if let i = out.firstIndex(where: { $0.connection == c?.number && $0.headline.hasPrefix(pdu) }) {
                out[i].occurrences.append(ev.frame)
                continue
            }
            let after =
                e.isAirCapture && c != nil && (c!.attPDUs > 0 || (c!.linkLayer?.packets ?? 0) > 0)
                ? " The peripheral answered it anyway." : ""
            out.append(
                Diagnosis(
                    rule: Self.code, severity: severity, frame: ev.frame,
                    message:
                        "\(pdu) at frame \(ev.frame) (link #\(c?.number ?? 0) with \(device)) uses \(used) data channel\(used == 1 ? "" : "s") (map \(hex(map, width: 10))): the specification requires at least 2, so no connection can hop on it.\(after)",
                    headline: "\(pdu) with \(used) channel\(used == 1 ? "" : "s") (\(device))",
                    causes: ["a fuzzer or attack tool (SweynTooth)", "a central's channel classification bug"],
                    device: c?.peerAddress, connection: c?.number, fold: "\(device) \(pdu)"))
        }
        return out
    }
}
