import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let subscribedButSilent = FindingCode(
        "GATT-05", layer: .gatt, severity: .warning,
        title: "Subscribed, but nothing was notified",
        explain: .init(
            meaning: "Notifications were turned on and accepted, but nothing came for at least 30 s while the link was up.",
            advice: "Check that the peer has data to send and sends it on that characteristic (its firmware, its state)."),
        fold: .device, traits: [.restsOnSetup, .claimsAbsence, .readsPayloads])
}

/// GATT-05: the subscription worked (the CCCD write was not refused) and the link stayed up, but the peripheral
/// never notified or indicated on that characteristic. Judged per characteristic, not per write: an app that toggles a
/// CCCD (the Nespresso log: 27 writes to two CCCDs) gets one line per characteristic, and a characteristic notified
/// after its first enable is not silent whatever the writes after.
///
/// Severity follows what the capture can show. A silence of the whole peer the link's end closed (it stayed up, then
/// ended) is a warning. A characteristic that notifies on events (a button, a gesture, a HID report) is silent until
/// one happens: context ("cannot tell") when the peer went on notifying other characteristics of the link meanwhile
/// (its notifications worked), or when the capture's end cut the silence under ``shortCut``. A characteristic this side also read is a state (a battery level, a set member lock, a
/// volume): its server notifies when the state changes (Core Spec Vol 3, Part G, 4.10), so its silence is context too.
struct GATT05SubscribedButSilent: DiagnosisRule {
    static let code = FindingCode.subscribedButSilent
    static let group = RuleGroup.gatt
    static let evidence =
        "A CCCD write enabling notifications or indications, not refused; the CCCD on for 30 s (to this side's next write disabling it, or the link's end); no notification or indication on the characteristic since its first enable, judged per characteristic (its CCCD writes counted). Info when this side read the characteristic's value (a state, notified on change), or the capture's end (not the link's) cut the silence under 60 s, or the peer notified another characteristic of the link meanwhile (whether the link then ended or not)"
    static let anchor = "none"
    /// How long the link must stay up after subscribing before silence counts.
    static let quiet: Int64 = 30_000_000
    /// A silence the capture's end cut shorter than this (twice ``quiet``) cannot tell a fault from an idle sensor.
    static let shortCut: Int64 = 60_000_000

    /// Service Changed (0x2A05) is indicated only when the server's database changes (Core Spec Vol 3, Part G, 7.1):
    /// a subscription to it that stays silent is the normal case.
    /// Its declaration not read, an indicated value handle inside the Generic Attribute service (0x1801) is Service
    /// Changed: the only characteristic of that service with the Indicate property (Core Spec Vol 3, Part G, 7). newcap20's
    /// ADI capture: indications on 0x0012, in the service 0x0010–0x0019 Find By Type Value found at 4110, beside the
    /// Database Hash 0x0017, the sniffer having missed 0x0011's declaration.
    static func isServiceChanged(_ valueHandle: UInt16, _ c: Connection, indications: Bool) -> Bool {
        if let uuid = c.gatt.characteristics.first(where: { $0.valueHandle == valueHandle })?.uuid ?? c.gatt.uuid(for: valueHandle) {
            return uuid.uuid16 == GATTAttributeType.serviceChanged
        }
        return indications && c.gatt.service(containing: valueHandle)?.uuid == BluetoothUUID(uuid16: 0x1801)
    }

    /// Whether the subscription's first write asked for indications (bit 1 of the CCCD value).
    static func indications(_ s: Subscription) -> Bool {
        if case .cccdWrite(_, _, let value, _, _) = s.first.kind { return value & 2 != 0 }
        return false
    }

    /// One characteristic's subscription as this side's CCCD writes made it: its first enabling write, the writes in all,
    /// and the longest time it stayed on (from an enabling write to the next disabling one, or the link's end).
    struct Subscription {
        var first: EvidenceEvent
        var target: UInt16
        var guessed: Bool
        var writes = 1
        var onSince: Timestamp?
        var longest: (frame: Int, span: Int64) = (0, 0)

        mutating func close(_ frame: Int, at end: Timestamp) {
            guard let since = onSince else { return }
            let span = end.microseconds(since: since)
            if span > longest.span { longest = (frame, span) }
            onSince = nil
        }
    }

