import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let parameterRequestRejected = FindingCode(
        "LP-01", layer: .link, severity: .warning,
        title: "Connection-parameter request rejected",
        explain: .init(
            meaning: "A request to change the connection parameters (interval, latency, timeout) was rejected.",
            advice: "Request parameters within what the other side accepts (iOS publishes its limits)."),
        fold: .device)
}

/// LP-01: a connection-parameter request was refused: L2CAP Connection Parameter Update Response result 0x0001, LE
/// Remote Connection Parameter Request Negative Reply, or LE Connection Update Complete with an error. The request is
/// checked against the spec and Apple's accessory rules (the spec's alone when the log names another platform), and the
/// rules it breaks are named; a refusal while a CIS runs on the link says so, the likely reason.
struct LP01ParameterRequestRejected: DiagnosisRule {
    static let code = FindingCode.parameterRequestRejected
    static let group = RuleGroup.linkParameters
    static let evidence =
        "L2CAP Connection Parameter Update Response result 1 (with its request); LE Remote Connection Parameter Request Negative Reply; LE Connection Update Complete status ≠ 0 (info when this side's Disconnect for the link was sent before it completed)"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var requests: [String: EvidenceEvent] = [:]
        var closing: [Int: EvidenceEvent] = [:]  // connection → this side's Disconnect awaiting the link's end
        var out: [Diagnosis] = []
        for ev in e.events {
            let c = e.connection(ev.connection)
            let device = e.deviceName(c)
            switch ev.kind {
            case .disconnectCommand:
                if let n = ev.connection { closing[n] = ev }
            case .disconnectionComplete:
                if let n = ev.connection { closing[n] = nil }
            case .parameterUpdateRequest(_, let id, _):
                requests["\(ev.connection ?? 0) \(id)"] = ev
            case .parameterUpdateResponse(let sender, let identifier, let result) where result != 0:
                let request = requests["\(ev.connection ?? 0) \(identifier)"]
                var sentence = "\(sender == .local ? "This side" : device) rejected a connection-parameter request at frame \(ev.frame)"
                var supporting: [CitedFrame] = []
                let apple = Self.judgedByApple(e)
                var causes = [
                    apple
                        ? "the peripheral asks for parameters outside the phone's policy (Apple's rules)"
                        : "the peripheral asks for parameters outside this host's policy"
                ]
                if let request, case .parameterUpdateRequest(_, _, let p) = request.kind {
                    sentence += ": \(p.description) (frame \(request.frame))"
                    supporting.append(CitedFrame(request.frame, "Connection Parameter Update Request"))
                    let broken = ParameterRules.violations(p, apple: apple)
                    if !broken.isEmpty { sentence += ", which breaks " + broken.joined(separator: "; ") }
                }
                if sender == .local, let cis = Self.isochronousStream(on: c, at: request?.frame ?? ev.frame, e) {
                    sentence += "; it came while \(cis.label) ran on this link (established at frame \(cis.establishedFrame))"
                    supporting.append(CitedFrame(cis.establishedFrame, "LE CIS Established"))
                    causes.insert("this side keeps the link's timing while an isochronous stream is scheduled beside it", at: 0)
                }
                sentence += "."
                out.append(
                    Diagnosis(
                        rule: Self.code, severity: severity, frame: ev.frame, message: sentence,
                        headline: "parameter request with \(device) rejected",
                        supporting: supporting, causes: causes,
                        device: c?.peerAddress, connection: c?.number, fold: "\(device)"))
            case .remoteParameterNegativeReply(_, let reason):
                out.append(
                    Diagnosis(
                        rule: Self.code, severity: severity, frame: ev.frame,
                        message:
                            "The host refused \(device)'s link-layer parameter request (negative reply \(codeName(reason)), frame \(ev.frame)).",
                        headline: "parameter request with \(device) refused",
                        causes: ["the requested parameters are outside the host's policy"],
                        device: c?.peerAddress, connection: c?.number, fold: "\(device)"))
            case .connectionUpdateComplete(_, let status, _)
            where status != .success && !DC06ProcedureCollision.codes.contains(status):
                if let n = ev.connection, let asked = closing[n] {
                    out.append(overtaken(ev, status: status, by: asked, c, device: device))
                    continue
                }
                out.append(
                    Diagnosis(
                        rule: Self.code, severity: severity, frame: ev.frame,
                        message: "A connection update with \(device) failed (\(codeName(status)), frame \(ev.frame)).",
                        headline: "connection update with \(device) failed",
                        causes: ["unacceptable parameters (0x3B)", "the peer does not support the procedure (0x1A)"],
                        device: c?.peerAddress, connection: c?.number, fold: "\(device) \(status.rawValue)"))
            default:
                break
            }
        }
        return out
    }

    /// A connection update ended by this side's own Disconnect sent before it completed (the blueprobe Xiaomi band log:
    /// Disconnect 54133, LE Connection Update 54135, its Complete 0x16 at 54137): the link was closing; no parameters
    /// were refused.
    static func overtaken(_ ev: EvidenceEvent, status: HCIStatus, by disconnect: EvidenceEvent, _ c: Connection?, device: String)
        -> Diagnosis
    {
        Diagnosis(
            rule: Self.code, severity: .info, frame: ev.frame,
            message:
                "A connection update with \(device) ended with \(codeName(status)) (frame \(ev.frame)) while this side's Disconnect (frame \(disconnect.frame)) was closing the link: overtaken by the disconnect, no parameters refused.",
            headline: "connection update with \(device) overtaken by this side's disconnect",
            supporting: [CitedFrame(disconnect.frame, "Disconnect")],
            causes: ["the host asked for new parameters while it was disconnecting"],
            device: c?.peerAddress, connection: c?.number, fold: "\(device) overtaken")
    }

    /// Apple's accessory rules are named unless the log names another platform: an Android or BlueZ host refusing a
    /// request is not applying them.
    static func judgedByApple(_ e: Evidence) -> Bool {
        guard let seen = e.platform?.seen else { return true }
        return seen == .apple
    }

    /// The CIS that ran on the link at `frame` (established before it, not yet ended), if any.
    static func isochronousStream(on c: Connection?, at frame: Int, _ e: Evidence) -> ISOStream? {
        guard let c, let iso = e.iso else { return nil }
        return iso.streams.last {
            $0.kind == .cis && $0.connectionNumber == c.number && $0.establishedFrame < frame && ($0.endFrame ?? Int.max) > frame
        }
    }
}

