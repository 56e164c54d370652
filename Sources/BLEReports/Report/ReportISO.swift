import BLEAnalysis
import BLECore

/// The LE Audio part of the report: summary verdicts, the HTML and Markdown sections with each stream direction's
/// verdict and its loss over time, the ASE operations refused. Nothing when the capture has no LE Audio.
extension Report {
    /// One line per ISO stream direction (at most 8), as `info`: what went wrong with them (loss, a stop, an ASE
    /// operation refused) the diagnosis says (LA-01 … LA-06).
    static func isoItems(_ f: FileAnalysis) -> [VerdictItem] {
        f.iso.health.prefix(8).map { h in
            VerdictItem(
                topic: "le-audio", status: .info, text: h.verdict(label: f.iso.label(of: h)), section: "iso",
                frame: h.longestBurst?.frame ?? h.endFrame ?? h.firstFrame)
        }
    }
}

extension HTMLReport {
    static func iso(_ f: FileAnalysis, options: ReportOptions) -> String {
        let iso = f.iso
        guard !iso.isEmpty || !(f.leAudio?.isEmpty ?? true) else { return "" }
        var out = "<h3>LE Audio (isochronous streams)</h3>"
        if !iso.streams.isEmpty {
            out += "<div class=\"scroll\"><table><tr><th>#</th><th>stream</th><th>role</th><th>group</th><th>ISO interval</th>"
            out += "<th>tx SDU / latency</th><th>rx SDU / latency</th><th>frames</th><th>end</th></tr>"
            for s in iso.streams.prefix(options.maxRows) {
                let group =
                    s.cigID.map { "CIG \($0) CIS \(s.cisID ?? 0)" } ?? s.bigHandle.map { "BIG \(hex($0)) BIS \(s.bisIndex ?? 0)" } ?? "—"
                func dir(_ interval: UInt32?, _ sdu: UInt16?, _ latency: UInt32?) -> String {
                    guard interval != nil || sdu != nil else { return "—" }
                    return
                        "\(sdu.map(String.init) ?? "?") B every \(interval.map(String.init) ?? "?") µs / \(latency.map { "\($0) µs" } ?? "—")"
                }
                out +=
                    "<tr><td class=\"n\">\(s.number)</td><td class=\"mono\">\(esc(s.label))</td><td>\(esc(s.role))</td><td>\(esc(group))</td>"
                out += "<td class=\"n\">\(String(fractionDigits: 2, Double(s.isoInterval) * 1.25)) ms</td>"
                out += "<td>\(esc(dir(s.sduIntervalTx, s.maxSDUTx, s.transportLatencyTx)))</td>"
                out += "<td>\(esc(dir(s.sduIntervalRx, s.maxSDURx, s.transportLatencyRx)))</td>"
                out += "<td class=\"n\">\(s.establishedFrame)–\(s.endFrame.map(String.init) ?? "end")</td>"
                out += "<td>\(esc(s.endReason?.description ?? "open"))</td></tr>"
            }
            out += "</table></div>"
        }
        for h in iso.health.prefix(options.maxCharts) {
            let verdict = h.verdict(label: iso.label(of: h))
            out += "<p class=\"\(h.lostSDUs > 0 || h.silenceBeforeEndMicroseconds != nil ? "bad" : "ok")\">\(esc(verdict))</p>"
            out +=
                "<p class=\"muted\">\(formatCount(h.packets)) packets, \(formatCount(h.sdus)) SDUs, bitrate \(esc(formatBitRate(h.bitrate)))"
                + (h.configuredBitrate.map { " (configured \(esc(formatBitRate($0))))" } ?? "")
                + (h.timestampJitterMaxMicroseconds.map { ", time-stamp jitter max \($0) µs" } ?? "") + "</p>"
            if h.lostSDUs > 0 {
                out += SVGChart.lossChart(
                    received: h.receivedPerBucket, lost: h.lostPerBucket, bucketMicroseconds: h.timeBucketMicroseconds,
                    title: "\(iso.label(of: h)) \(h.direction == .tx ? "tx" : "rx"): SDUs lost per \(h.timeBucketMicroseconds / 1000) ms")
            }
        }
        if let refusals = f.leAudio?.refusals, !refusals.isEmpty {
            out += "<table><tr><th>refused ASE operation</th><th>frame</th><th>answer</th></tr>"
            for op in refusals.prefix(options.maxRows) {
                let why = op.responses.filter { $0.code != 0 }.map { "ASE \($0.aseID): \($0.codeName) (\($0.reasonName))" }
                out += "<tr><td>\(esc(op.name)) on #\(op.connectionNumber)</td><td class=\"n\">\(op.frame)</td>"
                out += "<td class=\"bad\">\(esc(why.joined(separator: "; ")))</td></tr>"
            }
            out += "</table>"
        }
        return out
    }
}

