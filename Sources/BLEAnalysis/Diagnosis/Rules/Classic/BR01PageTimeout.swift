import BLECore
import BLEProtocols

extension FindingCode {
    static let pageTimeout = FindingCode(
        "BR-01", layer: .classic, severity: .warning,
        title: "A BR/EDR device never answered the page",
        explain: .init(
            meaning:
                "The phone paged a Classic (BR/EDR) device — a headset, a car kit, a speaker — and it never answered: it was off, out of range, or not connectable. The host usually retries in the background, so one device can fail hundreds of times. When the device connects after its last timeout, nothing was lost in the end: the finding is info, citing the connection.",
            advice:
                "Usually harmless background reconnection to a paired device that is not around; if the user expected that device to connect, check it is powered, in range and in pairing or connectable mode."
        ),
        fold: .never)
}

/// BR-01: the host paged a BR/EDR device that never answered: Connection Complete with 0x04 Page Timeout, folded per
/// device with how many times, the first and last frame, and what the host was trying (its Create Connection). When the
/// device connected after its last timeout (the host's retry or the device's own page), nothing was lost in the end:
/// info, citing the connection (a phone's background reconnects to headphones that were away, then came back).
struct BR01PageTimeout: DiagnosisRule {
    static let code = FindingCode.pageTimeout
    static let group = RuleGroup.classic
    static let evidence =
        "Connection Complete (0x03) with status 0x04 Page Timeout, per device; the Create Connection (0x0405) that paged it"
    static let anchor = "hcidoc (\"ConnectionComplete error S for addr\")"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var order: [String] = []
        var timeouts: [String: [EvidenceEvent]] = [:]
        var pages: [String: [Int]] = [:]
        // The first connection to each device after its latest timeout so far.
        var connectedAfter: [String: Int] = [:]
        for ev in e.events {
            switch ev.kind {
            case .pageRequested(let peer):
                pages[peer, default: []].append(ev.frame)
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
            let outcome =
                connected.map { "; it connected at frame \($0), after the last timeout: nothing was lost in the end" }
                ?? "; the device never answered."
            var supporting = asked.first.map { [CitedFrame($0, "Create Connection to \(peer)")] } ?? []
            if let connected { supporting.append(CitedFrame(connected, "Connection Complete with \(peer), success")) }
            var d = Diagnosis(
                rule: Self.code, severity: connected == nil ? severity : .info, frame: first.frame,
                message: "Paging BR/EDR device \(e.peerLabel(peer)) timed out (0x04 Page Timeout) \(when): \(tries)"
                    + (connected == nil ? outcome : outcome + "."),
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
