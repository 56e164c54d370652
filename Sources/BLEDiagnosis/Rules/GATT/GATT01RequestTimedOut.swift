import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let requestTimedOut = FindingCode(
        "GATT-01", layer: .att, severity: .critical,
        title: "ATT request never answered (30 s time-out)",
        explain: .init(
            meaning:
                "An ATT request (or indication) got no response within 30 s: no other request (or indication) may be sent on the bearer until the link is reconnected (Core Spec Vol 3, Part F, 3.3.3). Where the peer went on notifying, its stack ran and only this transaction was stuck.",
            advice: "Find why the peer did not answer (busy, crashed, waiting on something): the peer's firmware must answer every request."
        ),
        fold: .device, traits: [.claimsAbsence, .readsPayloads])
}

/// GATT-01: an ATT request (or indication) got no answer within the ATT transaction time-out (30 s, Core Spec Vol 3,
/// Part F, 3.3.3): the bearer is dead after it, and stacks tear the link down.
struct GATT01RequestTimedOut: DiagnosisRule {
    static let code = FindingCode.requestTimedOut
    static let group = RuleGroup.gatt
    static let evidence =
        "An ATT request or indication with no response or confirmation for 30 s (ended by the disconnection or the end of the capture), or answered later"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.events.compactMap { ev in
            let c = e.connection(ev.connection)
            let device = e.deviceName(c)
            switch ev.kind {
            case .attUnanswered(let request, let handle, let sender, let ended, let endFrame, let waited)
            where waited >= attTransactionTimeoutMicroseconds && ended != .nextRequest && e.answersInLog:
                let on = handle.map { " for \(hex($0, width: 4))" } ?? ""
                // The link went down because of it (soon after the 30 s, or this side closed it): the terminal failure.
                let end = e.disconnections.first { $0.frame == endFrame }
                let tornDown =
                    ended == .disconnection && (waited < attTransactionTimeoutMicroseconds + 10_000_000 || end?.byThisSide == true)
                let alive = sender == .local ? peerKeptNotifying(c, after: ev.frame) : nil
                let one = request == .handleValueIndication ? "indication" : "request"
                let how =
                    switch ended {
                    case .disconnection where tornDown: "the ATT bearer timed out after 30 s and the link was torn down (frame \(endFrame))"
                    case .disconnection where alive != nil:
                        "\(device) kept notifying (handle \(hex(alive!.handle, width: 4)), the last at frame \(alive!.last)), so its stack ran but never answered this \(one); this side could send no other \(one) on the bearer (Core Spec Vol 3, Part F, 3.3.3) for the \(duration(waited)) until the link ended (frame \(endFrame))"
                    case .disconnection:
                        "the ATT bearer was dead from 30 s after it on, until the link ended \(duration(waited)) later (frame \(endFrame))"
                    default: "it was still waiting \(duration(waited)) later, when the capture ended"
                    }
                let what = request == .handleValueIndication ? "never confirmed" : "never answered"
                let from = sender == .local ? e.sides(.local) : "\(device)'s"
                let to = sender == .local ? " by \(device)" : ""
                return Diagnosis(
                    rule: Self.code, severity: tornDown ? severity : .error, frame: tornDown ? endFrame : ev.frame,
                    message:
                        "\(from.prefix(1).uppercased() + from.dropFirst()) \(request)\(on) (frame \(ev.frame)) was \(what)\(to): \(how).",
                    headline: "\(request) on \(device) \(what)",
                    supporting: tornDown ? [CitedFrame(ev.frame, "\(request)\(on)")] : [CitedFrame(endFrame, "the link ended")],
                    causes: causes, device: c?.peerAddress, connection: c?.number, fold: "\(device) \(request.rawValue)")
            case .attLateResponse(let request, let handle, let requestFrame, let us):
                let on = handle.map { " for \(hex($0, width: 4))" } ?? ""
                // A clock that runs backwards by more than jitter (crackle's PPI captures: fraction fields above 10^6)
                // cannot measure the wait: said as what the capture cannot show, not as an error.
                if clockRunsBackwards(e) {
                    return Diagnosis(
                        rule: Self.code, severity: .info, frame: ev.frame,
                        message:
                            "\(request)\(on) on \(device) (frame \(requestFrame)) was answered at frame \(ev.frame), \(duration(us)) later by the capture's clock; that clock runs backwards (Log), so the capture cannot show how long the answer took.",
                        headline: "\(request) on \(device): the wait cannot be measured",
                        supporting: [CitedFrame(requestFrame, "\(request)\(on)")], causes: [], device: c?.peerAddress,
                        connection: c?.number)
                }
                return Diagnosis(
                    rule: Self.code, severity: .error, frame: ev.frame,
                    message:
                        "\(request)\(on) on \(device) (frame \(requestFrame)) was answered only after \(duration(us)) (frame \(ev.frame)), past the 30 s ATT time-out.",
                    headline: "\(request) on \(device) answered after the ATT time-out",
                    supporting: [CitedFrame(requestFrame, "\(request)\(on)")],
                    causes: causes, device: c?.peerAddress, connection: c?.number)
            default:
                return nil
            }
        }
    }

    /// The handle the peer notified last on, when it notified after `frame`: its stack was running, so the bearer was
    /// not dead, only this side's transaction stuck.
    static func peerKeptNotifying(_ c: Connection?, after frame: Int) -> (handle: UInt16, last: Int)? {
        c?.activity.notified.filter { $0.value.last > frame }.max { $0.value.last < $1.value.last }.map { ($0.key, $0.value.last) }
    }

    /// The log's timestamps step back by more than clock jitter (``CaptureCompleteness``'s time-backwards item at
    /// warning): durations across those steps are not measurable.
    static func clockRunsBackwards(_ e: Evidence) -> Bool {
        e.completeness?.items.contains { $0.code == .timeBackwards && $0.severity >= .warning } == true
    }

    static let causes = [
        "the GATT server hung or waited for an app callback that never came", "the app never confirmed an indication",
        "the response was lost in the peer's flow control",
    ]
}
