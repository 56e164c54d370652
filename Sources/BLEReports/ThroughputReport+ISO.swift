import BLEAnalysis
import BLECore

/// The isochronous streams in `throughput`: one verdict line per stream direction with its SDU bitrate against the
/// configured one (`blescope iso` has the whole story).
extension ThroughputReport {
    func isoText(terminal: Terminal) -> String {
        guard !iso.health.isEmpty else { return "" }
        let report = ISOReport(iso: iso)
        var out = "\n" + terminal.paint("ISO streams (SDU data from the HCI ISO data packets; details: blescope iso)", .bold) + "\n"
        for h in iso.health { out += report.healthText(h, terminal: terminal) }
        return terminal.fit(out)
    }

    /// `"iso_streams": [health]` after the attribute streams, only when the capture has ISO data (so that the JSON of
    /// a capture without it stays as it was).
    func writeISO(into w: inout JSONWriter) {
        guard !iso.health.isEmpty else { return }
        w.beginArray("iso_streams")
        for h in iso.health { ISOReport.write(h, label: iso.label(of: h), into: &w) }
        w.endArray()
    }
}
