import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let staleHandles = FindingCode(
        "GATT-06", layer: .gatt, severity: .error,
        title: "Stale GATT cache",
        explain: .init(
            meaning:
                "The app used handles from an old discovery that no longer match the peer's database (after a firmware update or a change of services).",
            advice: "Rediscover services after a Service Changed indication or a firmware update; clear the GATT cache."),
        fold: .device, traits: [.restsOnSetup, .readsPayloads])
}

/// GATT-06: the client uses handles from a stale cache: Invalid Handle (0x01) on a handle the database of this
/// connection does not hold or that came from an earlier connection or a cache, Database Out Of Sync (0x12), or old
/// handles used after a Service Changed indication.
struct GATT06StaleHandles: DiagnosisRule {
    static let code = FindingCode.staleHandles
    static let group = RuleGroup.gatt
    static let evidence =
        "ATT Error 0x01 Invalid Handle on a handle not discovered in this connection; ATT Error 0x12 Database Out Of Sync; a Service Changed indication (0x2A05) followed by errors in its range"
    static let anchor = "none"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var changed: [Int: EvidenceEvent] = [:]
        var out: [Diagnosis] = []
        for ev in e.events {
            if case .serviceChanged = ev.kind, let n = ev.connection { changed[n] = ev }
            guard case .attError(let request, let handle, let error, _, .peer) = ev.kind,
                error == .invalidHandle || error == .databaseOutOfSync
            else { continue }
            // Handle 0x0000 is reserved (Core Spec Vol 3, Part F, 3.2.2): a request on it is refused on any database,
            // so the refusal says the request was malformed, not that a cache is old (a corpus BTstack central's Read By
            // Type on 0x0000–0x0000, frame 470).
            guard handle != 0x0000 else { continue }
            let c = e.connection(ev.connection)
            let device = e.deviceName(c)
            let cached = c.map { $0.gatt.source != .discovery || $0.gatt.isEmpty } ?? true
            // Service Changed before the error, or right after it (the server announcing the change it refused on).
            let sc =
                ev.connection.flatMap { changed[$0] }
                ?? e.first(after: ev.frame) { later in
                    guard later.connection == ev.connection, case .serviceChanged = later.kind else { return false }
                    return later.timestamp.microseconds(since: ev.timestamp) <= 5_000_000
                }
            guard error == .databaseOutOfSync || cached || sc != nil else { continue }
            var sentence =
                "\(device) rejected \(request) on \(hex(handle, width: 4)) with \(error) (frame \(ev.frame)): the client is using a stale GATT cache"
            var supporting: [CitedFrame] = []
            if let sc, case .serviceChanged(let s, let t) = sc.kind {
                sentence +=
                    "; the peripheral announced changes to \(hex(s, width: 4))–\(hex(t, width: 4)) (Service Changed, frame \(sc.frame))."
                supporting.append(CitedFrame(sc.frame, "Service Changed"))
            } else {
                sentence += " (no discovery in this connection); the database changed without Service Changed being honoured."
            }
            out.append(
                Diagnosis(
                    rule: Self.code, severity: severity, frame: ev.frame, message: sentence, headline: "stale GATT cache for \(device)",
                    supporting: supporting,
                    causes: [
                        "a firmware update changed the handles", "no Service Changed characteristic or no bond",
                        "the client's GATT cache (refresh it)",
                    ],
                    device: c?.peerAddress, connection: c?.number, fold: "\(device)"))
        }
        return out
    }
}
