import BLEAnalysis
import BLECore

/// Diagnosis and LE Audio differences.
///
/// Findings are compared by rule (``Diagnosis/rule``): a rule only in B at error or worse is a new error (the CI gate's
/// `new-error`), one only in A is gone, one in both with another count changed. Isochronous streams are matched by
/// kind (CIS, BIS) and direction, in the order they appear; their parameters are those of their establishment event
/// and their loss is the fleet's ISO columns (``FleetColumns/isoStreams``).
enum DiffDiagnosis {
    struct RuleSummary {
        var rule: String
        var severity: DiagnosisSeverity
        var count: Int
        var frame: Int
        var headline: String
    }

    static func summaries(_ f: FileAnalysis) -> [String: RuleSummary] {
        var out: [String: RuleSummary] = [:]
        for d in f.diagnosis.findings {
            if var s = out[d.rule] {
                s.count += max(1, d.count)
                s.severity = max(s.severity, d.severity)
                s.frame = min(s.frame, d.frame)
                out[d.rule] = s
            } else {
                out[d.rule] = RuleSummary(rule: d.rule, severity: d.severity, count: max(1, d.count), frame: d.frame, headline: d.headline)
            }
        }
        return out
    }

    static func compare(_ fa: FileAnalysis, _ fb: FileAnalysis) -> [Difference] {
        let a = summaries(fa), b = summaries(fb)
        var out: [Difference] = []
        for rule in Set(a.keys).union(b.keys).sorted() {
            let x = a[rule], y = b[rule]
            let s = (y ?? x)!
            let subject = "\(rule) \(s.headline)"
            let severityRank = Double(DiagnosisSeverity.allCases.firstIndex(of: s.severity) ?? 0)
            switch (x, y) {
            case (nil, let y?):
                out.append(
                    Difference(
                        .diagnosis, "rule-new", impact: y.severity >= .error ? .major : .minor, subject: subject, a: nil,
                        b: "\(y.severity.rawValue) ×\(y.count)", frames: (nil, y.frame), magnitude: severityRank))
            case (let x?, nil):
                out.append(
                    Difference(
                        .diagnosis, "rule-gone", impact: .minor, subject: subject, a: "\(x.severity.rawValue) ×\(x.count)", b: nil,
                        frames: (x.frame, nil), magnitude: severityRank))
            case (let x?, let y?) where x.count != y.count || x.severity != y.severity:
                out.append(
                    Difference(
                        .diagnosis, "rule-count", impact: y.severity >= .error && y.count > x.count ? .minor : .info, subject: subject,
                        a: "\(x.severity.rawValue) ×\(x.count)", b: "\(y.severity.rawValue) ×\(y.count)", frames: (x.frame, y.frame),
                        magnitude: severityRank))
            default: continue
            }
        }
        return out
    }

    /// `cis rx #1`: a stream as both captures can name it.
    static func keyed<T>(_ items: [T], kind: (T) -> String) -> [String: T] {
        var seen: [String: Int] = [:]
        var out: [String: T] = [:]
        for item in items {
            let k = kind(item)
            seen[k, default: 0] += 1
            out["\(k) #\(seen[k]!)"] = item
        }
        return out
    }

    static let healthColumns = ["sdus", "lost_sdus", "loss_ratio", "loss_bursts"]

    static func healthCell(_ column: String, _ h: ISOStreamHealth, _ iso: ISOAnalysis) -> String? {
        guard let c = FleetColumns.isoStreams.columns.first(where: { $0.key == column }) else { return nil }
        let t = c.value(ISORow(id: "", health: h, label: iso.label(of: h))).csv
        return t.isEmpty ? nil : t
    }

    /// The stream parameters of the establishment event, as text per field.
    static func parameters(_ s: ISOStream) -> [(String, String)] {
        func text<T>(_ v: T?) -> String { v.map { "\($0)" } ?? "-" }
        return [
            ("SDU interval (µs)", "\(text(s.sduIntervalTx))/\(text(s.sduIntervalRx))"),
            ("max SDU", "\(text(s.maxSDUTx))/\(text(s.maxSDURx))"), ("ISO interval", "\(s.isoInterval)"),
            ("PHY", "\(text(s.phyTx))/\(text(s.phyRx))"), ("NSE", "\(s.nse)"),
            ("burst number", "\(text(s.burstNumberTx))/\(text(s.burstNumberRx))"),
            ("flush timeout", "\(text(s.flushTimeoutTx))/\(text(s.flushTimeoutRx))"),
            ("transport latency (µs)", "\(text(s.transportLatencyTx))/\(text(s.transportLatencyRx))"),
        ]
    }

    static func compareAudio(_ fa: FileAnalysis, _ fb: FileAnalysis) -> [Difference] {
        var out: [Difference] = []
        let sa = keyed(fa.iso.streams) { $0.kind.rawValue }, sb = keyed(fb.iso.streams) { $0.kind.rawValue }
        for k in Set(sa.keys).union(sb.keys).sorted() {
            guard let x = sa[k], let y = sb[k] else {
                let only = (sa[k] ?? sb[k])!
                out.append(
                    Difference(
                        .leAudio, sa[k] == nil ? "stream-only-in-b" : "stream-only-in-a", impact: .major, subject: "stream \(k)",
                        a: sa[k]?.label, b: sb[k]?.label, frames: (sa[k]?.establishedFrame, sb[k]?.establishedFrame),
                        magnitude: Double(only.number)))
                continue
            }
            for ((title, va), (_, vb)) in zip(parameters(x), parameters(y)) where va != vb {
                out.append(
                    Difference(
                        .leAudio, "stream-parameters", impact: .minor, subject: "stream \(k) \(title)", a: va, b: vb,
                        frames: (x.establishedFrame, y.establishedFrame), magnitude: 1))
            }
        }
        let ha = keyed(fa.iso.health) { "\($0.kind?.rawValue ?? "iso") \($0.direction)" }
        let hb = keyed(fb.iso.health) { "\($0.kind?.rawValue ?? "iso") \($0.direction)" }
        for k in Set(ha.keys).intersection(hb.keys).sorted() {
            let x = ha[k]!, y = hb[k]!
            for column in healthColumns {
                let va = healthCell(column, x, fa.iso), vb = healthCell(column, y, fb.iso)
                guard va != vb else { continue }
                let worse = (DiffLink.number(vb ?? "") ?? 0) > (DiffLink.number(va ?? "") ?? 0) && column != "sdus"
                out.append(
                    Difference(
                        .leAudio, column.replacing("_", with: "-"), impact: worse ? .major : .minor,
                        subject: "stream \(k) \(column.replacing("_", with: " "))", a: va, b: vb,
                        frames: (x.firstFrame, y.firstFrame), magnitude: DiffLink.relative(va, vb)))
            }
        }
        return out
    }
}
