import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let notificationsNotEnabled = FindingCode(
        "GATT-03", layer: .gatt, severity: .error,
        title: "Notifications never (properly) enabled",
        explain: .init(
            meaning:
                "Notifications were expected but never properly turned on: the CCCD was written the wrong way, with the wrong value, or not at all.",
            advice: "Write 0x0001 (notify) or 0x0002 (indicate) to the characteristic's CCCD (0x2902) with a Write Request."),
        fold: .device, traits: [.restsOnSetup, .claimsAbsence, .readsPayloads])
}

/// GATT-03: notifications were not (properly) enabled: a CCCD written with a Write Command (some servers ignore it), a
/// CCCD value the characteristic does not support (indications on a notify-only characteristic), or — a warning — a
/// service the app wrote to whose notifying characteristic was never subscribed and never notified.
struct GATT03NotificationsNotEnabled: DiagnosisRule {
    static let code = FindingCode.notificationsNotEnabled
    static let group = RuleGroup.gatt
    static let evidence =
        "CCCD (0x2902) written with Write Command (0x52), info when the characteristic notified after it (the server honoured it); a CCCD value without the matching Notify/Indicate property; a notifying characteristic in a service the app wrote to, with no CCCD write and no notification"
    static let anchor = "none"

    /// Notifying characteristics the app used but never subscribed to, and that never notified: a warning when the app
    /// wrote to their service (a command whose answer comes as a notification) or read them again and again (polling
    /// instead of subscribing); info when it read one once (an app that wanted the value once does that too).
    static func unsubscribed(_ c: Connection, subscribed: Set<UInt16>, in e: Evidence) -> [Diagnosis] {
        let wrote = Set(c.activity.written.keys), reads = c.activity.read
        let hungUp = hungUpSoon(c)
        var out: [Diagnosis] = []
        for service in c.gatt.services {
            let chars = c.gatt.characteristics.filter { $0.valueHandle >= service.startHandle && $0.valueHandle <= service.endHandle }
            // A command service whose answers come as notifications: the app wrote to it and nothing in it was
            // subscribed or notified. Not the Generic Attribute service (0x1801): the stack writes there, and
            // Service Changed is the stack's to subscribe.
            let quiet = chars.allSatisfy { !subscribed.contains($0.valueHandle) && c.activity.notified[$0.valueHandle] == nil }
            let wroteToService = quiet && service.uuid != BluetoothUUID(uuid16: 0x1801) && chars.contains { wrote.contains($0.valueHandle) }
            for ch in chars where !ch.properties.intersection([.notify, .indicate]).isEmpty {
                guard !subscribed.contains(ch.valueHandle), c.activity.notified[ch.valueHandle] == nil else { continue }
                let readCount = reads[ch.valueHandle]?.count ?? 0
                guard wroteToService || readCount > 0 else { continue }
                let frame =
                    reads[ch.valueHandle]?.first ?? chars.compactMap { c.activity.written[$0.valueHandle]?.first }.min() ?? c.startFrame
                let how =
                    wroteToService
                    ? "the app wrote to its service \(service.uuid) (frame \(frame))"
                    : readCount > 1 ? "the app read it \(readCount) times (polling)" : "the app read it once (frame \(frame))"
                let severity: DiagnosisSeverity = (wroteToService || readCount > 1) && !c.isEncrypted && hungUp == nil ? .warning : .info
                let device = e.deviceName(c)
                out.append(
                    Diagnosis(
                        rule: Self.code, severity: severity, frame: frame,
                        message:
                            "\(ch.uuid) (\(hex(ch.valueHandle, width: 4)), \(ch.properties.contains(.notify) ? "notify" : "indicate")) on \(device) was never subscribed and never notified; \(how)."
                            + (c.isEncrypted ? " On a bonded link the subscription may persist from an earlier connection." : "")
                            + (hungUp.map {
                                " This side ended the link (frame \($0.frame)) \(duration($0.lasted)) after it opened, so whether it waited for updates cannot be told."
                            } ?? ""),
                        headline: "\(ch.uuid) on \(device) never subscribed",
                        supporting: c.activity.notified.isEmpty && c.endFrame != nil ? [CitedFrame(c.endFrame!, "the link ended")] : [],
                        causes: ["the app forgot writeDescriptor / setNotifyValue (if it expected updates)"], device: c.peerAddress,
                        connection: c.number, fold: "unsubscribed \(device) \(ch.valueHandle)"))
            }
        }
        return out
    }

