import BLEAnalysis
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
/// re-creates it whenever its accept list changes, minutes apart) and a cancel of Bluetooth switching off. A cancel
/// followed by a device added to the accept list (the stack edits the list, it did not give up), and a cancel on a
/// platform whose attempts never time out (iOS and macOS: Core Bluetooth's connect has no time-out), are info.
struct CE01ConnectGaveUp: DiagnosisRule {
    static let code = FindingCode.connectGaveUp
    static let group = RuleGroup.establishment
    static let evidence =
        "LE (Extended) Create Connection, no connection for the platform's direct-connect timeout ± 5 s (30 s unless the log names another platform), LE Create Connection Cancel, Connection Complete 0x02; no Bluetooth shutdown within 5 s; info when a device is added to the accept list or this side's random address set within 1 s (an edit, an address rotation), when the devices removed within 1 s are several or one added long before (the stack stopped background connects), or on iOS/macOS (connects never time out); the device removed is named when it was added the timeout before (its connect runs from the Add, across attempts re-created meanwhile)"
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
        let never = timeout?.value == .never
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
                guard case .createConnection(_, let peer) = start.kind, !shutdown(after: i, e) else { continue }
                let removals = peer == nil ? acceptListRemovals(after: i, e) : nil
                let removed = removals.map { verdict($0, cancel: stop, limit: limit, before: i, e) }
                var attempt = stop.timestamp.microseconds(since: start.timestamp)
                if abs(attempt - limit) > slack {
                    // A device's connect runs from its Add, across attempts the stack re-created meanwhile (to rotate
                    // its address): the Echo Auto log's 04:da:28 added 17028, re-created 17592, removed 17601.
                    guard case .expired(_, _, let since)? = removed else { continue }
                    attempt = since
                }
                let addition = acceptListAddition(after: i, e)
                let rotation = addition == nil && removals == nil ? addressRotation(after: i, e) : nil
                if never || addition != nil || rotation != nil {
                    out.append(
                        routineCancel(
                            ev, start: start, stop: stop, peer: peer, never: never ? timeout : nil, edit: addition ?? rotation, e))
                    continue
                }
                var expired: (address: String, cited: [CitedFrame])? = nil
                switch removed {
                case .expired(let address, let cited, _)?: expired = (address, cited)
                case .stopped?:
                    out.append(stoppedConnecting(ev, start: start, stop: stop, removals: removals?.map(\.cited) ?? []))
                    continue
                case .unknown?, nil: break
                }
                // The device whose time-out the stack's removal shows, else the command's own address.
                let device = expired?.address ?? peer
                let target = device.map { expired == nil ? $0 : "\($0) (on the accept list)" } ?? "the devices on the accept list"
                let gatt133 =
                    android ? " Android gives up on a direct connect after 30 s (DIRECT_CONNECT_TIMEOUT): the app saw GATT 133." : ""
                out.append(
                    Diagnosis(
                        rule: Self.code, severity: severity, frame: ev.frame,
                        message:
                            "Connecting to \(target) gave up after \(duration(attempt)): the peripheral never answered (Connection Complete 0x02 after the cancel at frame \(stop.frame))."
                            + gatt133,
                        headline:
                            "connecting to \(device.map(shortAddress) ?? "the accept list") gave up after about \(limit / 1_000_000) s",
                        supporting: [
                            CitedFrame(start.frame, "LE Create Connection"), CitedFrame(stop.frame, "LE Create Connection Cancel"),
                        ] + (expired?.cited ?? []),
                        causes: [
                            "the peripheral was not advertising or not connectable (already connected elsewhere?)",
                            "out of range", "it advertises with a resolvable private address the phone cannot resolve (bond or IRK lost)",
                            "a wrong address type, or a very long advertising interval",
                        ],
                        device: device, fold: "\(device ?? target)"))
            default:
                break
            }
        }
        return out
    }

    /// A cancel that is the platform's routine, said at info so its frames stay cited: an attempt on a platform whose
    /// connects never time out (`never`, its ``PlatformTable`` row), or one the stack cancelled to add a device to the
    /// filter accept list and connect again (AOSP `le_impl.h` `create_le_connection`; after a real time-out it removes
    /// the device instead, `on_create_connection_timeout`).
    static func routineCancel(
        _ complete: EvidenceEvent, start: EvidenceEvent, stop: EvidenceEvent, peer: String?, never: PlatformFact?, edit: CitedFrame?,
        _ e: Evidence
    ) -> Diagnosis {
        let rotation = edit?.text == Self.rotationLabel
        let target = peer ?? "the devices on the accept list"
        let attempt = duration(stop.timestamp.microseconds(since: start.timestamp))
        let why =
            never.map { _ in
                "\(e.platform?.name ?? "this platform")'s connection attempts never time out (Core Bluetooth's connect has no timer): the system or the app cancelled it, the peripheral was not given up on"
            }
            ?? (rotation
                ? "the stack cancelled it to give itself a new random address (LE Set Random Address, frame \(edit?.frame ?? complete.frame)) and connect again: an address rotation, not a time-out"
                : "the stack cancelled it to add a device to the filter accept list (frame \(edit?.frame ?? complete.frame)) and connect again: an accept-list edit, not a time-out")
        return Diagnosis(
            rule: Self.code, severity: .info, frame: complete.frame,
            message:
                "Connecting to \(target) was cancelled after \(attempt) (Connection Complete 0x02 after the cancel at frame \(stop.frame)): \(why).",
            headline: "connect to \(peer.map(shortAddress) ?? "the accept list") cancelled (not a time-out)",
            supporting: [CitedFrame(start.frame, "LE Create Connection"), CitedFrame(stop.frame, "LE Create Connection Cancel")]
                + (edit.map { [$0] } ?? []),
            causes: [
                never?.source
                    ?? (rotation
                        ? "a random address can change only while the controller does not initiate (Core Spec Vol 4, Part E, 7.8.4)"
                        : "the stack's accept-list edit (\(PlatformTable.fact(.acceptListEdit, for: .android)?.source ?? ""))")
            ],
            device: peer, fold: "routine \(target)")
    }

    /// Bluetooth switched off or the controller reset within 5 s of the Connection Complete at `index`: the cancel was
    /// the shutdown's.
    static func shutdown(after index: Int, _ e: Evidence) -> Bool {
        let complete = e.events[index]
        return e.events[(index + 1)...].prefix { $0.timestamp.microseconds(since: complete.timestamp) <= 5_000_000 }.contains { next in
            switch next.kind {
            case .reset: return true
            case .disconnectCommand(_, let reason): return reason == .remotePowerOff
            default: return false
            }
        }
    }

    /// LE Add Device To Filter Accept List within 1 s of the Connection Complete at `index` and before the next
    /// attempt: the cancel was the stack's, to edit the list (``PlatformBehaviour/acceptListEdit``).
    static func acceptListAddition(after index: Int, _ e: Evidence) -> CitedFrame? {
        let complete = e.events[index]
        for next in e.events[(index + 1)...] {
            guard next.timestamp.microseconds(since: complete.timestamp) <= editWindow else { return nil }
            switch next.kind {
            case .createConnection, .createConnectionCancel: return nil
            case .acceptListEdited(.leAddDeviceToFilterAcceptList, _): return CitedFrame(next.frame, "LE Add Device To Filter Accept List")
            default: continue
            }
        }
        return nil
    }

    static let rotationLabel = "LE Set Random Address"

    /// LE Set Random Address within 1 s of the Connection Complete at `index` and before the next attempt: the stack
    /// cancelled to change its own address, which the controller refuses while it initiates (7.8.4), and connects again.
    static func addressRotation(after index: Int, _ e: Evidence) -> CitedFrame? {
        let complete = e.events[index]
        for next in e.events[(index + 1)...] {
            guard next.timestamp.microseconds(since: complete.timestamp) <= editWindow else { return nil }
            switch next.kind {
            case .createConnection, .createConnectionCancel: return nil
            case .ownRandomAddressSet: return CitedFrame(next.frame, rotationLabel)
            default: continue
            }
        }
        return nil
    }

    /// A device removed from the filter accept list after a cancel.
    struct Removal {
        var frame: Int
        var address: String
        var cited: CitedFrame { CitedFrame(frame, "LE Remove Device From Filter Accept List \(address)") }
    }

    /// The removals from the filter accept list within 1 s of the Connection Complete at `index`, before the next
    /// attempt; nil for none.
    static func acceptListRemovals(after index: Int, _ e: Evidence) -> [Removal]? {
        let complete = e.events[index]
        var removed: [Removal] = []
        for next in e.events[(index + 1)...] {
            guard next.timestamp.microseconds(since: complete.timestamp) <= editWindow else { break }
            if case .createConnection = next.kind { break }
            if case .acceptListEdited(.leRemoveDeviceFromFilterAcceptList, let address?) = next.kind {
                removed.append(Removal(frame: next.frame, address: address))
            }
        }
        return removed.isEmpty ? nil : removed
    }

    /// What the removals after a cancel say about it.
    enum RemovalVerdict {
        /// The one device removed was added about the platform's timeout before the cancel (`since`, µs): its direct
        /// connect expired.
        case expired(address: String, cited: [CitedFrame], since: Int64)
        /// The stack removed devices it was not timing out: it stopped connecting.
        case stopped
        /// The one device removed was added before the log began: the removal cannot tell.
        case unknown
    }

    /// Whether the removals are a time-out's clean-up. On a time-out, Android removes the one device whose direct
    /// connect expired, 30 s after adding it (AOSP `le_impl.h` `on_create_connection_timeout`), and connects again to
    /// the rest (the blueprobe moto g04s log: 04:da:28:4d:cd:62 added 1936, removed 1958). Several devices removed at
    /// once (the same log at 2107–2111, three devices added together at 724–732), or one added long before (the
    /// fossibot log: 0c:7e:24:38:61:9e added 392 s earlier, removed at 8519 and added again 1.4 s later), is the stack
    /// ending background connects.
    static func verdict(_ removals: [Removal], cancel: EvidenceEvent, limit: Int64, before index: Int, _ e: Evidence) -> RemovalVerdict {
        let addresses = Set(removals.map(\.address))
        guard addresses.count == 1, let removal = removals.first else { return .stopped }
        let added = e.events[..<index].last { ev in
            if case .acceptListEdited(.leAddDeviceToFilterAcceptList, removal.address?) = ev.kind { return true }
            return false
        }
        guard let added else { return .unknown }
        let since = cancel.timestamp.microseconds(since: added.timestamp)
        guard abs(since - limit) <= slack else { return .stopped }
        return .expired(
            address: removal.address,
            cited: [CitedFrame(added.frame, "LE Add Device To Filter Accept List \(removal.address)"), removal.cited], since: since)
    }

    /// A background connect the stack ended by removing its devices from the accept list: said at info, frames cited.
    static func stoppedConnecting(_ complete: EvidenceEvent, start: EvidenceEvent, stop: EvidenceEvent, removals: [CitedFrame]) -> Diagnosis
    {
        let attempt = duration(stop.timestamp.microseconds(since: start.timestamp))
        let frames = removals.map(\.frame)
        let span = frames.count == 1 ? "frame \(frames[0])" : "frames \(frames.first!)–\(frames.last!)"
        return Diagnosis(
            rule: Self.code, severity: .info, frame: complete.frame,
            message:
                "Connecting to the devices on the accept list was cancelled after \(attempt) (Connection Complete 0x02 after the cancel at frame \(stop.frame)): the stack then removed \(Story.plural(removals.count, "device")) from the accept list (\(span)), not one whose connect had run the time-out: it stopped connecting in the background.",
            headline: "background connect stopped (not a time-out)",
            supporting: [CitedFrame(start.frame, "LE Create Connection"), CitedFrame(stop.frame, "LE Create Connection Cancel")] + removals,
            causes: ["the stack ended its background connections (the app closed them, or Bluetooth was being turned off)"],
            device: nil, fold: "stopped the devices on the accept list")
    }
}