/// Connection-parameter checks: the spec's (Core Spec Vol 6, Part B, 4.5.2: timeout > (1 + latency) × interval × 2)
/// and Apple's accessory design guidelines (R8 "Connection Parameters": interval min ≥ 15 ms, a multiple of 15 ms;
/// latency ≤ 30; 2 s ≤ timeout ≤ 6 s; interval max × (latency + 1) ≤ 2 s; interval max × (latency + 1) × 3 < timeout).
enum ParameterRules {
    /// The rules `p` breaks: the spec's, and Apple's when `apple`.
    static func violations(_ p: ParameterRequest, apple: Bool = true) -> [String] {
        let minMs = ConnectionTiming.intervalMilliseconds(p.intervalMin), maxMs = ConnectionTiming.intervalMilliseconds(p.intervalMax)
        let timeoutMs = Double(ConnectionTiming.supervisionTimeoutMilliseconds(p.timeout))
        let effective = maxMs * Double(Int(p.latency) + 1)
        var out: [String] = []
        if timeoutMs <= effective * 2 { out.append("the spec (timeout \(Int(timeoutMs)) ms ≤ 2 × interval × (latency + 1))") }
        guard apple else { return out }
        if minMs < 15 || (minMs / 15).rounded() != minMs / 15 {
            out.append("Apple's rule 'interval min ≥ 15 ms and a multiple of 15 ms' (\(minMs.formatted2) ms)")
        }
        if p.latency > 30 { out.append("Apple's rule 'latency ≤ 30' (\(p.latency))") }
        if timeoutMs < 2000 || timeoutMs > 6000 { out.append("Apple's rule '2 s ≤ timeout ≤ 6 s' (\(Int(timeoutMs)) ms)") }
        if effective > 2000 { out.append("Apple's rule 'interval max × (latency + 1) ≤ 2 s' (here \(duration(Int64(effective * 1000))))") }
        if effective * 3 >= timeoutMs { out.append("Apple's rule 'interval max × (latency + 1) × 3 < timeout'") }
        return out
    }
}