    /// A link this side ended within ``shortSession`` of its start: whatever the app wrote, it did not stay to wait
    /// for an answer (BTstack's example client discovers, writes one command and disconnects 0.95 s after connecting),
    /// so a characteristic never subscribed says nothing of an update it expected.
    static func hungUpSoon(_ c: Connection) -> (frame: Int, lasted: Int64)? {
        guard let end = c.endFrame, let endTime = c.endTime, c.lifecycle.ending?.endedBy == .local, !c.inferred else { return nil }
        let lasted = endTime.microseconds(since: c.startTime)
        return lasted <= shortSession ? (end, lasted) : nil
    }

    /// Shorter than any wait for a notification an app would give up on (GATT clients time out after seconds, the ATT
    /// transaction after 30 s).
    static let shortSession: Int64 = 3_000_000

    /// The first notification or indication on `valueHandle` after `frame`, if the link's tally shows one: its first
    /// if that came after, else its last (a value notified before and after the write).
    static func firstNotification(on valueHandle: UInt16, after frame: Int, in c: Connection) -> Int? {
        guard let use = c.activity.notified[valueHandle], use.last > frame else { return nil }
        return use.first > frame ? use.first : use.last
    }

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var out: [Diagnosis] = []
        var subscribed: [Int: Set<UInt16>] = [:]
        for ev in e.events {
            guard case .cccdWrite(let handle, let valueHandle, let value, let byCommand, .local) = ev.kind else { continue }
            let c = e.connection(ev.connection)
            let device = e.deviceName(c)
            if let v = valueHandle { subscribed[ev.connection ?? 0, default: []].insert(v) }
            if byCommand {
                // A server that honoured it notified after it (the Domyos treadmill: Write Command to the CCCD 0x0053
                // at 388, the first of 1,614 notifications on 0x0052 at 395): nothing was lost, only a risk stays.
                let honoured = c.flatMap { Self.firstNotification(on: valueHandle ?? handle &- 1, after: ev.frame, in: $0) }
                let consequence =
                    honoured.map { "; this server honoured it (notified from frame \($0)), others may not: use a Write Request." }
                    ?? ", which some servers ignore: use a Write Request."
                out.append(
                    Diagnosis(
                        rule: Self.code, severity: honoured == nil ? severity : .info, frame: ev.frame,
                        message:
                            "The CCCD \(hex(handle, width: 4)) on \(device) was written with a Write Command (frame \(ev.frame))"
                            + consequence,
                        headline: "CCCD on \(device) written without response",
                        causes: ["the library sends Write Without Response to descriptors"],
                        device: c?.peerAddress, connection: c?.number, fold: "command \(device)"))
            }
            if let c, let v = valueHandle, let ch = c.gatt.characteristic(owning: v), value != 0 {
                let wantsNotify = value & 1 != 0, wantsIndicate = value & 2 != 0
                if (wantsNotify && !ch.properties.contains(.notify)) || (wantsIndicate && !ch.properties.contains(.indicate)) {
                    out.append(
                        Diagnosis(
                            rule: Self.code, severity: severity, frame: ev.frame,
                            message:
                                "The CCCD \(hex(handle, width: 4)) on \(device) was set to \(hex(value, width: 4)) (frame \(ev.frame)), but the characteristic only supports \(ch.properties.contains(.notify) ? "notifications (0x0001)" : "indications (0x0002)").",
                            headline: "wrong CCCD value on \(device)", causes: ["the app enabled the wrong mode"], device: c.peerAddress,
                            connection: c.number))
                }
            }
        }
        for c in e.connections where !c.gatt.isEmpty {
            out += unsubscribed(c, subscribed: subscribed[c.number] ?? [], in: e)
        }
        return out
    }
}
