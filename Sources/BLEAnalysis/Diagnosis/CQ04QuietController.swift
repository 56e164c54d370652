import BLECore
import BLEProtocols

/// CQ-04's longest gap when the controller was only scanning with no link open (issue 48): it reports nothing until a
/// device it looks for advertises, pages or inquires, so a silent log is what such a controller gives, not a paused or
/// rotated one. Measured: the Marvell head unit (`btsnoop-h4-headunit_btagent-marvell-…`) page and inquiry scans from
/// frame 75, silent for 1 min 4 s until frame 77; the zengge log (`android-btsnoop_bletools-zengge-…`) scans LE behind
/// Android's advertising filter from frame 171, silent for 4 min 23 s until 173.
extension CQ04TimelineBreak {
    package static let pausedQuestion = "a paused or rotated log?"
    /// The headline of the finding that answers it (``CaptureCompleteness/answer(_:)`` looks for it).
    package static let quietHeadline = "silence while only scanning"

    /// What the controller was doing at the gap before `frame`, when it was only scanning: no link open across the gap
    /// (every connection the log holds, inferred ones too, ended before it) and LE scanning, or BR/EDR inquiry or page
    /// scan, on as the last accepted command set it (an HCI Reset turns them off). Nil on air captures (no controller
    /// state) and when no scan is known on.
    package static func onlyScanning(before frame: Int, _ e: Evidence) -> String? {
        guard !e.isAirCapture else { return nil }
        if e.connections.contains(where: { $0.startFrame < frame && ($0.endFrame ?? Int.max) >= frame }) { return nil }
        let refused = Set(
            e.events.compactMap { ev -> Int? in
                if case .commandFailed(_, _, let f) = ev.kind { f } else { nil }
            })
        var le: (on: Bool, since: Int)? = nil
        var classic: (inquiry: Bool, page: Bool, since: Int)? = nil
        for ev in e.events {
            if ev.frame >= frame { break }
            switch ev.kind {
            case .scanEnableCommand(let on) where !refused.contains(ev.frame): le = (on, ev.frame)
            case .classicScanEnableCommand(let inquiry, let page) where !refused.contains(ev.frame):
                classic = (inquiry, page, ev.frame)
            case .reset:
                le = nil
                classic = nil
            default: continue
            }
        }
        var scans: [String] = []
        if let le, le.on { scans.append("LE scanning on since frame \(le.since)") }
        if let c = classic, c.inquiry || c.page {
            let which = c.inquiry && c.page ? "inquiry and page scan" : c.page ? "page scan" : "inquiry scan"
            scans.append("\(which) on since frame \(c.since)")
        }
        if scans.isEmpty, let le, !le.on {
            // Scanning turned off and no link open: the controller has nothing to report at all (the blueprobe
            // Xiaomi band `.last` file: LE scanning off at 26919, then 8 h 16 min without a record).
            return idlePrefix + "LE scanning off since frame \(le.since)"
        }
        return scans.isEmpty ? nil : scans.joined(separator: ", ")
    }

    static let idlePrefix = "idle: "
    static let idleHeadline = "silence while idle"

    /// The Log line's few words for the gap a finding of `headline` answers (nil: not an answer).
    static func brief(_ headline: String) -> String? {
        switch headline {
        case quietHeadline: ", while the controller only scanned with no link open (expected)"
        case idleHeadline: ", while the controller neither scanned nor held a link (expected)"
        default: nil
        }
    }

    /// The gap's finding when the controller was only scanning: context, the state cited instead of the question.
    package static func quiet(_ item: CaptureCompleteness.Item, frame: Int, _ e: Evidence) -> Diagnosis? {
        guard item.code == .timeGap, item.message.hasSuffix(pausedQuestion), let scanning = onlyScanning(before: frame, e) else {
            return nil
        }
        let said = item.message.dropLast(pausedQuestion.count)
        if scanning.hasPrefix(idlePrefix) {
            let state = scanning.dropFirst(idlePrefix.count)
            return Diagnosis(
                rule: code, severity: .info, frame: frame,
                message:
                    "\(said)the controller neither scanned nor held a link (\(state), no link open): it had nothing to report, so the silence is expected (the capture cannot tell it from a paused log).",
                headline: idleHeadline,
                causes: ["the controller idle, no scan and no link (\(state), seen)"])
        }
        return Diagnosis(
            rule: code, severity: .info, frame: frame,
            message:
                "\(said)the controller was only scanning (\(scanning)) with no link open: it reports nothing until a device it looks for shows up, so the silence is expected.",
            headline: quietHeadline,
            causes: ["the controller only scanning with no link open (\(scanning), seen)"])
    }
}
