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
    /// instead of subscribing); info when it read one once (an app that wanted the value once does that too), or when
    /// its writes ran on their Write Responses (``respondedWrites``). Several such characteristics of one service the
    /// app wrote to are one finding: one cause, one fix.
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
            let silent = chars.filter {
                !$0.properties.intersection([.notify, .indicate]).isEmpty && !subscribed.contains($0.valueHandle)
                    && c.activity.notified[$0.valueHandle] == nil
            }
            if wroteToService, !silent.isEmpty {
                let firstWrite = chars.compactMap { c.activity.written[$0.valueHandle]?.first }.min() ?? c.startFrame
                let responded = respondedWrites(to: chars, of: service, on: c, in: e)
                let severity: DiagnosisSeverity = !c.isEncrypted && hungUp == nil && responded == nil ? .warning : .info
                out.append(
                    finding(
                        silent, how: "the app wrote to its service \(service.uuid) (frame \(firstWrite))", frame: firstWrite,
                        severity: severity, responded: responded, hungUp: hungUp, on: c, in: e, fold: "\(service.startHandle)"))
                continue
            }
            for ch in silent {
                guard let use = reads[ch.valueHandle] else { continue }
                let how = use.count > 1 ? "the app read it \(use.count) times (polling)" : "the app read it once (frame \(use.first))"
                let severity: DiagnosisSeverity = use.count > 1 && !c.isEncrypted && hungUp == nil ? .warning : .info
                out.append(
                    finding(
                        [ch], how: how, frame: use.first, severity: severity, responded: nil, hungUp: hungUp, on: c, in: e,
                        fold: "\(ch.valueHandle)"))
            }
        }
        return out
    }

    /// At least this many writes to a service, every one a Write Request answered, and the app went on writing: its
    /// protocol runs on the Write Responses (the STACK the Flags 2020 phone sent a file as 505 Write Requests, each
    /// answered within 0.1 s). A command whose answer should come as a notification is sent once, or retried a few
    /// times, before the app gives up.
    static let respondedWriteRun = 10

    /// The number of writes to `service` when they ran on their responses: ``respondedWriteRun`` or more, none a Write
    /// Command, none refused or left unanswered (nil otherwise).
    static func respondedWrites(to chars: [GATTDatabase.Characteristic], of service: GATTDatabase.Service, on c: Connection, in e: Evidence)
        -> Int?
    {
        let handles = chars.map(\.valueHandle)
        let writes = handles.reduce(0) { $0 + (c.activity.written[$1]?.count ?? 0) }
        guard writes >= respondedWriteRun, !handles.contains(where: { c.activity.writtenByCommand[$0] != nil }) else { return nil }
        let inService = { (h: UInt16?) in h.map { $0 >= service.startHandle && $0 <= service.endHandle } ?? true }
        let failed = e.events(of: c.number).contains {
            switch $0.kind {
            case .attError(.writeRequest, let h, _, _, _): return inService(h)
            case .attUnanswered(.writeRequest, let h, _, _, _, _): return inService(h)
            default: return false
            }
        }
        return failed ? nil : writes
    }

    static func finding(
        _ silent: [GATTDatabase.Characteristic], how: String, frame: Int, severity: DiagnosisSeverity, responded: Int?,
        hungUp: (frame: Int, lasted: Int64)?, on c: Connection, in e: Evidence, fold: String
    ) -> Diagnosis {
        let device = e.deviceName(c)
        let named = silent.map {
            "\($0.uuid) (\(hex($0.valueHandle, width: 4)), \($0.properties.contains(.notify) ? "notify" : "indicate"))"
        }
        let what =
            silent.count == 1
            ? "\(named[0]) on \(device) was never subscribed and never notified"
            : "\(silent.count) notifying characteristics on \(device) were never subscribed and never notified: "
                + named.joined(separator: ", ")
        return Diagnosis(
            rule: Self.code, severity: severity, frame: frame,
            message: "\(what); \(how)."
                + (c.isEncrypted ? " On a bonded link the subscription may persist from an earlier connection." : "")
                + (responded.map {
                    " Its \($0) writes there were Write Requests, each answered, and it went on writing: its protocol ran on those responses, so whether it also expected updates cannot be told."
                } ?? "")
                + (hungUp.map {
                    " This side ended the link (frame \($0.frame)) \(duration($0.lasted)) after it opened, so whether it waited for updates cannot be told."
                } ?? ""),
            headline: silent.count == 1
                ? "\(silent[0].uuid) on \(device) never subscribed" : "\(silent.count) characteristics on \(device) never subscribed",
            supporting: c.activity.notified.isEmpty && c.endFrame != nil ? [CitedFrame(c.endFrame!, "the link ended")] : [],
            causes: ["the app forgot writeDescriptor / setNotifyValue (if it expected updates)"], device: c.peerAddress,
            connection: c.number, fold: "unsubscribed \(device) \(fold)")
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
