import BLEAnalysis
import BLECore

/// Inline SVG charts for the HTML report: no script, no external resources, labelled axes.
public enum SVGChart {
    /// Escapes text for HTML/SVG content and attribute values.
    public static func escape(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count)
        for c in s {
            switch c {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.append(c)
            }
        }
        return out
    }

    /// 1, 2, 5 × 10^k steps: about `count` ticks from 0 to at least `max`.
    static func ticks(max: Double, count: Int = 5) -> [Double] {
        guard max > 0, max.isFinite else { return [0, 1] }
        let raw = max / Double(count)
        var magnitude = 1.0
        while magnitude * 10 <= raw { magnitude *= 10 }
        while magnitude > raw { magnitude /= 10 }
        let step = [1.0, 2, 5, 10].map { $0 * magnitude }.first { $0 >= raw } ?? magnitude * 10
        var out: [Double] = []
        var v = 0.0
        while v < max + step * 0.999 {
            out.append(v)
            v += step
        }
        return out
    }

    static func number(_ v: Double) -> String {
        if v == v.rounded() && abs(v) < 1e15 { return String(Int64(v)) }
        var s = String(fractionDigits: 3, v)
        while s.hasSuffix("0") { s.removeLast() }
        if s.hasSuffix(".") { s.removeLast() }
        return s
    }

    /// One decimal. A damaged record's time can put a point anywhere (even NaN): coordinates are kept within ±10⁹ px,
    /// far outside any view box, so the page still draws and the number still formats.
    static func coordinate(_ v: Double) -> String { String(fractionDigits: 1, v.isNaN ? 0 : min(max(v, -1e9), 1e9)) }

    /// Rate over time of a stream: a polyline, the ceiling (dashed) when known, axes with units.
    public static func rateChart(_ s: ThroughputStream, title: String, width: Int = 880, height: Int = 240) -> String {
        let left = 64.0, right = 16.0, top = 28.0, bottom = 44.0
        let w = Double(width) - left - right, h = Double(height) - top - bottom
        let points = s.series
        let slot = Double(s.seriesSlotMicroseconds) / 1e6
        let span = max(Double(s.durationMicroseconds) / 1e6, slot * Double(max(1, points.count)))
        let maxRate = points.map(\.bitsPerSecond).max() ?? 0
        let ceilings = s.periods.compactMap(\.ceilingBitsPerSecond)
        // A ceiling more than 10 × the highest rate would flatten the series: it is named above the plot instead.
        let ceilingOffScale = (ceilings.max() ?? 0) > 10 * max(maxRate, s.rateBitsPerSecond ?? 0)
        let chartTop = max(maxRate, ceilingOffScale ? 0 : ceilings.max() ?? 0, 1)
        let (unit, divisor) = chartTop >= 2e6 ? ("Mbps", 1e6) : chartTop >= 2e3 ? ("kbps", 1e3) : ("bps", 1.0)
        let yTicks = ticks(max: chartTop * 1.05 / divisor)
        let yMax = (yTicks.last ?? 1) * divisor
        let xTicks = ticks(max: span, count: 8)
        let xMax = xTicks.last ?? 1
        func x(_ t: Double) -> Double { left + t / xMax * w }
        func y(_ v: Double) -> Double { top + h - v / yMax * h }

        var out =
            "<svg class=\"chart\" width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\" role=\"img\" aria-label=\"\(escape(title))\">"
        out += "<text x=\"\(Int(left))\" y=\"16\" class=\"title\">\(escape(title))</text>"
        // Grid and y labels.
        for v in yTicks {
            let yy = coordinate(y(v * divisor))
            out += "<line x1=\"\(Int(left))\" y1=\"\(yy)\" x2=\"\(coordinate(left + w))\" y2=\"\(yy)\" class=\"grid\"/>"
            out += "<text x=\"\(Int(left) - 6)\" y=\"\(yy)\" class=\"ylabel\" dy=\"4\">\(number(v))</text>"
        }
        for t in xTicks {
            let xx = coordinate(x(t))
            out += "<line x1=\"\(xx)\" y1=\"\(coordinate(top + h))\" x2=\"\(xx)\" y2=\"\(coordinate(top + h + 5))\" class=\"axis\"/>"
            out += "<text x=\"\(xx)\" y=\"\(coordinate(top + h + 18))\" class=\"xlabel\">\(number(t))</text>"
        }
        out += "<line x1=\"\(Int(left))\" y1=\"\(Int(top))\" x2=\"\(Int(left))\" y2=\"\(coordinate(top + h))\" class=\"axis\"/>"
        out +=
            "<line x1=\"\(Int(left))\" y1=\"\(coordinate(top + h))\" x2=\"\(coordinate(left + w))\" y2=\"\(coordinate(top + h))\" class=\"axis\"/>"
        out +=
            "<text x=\"\(coordinate(left + w / 2))\" y=\"\(height - 6)\" class=\"xtitle\">seconds since the stream's first packet (\(number(slot * 1000)) ms slots)</text>"
        out += "<text transform=\"translate(14 \(coordinate(top + h / 2))) rotate(-90)\" class=\"ytitle\">\(unit)</text>"
        // Ceilings per period (a dashed segment over each period's span).
        for p in s.periods where !ceilingOffScale {
            guard let c = p.ceilingBitsPerSecond else { continue }
            let x0 = x(Double(p.firstTime.microseconds(since: s.firstTime)) / 1e6)
            var x1 = x(Double(p.lastTime.microseconds(since: s.firstTime)) / 1e6)
            if x1 - x0 < 2 { x1 = x0 + 2 }
            let yy = coordinate(y(c))
            out += "<line x1=\"\(coordinate(x0))\" y1=\"\(yy)\" x2=\"\(coordinate(x1))\" y2=\"\(yy)\" class=\"ceiling\"/>"
        }
        if let c = s.ceilingBitsPerSecond {
            if ceilingOffScale {
                out +=
                    "<text x=\"\(coordinate(left + w - 4))\" y=\"16\" class=\"ceilinglabel\">ceiling \(escape(formatBitRate(c))) (far above this scale)</text>"
            } else {
                out +=
                    "<text x=\"\(coordinate(left + w - 4))\" y=\"\(coordinate(y(c) - 5))\" class=\"ceilinglabel\">ceiling \(escape(formatBitRate(c)))</text>"
            }
        }
        // The series as steps: each slot's rate held over its slot.
        if !points.isEmpty {
            var d = ""
            for (i, p) in points.enumerated() {
                let t0 = Double(p.time.microseconds(since: s.firstTime)) / 1e6
                let t1 = min(t0 + Double(p.microseconds) / 1e6, xMax)
                let yy = coordinate(y(p.bitsPerSecond))
                d += (i == 0 ? "M" : "L") + coordinate(x(t0)) + " " + yy + "L" + coordinate(x(t1)) + " " + yy
            }
            out += "<path d=\"\(d)\" class=\"series\"/>"
        }
        if let r = s.rateBitsPerSecond {
            let yy = coordinate(y(r))
            out += "<line x1=\"\(Int(left))\" y1=\"\(yy)\" x2=\"\(coordinate(left + w))\" y2=\"\(yy)\" class=\"average\"/>"
            // Right-aligned, under the line when the ceiling label sits above it nearby.
            let below = s.ceilingBitsPerSecond.map { abs(y($0) - y(r)) < 16 } ?? false
            out +=
                "<text x=\"\(coordinate(left + w - 4))\" y=\"\(coordinate(y(r) + (below ? 14 : -5)))\" class=\"averagelabel\">average \(escape(formatBitRate(r)))</text>"
        }
        out += "</svg>"
        return out
    }

    /// A connection's Bluetooth Quality Reports over time: RSSI (dBm, line, left axis) and retransmissions
    /// per report (bars, right axis scaled to the largest), x in seconds since the first report.
    public static func linkQualityChart(_ samples: [LinkQualitySample], title: String, width: Int = 880, height: Int = 220) -> String {
        guard let first = samples.first else { return "" }
        let left = 64.0, right = 64.0, top = 28.0, bottom = 44.0
        let w = Double(width) - left - right, h = Double(height) - top - bottom
        let times = samples.map { Double($0.timestamp.microseconds(since: first.timestamp)) / 1e6 }
        let xTicks = ticks(max: max(times.last ?? 1, 1), count: 8)
        let xMax = xTicks.last ?? 1
        // RSSI from -100 to the highest value rounded up to 10 dBm (at least -20).
        let rssiMin = min(-100.0, Double(samples.map { Int($0.quality.rssi) }.min() ?? -100))
        let rssiMax = max(-20.0, (Double(samples.map { Int($0.quality.rssi) }.max() ?? -20) / 10).rounded(.up) * 10)
        let retxTicks = ticks(max: Double(max(1, samples.map { Int($0.quality.retransmissionCount) }.max() ?? 1)), count: 4)
        let retxMax = retxTicks.last ?? 1
        func x(_ t: Double) -> Double { left + t / xMax * w }
        func yR(_ v: Double) -> Double { top + h - (v - rssiMin) / (rssiMax - rssiMin) * h }
        func yN(_ v: Double) -> Double { top + h - v / retxMax * h }
        var out =
            "<svg class=\"chart\" width=\"\(width)\" height=\"\(height)\" viewBox=\"0 0 \(width) \(height)\" role=\"img\" aria-label=\"\(escape(title))\">"
        out += "<text x=\"\(Int(left))\" y=\"16\" class=\"title\">\(escape(title))</text>"
        var v = rssiMin
        while v <= rssiMax {
            let yy = coordinate(yR(v))
            out += "<line x1=\"\(Int(left))\" y1=\"\(yy)\" x2=\"\(coordinate(left + w))\" y2=\"\(yy)\" class=\"grid\"/>"
            out += "<text x=\"\(Int(left) - 6)\" y=\"\(yy)\" class=\"ylabel\" dy=\"4\">\(number(v))</text>"
            v += 20
        }
        for t in retxTicks {
            out += "<text x=\"\(coordinate(left + w + 6))\" y=\"\(coordinate(yN(t)))\" class=\"xlabel small\" dy=\"4\">\(number(t))</text>"
        }
        for t in xTicks {
            let xx = coordinate(x(t))
            out += "<line x1=\"\(xx)\" y1=\"\(coordinate(top + h))\" x2=\"\(xx)\" y2=\"\(coordinate(top + h + 5))\" class=\"axis\"/>"
            out += "<text x=\"\(xx)\" y=\"\(coordinate(top + h + 18))\" class=\"xlabel\">\(number(t))</text>"
        }
        out +=
            "<line x1=\"\(Int(left))\" y1=\"\(coordinate(top + h))\" x2=\"\(coordinate(left + w))\" y2=\"\(coordinate(top + h))\" class=\"axis\"/>"
        out += "<text x=\"\(coordinate(left + w / 2))\" y=\"\(height - 6)\" class=\"xtitle\">seconds since the first quality report</text>"
        out += "<text transform=\"translate(14 \(coordinate(top + h / 2))) rotate(-90)\" class=\"ytitle\">RSSI dBm (line)</text>"
        out +=
            "<text transform=\"translate(\(width - 8) \(coordinate(top + h / 2))) rotate(-90)\" class=\"ytitle\">retransmissions per report (bars)</text>"
        for (t, s) in zip(times, samples) where s.quality.retransmissionCount > 0 {
            let yy = yN(Double(s.quality.retransmissionCount))
            out +=
                "<rect x=\"\(coordinate(x(t) - 2))\" y=\"\(coordinate(yy))\" width=\"4\" height=\"\(coordinate(top + h - yy))\" class=\"bar\"/>"
        }
        var d = ""
        for (i, (t, s)) in zip(times, samples).enumerated() {
            d += (i == 0 ? "M" : "L") + coordinate(x(t)) + " " + coordinate(yR(Double(s.quality.rssi)))
        }
        out += "<path d=\"\(d)\" class=\"series\"/>"
        return out + "</svg>"
    }

    /// Short labels of the gap histogram buckets: `<100µs`, `100µs`, …, `≥10s` (lower bounds).
    public static let gapLabels: [String] = {
        func label(_ us: Int64) -> String {
            us < 1000 ? "\(us)µs" : us < 1_000_000 ? "\(us / 1000)ms" : "\(us / 1_000_000)s"
        }
        let edges = ThroughputTracker.gapBucketEdges
        return ["<" + label(edges[0])] + edges.dropLast().map(label) + ["≥" + label(edges[edges.count - 1])]
    }()

    /// Inter-packet gap histogram: one bar per log bucket, counts on the bars.
    public static func gapHistogram(_ counts: [Int], title: String, width: Int = 880, height: Int = 200) -> String {
        let left = 64.0, right = 16.0, top = 28.0, bottom = 46.0
        let w = Double(width) - left - right, h = Double(height) - top - bottom
        let n = max(1, counts.count)
        let maxCount = Double(counts.max() ?? 0)
        let yTicks = ticks(max: max(1, maxCount), count: 4)
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
        for (i, c) in counts.enumerated() {
            let x0 = left + Double(i) * band + band * 0.12
            let bw = band * 0.76
            if c > 0 {
                let yy = y(Double(c))
                out +=
                    "<rect x=\"\(coordinate(x0))\" y=\"\(coordinate(yy))\" width=\"\(coordinate(bw))\" height=\"\(coordinate(top + h - yy))\" class=\"bar\"/>"
                out += "<text x=\"\(coordinate(x0 + bw / 2))\" y=\"\(coordinate(yy - 3))\" class=\"barlabel\">\(c)</text>"
            }
            let label = i < gapLabels.count ? gapLabels[i] : ""
            out += "<text x=\"\(coordinate(x0 + bw / 2))\" y=\"\(coordinate(top + h + 14))\" class=\"xlabel small\">\(escape(label))</text>"
        }
        out +=
            "<line x1=\"\(Int(left))\" y1=\"\(coordinate(top + h))\" x2=\"\(coordinate(left + w))\" y2=\"\(coordinate(top + h))\" class=\"axis\"/>"
        out += "<line x1=\"\(Int(left))\" y1=\"\(Int(top))\" x2=\"\(Int(left))\" y2=\"\(coordinate(top + h))\" class=\"axis\"/>"
        out +=
            "<text x=\"\(coordinate(left + w / 2))\" y=\"\(height - 6)\" class=\"xtitle\">gap between consecutive packets (bucket lower bound)</text>"
        out += "<text transform=\"translate(14 \(coordinate(top + h / 2))) rotate(-90)\" class=\"ytitle\">gaps</text>"
        out += "</svg>"
        return out
    }
}
