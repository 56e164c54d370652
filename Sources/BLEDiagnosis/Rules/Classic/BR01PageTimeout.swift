import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let pageTimeout = FindingCode(
        "BR-01", layer: .classic, severity: .warning,
        title: "A BR/EDR device never answered the page",
        explain: .init(
            meaning:
                "The phone paged a Classic (BR/EDR) device — a headset, a car kit, a speaker — and it never answered: it was off, out of range, or not connectable. The host usually retries in the background, so one device can fail hundreds of times. It is a warning when the host's inquiry found the device just before (a device picked from a scan: someone wanted it). When the device connects after its last timeout, nothing was lost in the end, and when no inquiry found it the host was reconnecting to a device it knew, as stacks do in the background, and whether anyone waited cannot be seen: both are info.",
            advice:
                "Usually harmless background reconnection to a paired device that is not around; if the user expected that device to connect, check it is powered, in range and in pairing or connectable mode."
        ),
        fold: .never)
}

/// BR-01: the host paged a BR/EDR device that never answered: Connection Complete with 0x04 Page Timeout, folded per
/// device with how many times, the first and last frame, and what the host was trying (its Create Connection).
///
/// Severity by what the log shows was lost. A warning only when the host's inquiry found the device before it paged it
/// in vain: a device picked from a scan, the shape of a user's "connect" (`blue2th` 237 after the inquiry of 125). When
/// the device connected after its last timeout, nothing was lost in the end: info, citing the connection. Otherwise the
/// host paged a device it already knew, which is what every stack's background reconnect to a bonded headset, car kit
/// or keyboard does (Android's, Windows', BlueZ's), and whether anyone waited for it cannot be seen: info, saying so
/// (the BTVS laptop's four pages to a device never seen again, the BlueZ keyboard log's one, the Sony log's).
struct BR01PageTimeout: DiagnosisRule {
    static let code = FindingCode.pageTimeout
    static let group = RuleGroup.classic
    static let evidence =
        "Connection Complete (0x03) with status 0x04 Page Timeout, per device; the Create Connection (0x0405) that paged it; an Inquiry Result (0x02, 0x22, 0x2F) that listed it before"
    static let anchor = "hcidoc (\"ConnectionComplete error S for addr\")"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var order: [String] = []
        var timeouts: [String: [EvidenceEvent]] = [:]
        var pages: [String: [Int]] = [:]
        // The inquiry result that listed each device first, before any timeout of its.
        var discovered: [String: Int] = [:]
        // The first connection to each device after its latest timeout so far.
        var connectedAfter: [String: Int] = [:]
        for ev in e.events {
            switch ev.kind {
            case .pageRequested(let peer):
                pages[peer, default: []].append(ev.frame)
            case .devicesDiscovered(let peers):
                for peer in peers where discovered[peer] == nil && timeouts[peer] == nil { discovered[peer] = ev.frame }
            case .classicConnectionComplete(_, let status, let peer, _) where status == .pageTimeout:
                if timeouts[peer] == nil { order.append(peer) }
                timeouts[peer, default: []].append(ev)
                connectedAfter[peer] = nil
            case .classicConnectionComplete(_, let status, let peer, _) where status == .success:
                if timeouts[peer] != nil && connectedAfter[peer] == nil { connectedAfter[peer] = ev.frame }
            default:
                break
            }
        }
        return order.map { peer in
            let all = timeouts[peer]!
            let (first, last) = (all.first!, all.last!)
            let asked = pages[peer] ?? []
            let span = last.timestamp.microseconds(since: first.timestamp)
            let tries =
                asked.isEmpty
                ? "the capture does not hold the Create Connection that paged it"
                : "the host kept paging it (Create Connection \(asked.count) times, first at frame \(asked[0]))"
            let when =
                all.count == 1
                ? "at frame \(first.frame)" : "\(all.count) times, frames \(first.frame)–\(last.frame) over \(duration(span))"
            let connected = connectedAfter[peer]
            let found = discovered[peer]
            let outcome =
                if let connected {
                    "; it connected at frame \(connected), after the last timeout: nothing was lost in the end."
                } else if let found {
                    "; the device never answered. The host's inquiry had found it at frame \(found): a device picked from a scan."
                } else {
                    "; the device never answered. No inquiry in the log found it: the host paged a device it already knew, "
                        + "as a background reconnect does; whether anyone waited for it cannot be seen."
                }
            var supporting = asked.first.map { [CitedFrame($0, "Create Connection to \(peer)")] } ?? []
            if let found { supporting.insert(CitedFrame(found, "inquiry result listing \(peer)"), at: 0) }
            if let connected { supporting.append(CitedFrame(connected, "Connection Complete with \(peer), success")) }
            var d = Diagnosis(
                rule: Self.code, severity: connected == nil && found != nil ? severity : .info, frame: first.frame,
                message: "Paging BR/EDR device \(e.peerLabel(peer)) timed out (0x04 Page Timeout) \(when): \(tries)" + outcome,
                headline: "paging \(e.peerLabel(peer)) timed out (0x04)",
                supporting: supporting,
                causes: [
                    "the device was off, out of range, or not connectable (page scan off)",
                    "the host reconnects in the background to a bonded device that is not around",
                ], device: peer)
            d.occurrences = all.map(\.frame)
            return d
        }
    }
}
