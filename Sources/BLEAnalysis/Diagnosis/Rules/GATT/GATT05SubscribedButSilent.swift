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
/// never notified or indicated on that characteristic.
///
/// Severity follows what the capture can show. A silence the link's end closed (it stayed up, then ended) is a
/// warning. A silence the capture's end cut short, the link still up, shows no loss: a characteristic that notifies
/// on events (a button, a gesture) is silent until one happens. That is context ("cannot tell") when the capture
/// gave it under ``shortCut`` or when the peer went on notifying other characteristics of the link meanwhile (its
/// notifications worked). A characteristic this side also read is a state (a battery level, a set member lock, a
/// volume): its server notifies when the state changes (Core Spec Vol 3, Part G, 4.10), so its silence is context too.
struct GATT05SubscribedButSilent: DiagnosisRule {
    static let code = FindingCode.subscribedButSilent
    static let group = RuleGroup.gatt
    static let evidence =
        "A CCCD write enabling notifications or indications, not refused; the link up for 30 s after it; no notification or indication on the characteristic. Info when this side read the characteristic's value (a state, notified on change), or the capture's end (not the link's) cut the silence under 60 s, or the peer notified another characteristic meanwhile"
    static let anchor = "none"
    /// How long the link must stay up after subscribing before silence counts.
    static let quiet: Int64 = 30_000_000
    /// A silence the capture's end cut shorter than this (twice ``quiet``) cannot tell a fault from an idle sensor.
    static let shortCut: Int64 = 60_000_000

    /// Service Changed (0x2A05) is indicated only when the server's database changes (Core Spec Vol 3, Part G, 7.1):
    /// a subscription to it that stays silent is the normal case.
    static func isServiceChanged(_ valueHandle: UInt16, _ c: Connection) -> Bool {
        let uuid = c.gatt.characteristics.first { $0.valueHandle == valueHandle }?.uuid ?? c.gatt.uuid(for: valueHandle)
        return uuid?.uuid16 == GATTAttributeType.serviceChanged
    }

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var refused = Set<Int>()  // request frames answered by an error
        for ev in e.events { if case .attError(.writeRequest, _, _, let f?, _) = ev.kind { refused.insert(f) } }
        var silent: [Int: [(event: EvidenceEvent, target: UInt16, guessed: Bool)]] = [:]
        for ev in e.events {
            guard case .cccdWrite(let handle, let valueHandle, let value, _, .local) = ev.kind, value != 0, !refused.contains(ev.frame),
                let c = e.connection(ev.connection)
            else { continue }
            let end = c.endTime ?? e.lastTime ?? ev.timestamp
            guard end.microseconds(since: ev.timestamp) >= quiet else { continue }
            let target = valueHandle ?? handle &- 1
            if let use = c.activity.notified[target], use.last > ev.frame { continue }
            if Self.isServiceChanged(target, c) { continue }
            silent[c.number, default: []].append((ev, target, valueHandle == nil))
        }
        return silent.keys.sorted().compactMap { number in
            guard let list = silent[number], let first = list.first, let c = e.connection(number) else { return nil }
            let device = e.deviceName(c)
            let handles = list.map { hex($0.target, width: 4) }.joined(separator: ", ")
            let end = c.endTime ?? e.lastTime ?? first.event.timestamp
            let window = end.microseconds(since: first.event.timestamp)
            let guessed = list.contains { $0.guessed } ? " (a value handle taken as its CCCD's − 1: no discovery in the capture)" : ""
            // An air capture blind to the link says so itself (``Observability``): its reason comes first.
            let unknown =
                Observability.blind(c, e) != nil
                ? nil : Self.cannotTell(c, after: first.event.frame, silent: Set(list.map(\.target)), window: window)
            return Diagnosis(
                rule: Self.code, severity: unknown == nil ? severity : .info, frame: first.event.frame,
                message:
                    "Subscribed to \(list.count == 1 ? "" : "\(list.count) characteristics, ")\(handles) on \(device) (from frame \(first.event.frame)), but nothing was notified there in the \(duration(window)) that followed\(guessed)."
                    + (unknown.map { " The capture cannot tell whether a value was due: \($0)." } ?? ""),
                headline: "subscribed on \(device), nothing notified (\(handles))",
                supporting: list.dropFirst().map { CitedFrame($0.event.frame, "CCCD of \(hex($0.target, width: 4)) written") },
                causes: unknown.map { _ in ["the characteristic notifies on events or changes, and none came while the capture ran"] } ?? [
                    "the peripheral app produced no data or notifies another handle",
                    "the subscription did not persist across a reconnection",
                ],
                device: c.peerAddress, connection: c.number, fold: "\(device) \(handles)")
        }
    }

    /// Why the silence says nothing: this side read a silent characteristic's value (a state, notified on change); or
    /// the capture's end (not the link's) closed it, and it was short or the peer notified other characteristics of the
    /// link after the subscription. Nil when the link ended, or the capture shows a long silence of the whole peer.
    static func cannotTell(_ c: Connection, after frame: Int, silent: Set<UInt16>, window: Int64) -> String? {
        let reads = silent.compactMap { h in c.activity.read[h].map { (h, $0) } }.min { $0.1.first < $1.1.first }
        if let (handle, use) = reads {
            return
                "this side read \(hex(handle, width: 4))'s value (frame \(use.first)): a value read for its state is notified when the state changes, and the capture shows no change was due"
        }
        guard c.endTime == nil else { return nil }
        let cut = "the capture ends \(duration(window)) after the subscription with the link still up"
        let others = c.activity.notified.filter { !silent.contains($0.key) && $0.value.last > frame }
        if let busiest = others.max(by: { $0.value.count < $1.value.count }) {
            return
                "\(cut), and the peer notified \(hex(busiest.key, width: 4)) meanwhile (frame \(busiest.value.last)): its notifications work"
        }
        return window < shortCut ? "\(cut), too short for a characteristic that notifies on events" : nil
    }
}
