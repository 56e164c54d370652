import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let endsTooSoon = FindingCode(
        "CQ-03", layer: .capture, severity: .warning,
        title: "Capture ends before the outcome",
        explain: .init(
            meaning:
                "The capture stops before something it shows had an outcome: a command without its answer, a request without its response, a connection attempt still running.",
            advice: "Let the capture run a few seconds past the failure before stopping it."),
        fold: .never, traits: [.describesCapture])
}

/// CQ-03: the capture ends before the outcome: the file is cut (its last record incomplete), or it ends with a command,
/// an ATT request, a pairing or a connection attempt still pending, or within 2 s of the last failure.
struct CQ03EndsTooSoon: DiagnosisRule {
    static let code = FindingCode.endsTooSoon
    static let group = RuleGroup.captureQuality
    static let evidence =
        "A cut last record (truncated file); at the end: a command unanswered, an ATT request pending, a connection attempt pending"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var out: [Diagnosis] = []
        if let cut = e.findings.first(where: { $0.kind.code == .captureTruncatedFile }) {
            out.append(
                Diagnosis(
                    rule: Self.code, severity: severity, frame: cut.frame ?? e.lastFrame,
                    message:
                        "The file is cut: \(cut.message)\(cut.offset.map { " (byte offset \($0))" } ?? ""). What happened after it is not in the log.",
                    headline: "the file is cut", causes: ["the log was copied while being written", "a transfer or disk cut it short"]))
        }
        var pending = pendingATT(e)
        for ev in e.events {
            switch ev.kind {
            case .commandUnanswered(let op, let f):
                if let end = e.lastTime, end.microseconds(since: ev.timestamp) <= hciCommandTimeoutMicroseconds {
                    pending.append(CitedFrame(f, "\(op) still waiting for its answer"))
                }
            default:
                break
            }
        }
        if let lastCreate = e.events.last(where: { if case .createConnection = $0.kind { true } else { false } }),
            !e.events.contains(where: { ev in
                guard ev.frame > lastCreate.frame else { return false }
                switch ev.kind {
                case .connectionComplete, .createConnectionCancel: return true
                // Refused by its Command Status: the attempt never started.
                case .commandFailed(_, _, let commandFrame): return commandFrame == lastCreate.frame
                default: return false
                }
            })
        {
            pending.append(CitedFrame(lastCreate.frame, "connection attempt still pending"))
        }
        if let last = pending.max(by: { $0.frame < $1.frame }) {
            let byRecordOrder =
                GATT01RequestTimedOut.clockRunsBackwards(e)
                ? " Judged by record order: the capture's timestamps go backwards, so how long anything waited is not known." : ""
            out.append(
                Diagnosis(
                    rule: Self.code, severity: .info, frame: last.frame,
                    message:
                        "The capture ends with \(pending.count) thing\(pending.count == 1 ? "" : "s") still pending (\(last.text) at frame \(last.frame)): the outcome is not in the log.\(byRecordOrder)",
                    headline: "capture ends with work pending", supporting: pending.filter { $0.frame != last.frame },
                    causes: ["the log was pulled too early", "the stack crashed"]))
        }
        return out
    }

    /// The ATT requests still waiting when the capture ends. With timestamps that go backwards (``GATT01RequestTimedOut/
    /// clockRunsBackwards(_:)``) neither the wait nor the directions inferred from the timing can be trusted: a request is
    /// pending only when no response that answers it follows it in record order on its link (crackle's PPI capture: the
    /// Write Request at 277 is answered by the Write Response at 280, stamped a second before it), however long the
    /// stamps say it waited. With a sound clock, the wait under the ATT time-out decides, as the bearer paired them.
    static func pendingATT(_ e: Evidence) -> [CitedFrame] {
        let byRecordOrder = GATT01RequestTimedOut.clockRunsBackwards(e)
        var pending: [CitedFrame] = []
        for ev in e.events where e.answersInLog {
            guard case .attUnanswered(let request, _, _, .endOfCapture, _, let waited) = ev.kind else { continue }
            if byRecordOrder {
                let answered = e.events.contains { later in
                    guard later.frame > ev.frame, later.connection == ev.connection,
                        case .attResponseUnpaired(let response, _) = later.kind
                    else { return false }
                    return response == .errorResponse || request.responseOpcode == response
                }
                if answered { continue }
            } else if waited >= attTransactionTimeoutMicroseconds {
                continue
            }
            pending.append(CitedFrame(ev.frame, "\(request) still waiting for its answer"))
        }
        return pending
    }
}