extension MarkdownReport {
    static func iso(_ f: FileAnalysis) -> String {
        let iso = f.iso
        guard !iso.isEmpty || !(f.leAudio?.isEmpty ?? true) else { return "" }
        var out = "\n### LE Audio (isochronous streams)\n\n"
        for h in iso.health {
            out += "- \(h.verdict(label: iso.label(of: h)))\n"
            if h.lostSDUs > 0 {
                out += "  loss per \(h.timeBucketMicroseconds / 1000) ms: `\(sparkline(h.lostPerBucket.map(Double.init)))`\n"
            }
        }
        for op in f.leAudio?.refusals ?? [] {
            let why = op.responses.filter { $0.code != 0 }.map { "ASE \($0.aseID): \($0.codeName) (\($0.reasonName))" }
            out += "- \(op.name) refused (frame \(op.frame)): \(why.joined(separator: "; "))\n"
        }
        return out
    }
}

extension SVGChart {
    /// SDUs received (blue) and lost (red) per time bucket of one ISO stream direction: the loss over time.
    public static func lossChart(
        received: [Int], lost: [Int], bucketMicroseconds: Int64, title: String, width: Int = 880, height: Int = 200
    )
        -> String
    {
        let left = 64.0, right = 16.0, top = 28.0, bottom = 40.0
        let w = Double(width) - left - right, h = Double(height) - top - bottom
        let n = max(1, received.count)
        let totals = zip(received, lost).map { $0 + $1 }
        let yTicks = ticks(max: Double(max(1, totals.max() ?? 0)), count: 4)
        let yMax = yTicks.last ?? 1
        let band = w / Double(n)
        func y(_ v: Double) -> Double { top + h - v / yMax * h }
        var out =
            "<svg class=\"chart\" width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\" role=\"img\" aria-label=\"\(escape(title))\">"
        out += "<text x=\"\(Int(left))\" y=\"16\" class=\"title\">\(escape(title))</text>"
        for v in yTicks {
            let yy = coordinate(y(v))
            out += "<line x1=\"\(Int(left))\" y1=\"\(yy)\" x2=\"\(coordinate(left + w))\" y2=\"\(yy)\" class=\"grid\"/>"
            out += "<text x=\"\(Int(left) - 6)\" y=\"\(yy)\" class=\"ylabel\" dy=\"4\">\(number(v))</text>"
        }
        for i in 0..<received.count {
            let x0 = coordinate(left + Double(i) * band), bw = coordinate(max(1, band * 0.9))
            let r = Double(received[i]), l = Double(i < lost.count ? lost[i] : 0)
            if r > 0 {
                out +=
                    "<rect x=\"\(x0)\" y=\"\(coordinate(y(r)))\" width=\"\(bw)\" height=\"\(coordinate(top + h - y(r)))\" class=\"bar\"/>"
            }
            if l > 0 {
                out +=
                    "<rect x=\"\(x0)\" y=\"\(coordinate(y(r + l)))\" width=\"\(bw)\" height=\"\(coordinate(y(r) - y(r + l)))\" class=\"bar lost\"/>"
            }
        }
        out +=
            "<line x1=\"\(Int(left))\" y1=\"\(coordinate(top + h))\" x2=\"\(coordinate(left + w))\" y2=\"\(coordinate(top + h))\" class=\"axis\"/>"
        let span = Double(Int64(received.count) * bucketMicroseconds) / 1e6
        out += "<text x=\"\(Int(left))\" y=\"\(coordinate(top + h + 14))\" class=\"xlabel small\">0 s</text>"
        out += "<text x=\"\(coordinate(left + w))\" y=\"\(coordinate(top + h + 14))\" class=\"xlabel small\">\(number(span)) s</text>"
        out +=
            "<text x=\"\(coordinate(left + w / 2))\" y=\"\(height - 6)\" class=\"xtitle\">time from the stream's first packet (red: SDUs lost)</text>"
        return out + "</svg>"
    }
}