    /// Each link's subscriptions by characteristic, in the order they were first enabled (refused writes left out).
    static func subscriptions(_ e: Evidence) -> [Int: [Subscription]] {
        var refused = Set<Int>()  // request frames answered by an error
        for ev in e.events { if case .attError(.writeRequest, _, _, let f?, _) = ev.kind { refused.insert(f) } }
        var links: [Int: [Subscription]] = [:]
        var openedAt: [Int: [UInt16: Int]] = [:]  // the frame of the enabling write each open subscription began with
        for ev in e.events {
            guard case .cccdWrite(let handle, let valueHandle, let value, _, .local) = ev.kind, !refused.contains(ev.frame),
                let c = e.connection(ev.connection)
            else { continue }
            let target = valueHandle ?? handle &- 1
            guard let i = links[c.number]?.firstIndex(where: { $0.target == target }) else {
                if value != 0 {
                    var s = Subscription(first: ev, target: target, guessed: valueHandle == nil)
                    s.onSince = ev.timestamp
                    links[c.number, default: []].append(s)
                    openedAt[c.number, default: [:]][target] = ev.frame
                }
                continue
            }
            links[c.number]![i].writes += 1
            if value == 0 {
                links[c.number]![i].close(openedAt[c.number]?[target] ?? ev.frame, at: ev.timestamp)
            } else if links[c.number]![i].onSince == nil {
                links[c.number]![i].onSince = ev.timestamp
                openedAt[c.number, default: [:]][target] = ev.frame
            }
        }
        for (number, list) in links {
            guard let c = e.connection(number) else { continue }
            for i in list.indices {
                let end = c.endTime ?? e.lastTime ?? list[i].first.timestamp
                links[number]![i].close(openedAt[number]?[list[i].target] ?? list[i].first.frame, at: end)
            }
        }
        return links
    }

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var silent: [Int: [Subscription]] = [:]
        for (number, list) in subscriptions(e) {
            guard let c = e.connection(number) else { continue }
            // A characteristic notified after it was first enabled notifies: toggling its CCCD since changes nothing
            // (the Nespresso log: 0x001c's CCCD written 14 times, its 13 notifications 2249-2317 between two of them).
            let quietOnes = list.filter { s in
                s.longest.span >= quiet && !(c.activity.notified[s.target].map { $0.last > s.first.frame } ?? false)
                    && !Self.isServiceChanged(s.target, c, indications: Self.indications(s))
            }
            if !quietOnes.isEmpty { silent[number] = quietOnes }
        }
        return silent.keys.sorted().compactMap { number in
            guard let list = silent[number], let first = list.first?.first, let c = e.connection(number) else { return nil }
            let device = e.deviceName(c)
            let handles = list.map { hex($0.target, width: 4) }.joined(separator: ", ")
            let end = c.endTime ?? e.lastTime ?? first.timestamp
            let window = end.microseconds(since: first.timestamp)
            let guessed =
                list.contains { $0.guessed } ? " (a value handle taken as its CCCD's − 1: its declaration is not in the capture)" : ""
            // An air capture blind to the link says so itself (``Observability``): its reason comes first.
            let unknown =
                Observability.blind(c, e) != nil
                ? nil : Self.cannotTell(c, after: first.frame, silent: Set(list.map(\.target)), window: window)
            return Diagnosis(
                rule: Self.code, severity: unknown == nil ? severity : .info, frame: first.frame,
                message:
                    "Subscribed to \(list.count == 1 ? "" : "\(list.count) characteristics, ")\(handles) on \(device) (from frame \(first.frame)\(Self.toggles(list))), but nothing was notified there \(Self.silence(list, window: window))\(guessed)."
                    + (unknown.map { " The capture cannot tell whether a value was due: \($0)." } ?? ""),
                headline: "subscribed on \(device), nothing notified (\(handles))",
                supporting: list.dropFirst().map { CitedFrame($0.first.frame, "CCCD of \(hex($0.target, width: 4)) written") },
                causes: unknown.map { _ in ["the characteristic notifies on events or changes, and none came while the capture ran"] } ?? [
                    "the peripheral app produced no data or notifies another handle",
                    "the subscription did not persist across a reconnection",
                ],
                device: c.peerAddress, connection: c.number, fold: "\(device) \(handles)")
        }
    }

    /// `; its CCCD written 13 times` where this side wrote the CCCDs more than once each (on, off and on again).
    static func toggles(_ list: [Subscription]) -> String {
        let writes = list.reduce(0) { $0 + $1.writes }
        guard writes > list.count else { return "" }
        return list.count == 1 ? "; its CCCD written \(writes) times" : "; their CCCDs written \(writes) times"
    }

    /// How long the silence lasted: from the first write when each CCCD was written once, else the longest time one
    /// stayed on.
    static func silence(_ list: [Subscription], window: Int64) -> String {
        guard list.contains(where: { $0.writes > 1 }), let longest = list.max(by: { $0.longest.span < $1.longest.span })?.longest else {
            return "in the \(duration(window)) that followed"
        }
        let on = list.count == 1 ? "it was" : "they were"
        return "while \(on) on, \(duration(longest.span)) at the longest (from frame \(longest.frame))"
    }

    /// Why the silence says nothing: this side read a silent characteristic's value (a state, notified on change); or
    /// the peer notified other characteristics of the link after the subscription; or the capture's end (not the
    /// link's) closed a short silence. Nil when the capture shows a silence of the whole peer the link's end closed.
    static func cannotTell(_ c: Connection, after frame: Int, silent: Set<UInt16>, window: Int64) -> String? {
        let reads = silent.compactMap { h in c.activity.read[h].map { (h, $0) } }.min { $0.1.first < $1.1.first }
        if let (handle, use) = reads {
            return
                "this side read \(hex(handle, width: 4))'s value (frame \(use.first)): a value read for its state is notified when the state changes, and the capture shows no change was due"
        }
        let cut = "the capture ends \(duration(window)) after the subscription with the link still up"
        // The peer notified other characteristics of the link meanwhile: its notifications work, and a characteristic
        // that notifies on events (a HID report, a button) stays silent until one comes, whether the link then ends or
        // not (the blueprobe K-BT40 keyboard: key report 0x0015 and battery 0x002c notified, 0x0019 and 0x001d not).
        let others = c.activity.notified.filter { !silent.contains($0.key) && $0.value.last > frame }
        if let busiest = others.max(by: { $0.value.count < $1.value.count }) {
            let context = c.endTime == nil ? cut + ", and the peer" : "the peer"
            return
                "\(context) notified \(hex(busiest.key, width: 4)) meanwhile (frame \(busiest.value.last)): its notifications work"
        }
        guard c.endTime == nil else { return nil }
        return window < shortCut ? "\(cut), too short for a characteristic that notifies on events" : nil
    }
}
