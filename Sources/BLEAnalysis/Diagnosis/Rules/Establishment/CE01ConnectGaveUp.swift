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

/// CE-01: a connection attempt that gave up: LE Create Connection accepted, no connection for as long as the
/// platform's direct-connect timeout (Android: 30 s, `DIRECT_CONNECT_TIMEOUT`, AOSP `gatt/connection_manager.cc`; the
/// row of ``PlatformTable``), then the host cancelled (LE Create Connection Cancel) and the controller reported Connection
/// Complete 0x02 — Android's "GATT 133".
///
/// A short attempt the app cancelled stays quiet, as does a background connection (no time-out: Android cancels and
/// re-creates it whenever its accept list changes, minutes apart), a cancel of Bluetooth switching off, a cancel
/// followed by a device added to the accept list (the stack edits the list, it did not give up), and every cancel on a
/// platform whose attempts never time out (iOS and macOS: Core Bluetooth's connect has no time-out).
struct CE01ConnectGaveUp: DiagnosisRule {
    static let code = FindingCode.connectGaveUp
    static let group = RuleGroup.establishment
    static let evidence =
        "LE (Extended) Create Connection, no connection for the platform's direct-connect timeout ± 5 s (30 s unless the log names another platform), LE Create Connection Cancel, Connection Complete 0x02; no Bluetooth shutdown within 5 s, no device added to the accept list within 1 s; never on iOS/macOS"
    static let anchor = "hcidoc (report \"LeConnectionComplete error\", no interpretation)"
    /// How far from the platform's timeout an attempt may end and still be that timeout (the stack's timer runs from
    /// its own request, the log's from the command).
    static let slack: Int64 = 5_000_000
    /// The timeout when the log names no platform: Android's, the platform that gives up after a fixed time.
    static let defaultTimeout: Int64 = 30_000_000
    /// An accept-list addition this soon after the cancel's Connection Complete: the stack cancelled to edit the list.
    static let editWindow: Int64 = 1_000_000

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        let platform = e.platform?.seen
        let timeout = platform.flatMap { PlatformTable.fact(.directConnectTimeout, for: $0) }
        if timeout?.value == .never { return [] }
        let limit = timeout?.value.milliseconds.map { Int64($0 * 1000) } ?? defaultTimeout
        let android = e.platform?.platform == .android
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
                guard abs(attempt - limit) <= slack, !cancelledForTheSystem(after: i, e) else { continue }
                guard case .createConnection(_, let peer) = start.kind else { continue }
                let target = peer ?? "the devices on the accept list"
                let gatt133 = android ? " Android gives up on a direct connect after 30 s (DIRECT_CONNECT_TIMEOUT): the app saw GATT 133." : ""
                out.append(
                    Diagnosis(
                        rule: Self.code, severity: severity, frame: ev.frame,
                        message:
                            "Connecting to \(target) gave up after \(duration(attempt)): the peripheral never answered (Connection Complete 0x02 after the cancel at frame \(stop.frame))."
                            + gatt133,
                        headline: "connecting to \(peer.map(shortAddress) ?? "the accept list") gave up after about \(limit / 1_000_000) s",
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

    /// Whether the cancel answered by the Connection Complete at `index` was the system's, not a give-up: Bluetooth
    /// switched off or the controller reset within 5 s, or a device added to the filter accept list within 1 s and
    /// before the next attempt (the stack disarms the attempt to edit the list, then creates it again: AOSP `le_impl.h`
    /// `create_le_connection`, ``PlatformBehaviour/acceptListEdit``; after a real time-out it removes the device
    /// instead, `on_create_connection_timeout`).
    static func cancelledForTheSystem(after index: Int, _ e: Evidence) -> Bool {
        let complete = e.events[index]
        let after = e.events[(index + 1)...].prefix { $0.timestamp.microseconds(since: complete.timestamp) <= 5_000_000 }
        let shutdown = after.contains { next in
            switch next.kind {
            case .reset: return true
            case .disconnectCommand(_, let reason): return reason == .remotePowerOff
            default: return false
            }
        }
        let beforeNextAttempt = after.prefix { next in
            switch next.kind {
            case .createConnection, .createConnectionCancel: return false
            default: return next.timestamp.microseconds(since: complete.timestamp) <= editWindow
            }
        }
        let edited = beforeNextAttempt.contains { $0.kind == .acceptListEdited(.leAddDeviceToFilterAcceptList) }
        return shutdown || edited
    }
}
