import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let airCaptureBlind = FindingCode(
        "CQ-05", layer: .capture, severity: .warning,
        title: "Air capture missed the connection or its key",
        explain: .init(
            meaning:
                "An over-the-air sniffer missed what it needs: the connection's start (CONNECT_IND), the key of an encrypted link, or advertising packets (bad CRC).",
            advice: "Start the sniffer before the devices connect, give it the key (--ltk, --keys-from) and keep it close to both devices."),
        fold: .capture, traits: [.describesCapture])
}

/// CQ-05: an air capture that did not follow the connection: no CONNECT_IND (joined mid-connection), encrypted
/// traffic no key opens, or advertising whose CRC failed. Link-layer and upper-layer rules see less.
struct CQ05AirCaptureBlind: DiagnosisRule {
    static let code = FindingCode.airCaptureBlind
    static let group = RuleGroup.captureQuality
    /// A warning: what the sniffer missed limits the analysis; no link, data or pairing was lost because of it (issue
    /// 35 point 4: severity from impact).
    static let evidence =
        "Air capture: a connection inferred from data PDUs (no CONNECT_IND); encrypted PDUs no key decrypts; advertising PDUs failing their CRC (all, or a fifth or more)"
    static let anchor = "W (CRC/MIC flags only)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        guard e.isAirCapture else { return [] }
        var out: [Diagnosis] = []
        for c in e.connections where c.inferred {
            out.append(
                Diagnosis(
                    rule: Self.code, severity: .warning, frame: c.startFrame,
                    message:
                        "The sniffer joined connection \(hex(c.handle, width: 4)) after it started (no CONNECT_IND; first packet at frame \(c.startFrame)): its parameters and addresses are not known.",
                    headline: "sniffer joined a connection late", causes: ["the sniffer started after the connection"], connection: c.number
                ))
        }
        for f in e.findings where f.kind.code == .llEncryptedNoKey {
            guard let frame = f.frame else { continue }
            out.append(
                Diagnosis(
                    rule: Self.code, severity: severity, frame: frame,
                    message: "\(f.message) (frame \(frame)): what it carried cannot be diagnosed.",
                    headline: "encrypted link without a key", causes: [noKeyCause(e, frame: frame)], fold: "no key"))
        }
        // Advertising the sniffer could not read: every packet (or a fifth or more) failed its CRC.
        for f in e.findings where f.kind.code == .llAdvertisingCRC && f.severity >= .warning {
            guard let frame = f.frame else { continue }
            out.append(
                Diagnosis(
                    rule: Self.code, severity: .warning, frame: frame,
                    message: f.message.prefix(1).uppercased() + f.message.dropFirst() + ": the devices they came from are not in the log.",
                    headline: "advertising unreadable (bad CRC)",
                    causes: [
                        "a noisy radio environment", "the sniffer on the wrong PHY or channel",
                        "a sniffer that keeps packets with a bad CRC",
                    ]))
        }
        return out
    }

    /// Why no key opened the link, from the last pairing its record holds before `frame` (the first PDU left
    /// encrypted): each method hides its key differently. It said "LE Secure Connections" for every link, an LE legacy
    /// OOB pairing too (the bsniffhub legacy OOB capture, frame 240).
    static func noKeyCause(_ e: Evidence, frame: Int) -> String {
        let link = e.connections.last { $0.isLE && $0.startFrame <= frame && ($0.endFrame ?? .max) >= frame }
        guard let pairing = link?.machine.securityRecord.pairings.last(where: { $0.frame <= frame }) else {
            return "a key from a pairing before the capture (a bonded link re-encrypting): give its LTK (--ltk, --keys-from)"
        }
        if let debug = pairing.debugKeyFrame {
            return
                "the key derived from the debug public key (frame \(debug)) does not open them: a key changed since the pairing, or the capture was altered"
        }
        switch (pairing.procedure, pairing.model) {
        case (.leLegacy, .outOfBand):
            return "LE legacy pairing out of band (frame \(pairing.frame)): its TK never crossed the air; give the STK or LTK (--ltk)"
        case (.leLegacy, _):
            return
                "LE legacy pairing (frame \(pairing.frame)) whose TK no search found (part of the pairing missed?); give the STK or LTK (--ltk)"
        case (.crossTransport, _):
            return "keys derived from the BR/EDR link key (frame \(pairing.frame)): give the LTK (--ltk, --keys-from)"
        default:
            return
                "LE Secure Connections (frame \(pairing.frame)): its LTK comes from ECDH and never crosses the air; give it (--ltk, --keys-from)"
        }
    }
}
