import BLECore
import BLEProtocols

extension FindingCode {
    static let connectGaveUp = FindingCode(
        "CE-01", layer: .link, severity: .critical,
        title: "Connection attempt gave up (Android GATT 133)",
        explain: .init(
            meaning:
                "The phone tried to connect for about 30 s, never reached the device and gave up (on Android the app sees GATT error 133).",
            advice:
                "Check the device is advertising and connectable at that moment and in range; retry with a fresh scan rather than a stored address."
        ),
        fold: .device)
}

/// CE-01: a connection attempt that gave up: LE Create Connection accepted, no connection for about 30 s, then the
/// host cancelled (LE Create Connection Cancel) and the controller reported Connection Complete 0x02 — Android's
/// "GATT 133" (`DIRECT_CONNECT_TIMEOUT` = 30 s, AOSP `gatt/connection_manager.cc`).
///
/// A short attempt the app cancelled stays quiet, as does a background connection (no time-out: Android cancels and
/// re-creates it whenever its accept list changes, minutes apart) and a cancel of Bluetooth switching off.
struct CE01ConnectGaveUp: DiagnosisRule {
    static let code = FindingCode.connectGaveUp
    static let group = RuleGroup.establishment
    static let evidence =
        "LE (Extended) Create Connection, no connection for 25–35 s, LE Create Connection Cancel, Connection Complete 0x02; no Bluetooth shutdown within 5 s"
    static let anchor = "hcidoc (report \"LeConnectionComplete error\", no interpretation)"
    /// An attempt at least this long before its cancel is a time-out, not a cancel the app asked for.
    static let minimumAttempt: Int64 = 25_000_000
    /// An attempt longer than this was a background connection (Android cancels those whenever its accept list
    /// changes, after minutes), not a direct connect timing out.
    static let maximumAttempt: Int64 = 35_000_000

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var out: [Diagnosis] = []
        var create: EvidenceEvent? = nil
        var cancel: EvidenceEvent? = nil
        for (i, ev) in e.events.enumerated() {
            switch ev.kind {
            case .createConnection:
                create = ev
                cancel = nil
            case .createConnectionCancel:
                cancel = ev
            case .connectionComplete(_, let status, _):
                defer {
                    create = nil
                    cancel = nil
                }
                guard status == .unknownConnectionIdentifier, let start = create, let stop = cancel else { continue }
                let attempt = stop.timestamp.microseconds(since: start.timestamp)
                guard attempt >= minimumAttempt, attempt <= maximumAttempt else { continue }
                // Bluetooth switched off or the controller reset right after: the cancel was the shutdown's.
                let shutdown = e.events[(i + 1)...].prefix { $0.timestamp.microseconds(since: ev.timestamp) <= 5_000_000 }
                    .contains { next in
                        switch next.kind {
                        case .reset: return true
                        case .disconnectCommand(_, let reason): return reason == .remotePowerOff
                        default: return false
                        }
                    }
                guard !shutdown else { continue }
                guard case .createConnection(_, let peer) = start.kind else { continue }
                let target = peer ?? "the devices on the accept list"
                out.append(
                    Diagnosis(
                        rule: Self.code, severity: severity, frame: ev.frame,
                        message:
                            "Connecting to \(target) gave up after \(duration(attempt)): the peripheral never answered (Connection Complete 0x02 after the cancel at frame \(stop.frame)). On Android this is \"GATT 133\".",
                        headline: "connecting to \(peer.map(shortAddress) ?? "the accept list") gave up after about 30 s",
                        supporting: [
                            CitedFrame(start.frame, "LE Create Connection"), CitedFrame(stop.frame, "LE Create Connection Cancel"),
                        ],
                        causes: [
                            "the peripheral was not advertising or not connectable (already connected elsewhere?)",
                            "out of range", "it advertises with a resolvable private address the phone cannot resolve (bond or IRK lost)",
                            "a wrong address type, or a very long advertising interval",
                        ],
                        device: peer, fold: "\(target)"))
            default:
                break
            }
        }
        return out
    }
}
