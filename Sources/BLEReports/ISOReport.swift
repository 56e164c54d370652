import BLEAnalysis
import BLECodecs
import BLECore
import BLEProtocols

/// The isochronous channels of a capture and the audio profiles that drove them (`blescope iso`; also the `iso`
/// section of `throughput` and `report`): each CIS and BIS with its parameters and life, each stream direction's
/// health with its verdict line, the ASE states and control-point operations, BASS.
public struct ISOReport: Sendable {
    public var iso: ISOAnalysis
    public var profiles: LEAudioProfiles?

    public init(iso: ISOAnalysis, profiles: LEAudioProfiles? = nil) {
        self.iso = iso
        self.profiles = profiles
    }

    /// The verdict line of each stream direction, in order.
    public var verdicts: [String] { iso.health.map { $0.verdict(label: iso.label(of: $0)) } }

    // MARK: text

    /// The answer first: each stream direction's verdict with its figures, then the ASE operations the server refused;
    /// then the streams' parameters, their lifecycle and the profiles' operations and states, each citing its frame.
    public func text(terminal: Terminal) -> String {
        var out = ""
        if iso.isEmpty && (profiles?.isEmpty ?? true) { return "No isochronous channels or LE Audio profiles in this capture.\n" }
        if !iso.health.isEmpty {
            out += terminal.paint("Stream health", .bold) + "\n"
            for h in iso.health { out += healthText(h, terminal: terminal) }
        } else if !iso.streams.isEmpty {
            out += "No ISO data packets in this capture (the controller carries the audio, or the log leaves it out).\n"
        }
        if let refusals = profiles?.refusals, !refusals.isEmpty {
            out += (out.isEmpty ? "" : "\n") + terminal.paint("ASE operations refused", .bold) + "\n"
            for op in refusals { out += "  " + terminal.paint(Self.operationLine(op), .red) + "\n" }
        }
        if !iso.streams.isEmpty {
            out += (out.isEmpty ? "" : "\n") + terminal.paint("ISO streams (\(iso.streams.count))", .bold) + "\n"
            for s in iso.streams { out += streamText(s) }
        }
        if !iso.events.isEmpty {
            out += "\n" + terminal.paint("Lifecycle", .bold) + "\n"
            for e in iso.events { out += "  " + Self.eventLine(e) + "\n" }
        }
        if let profiles, !profiles.isEmpty { out += profilesText(profiles, terminal: terminal) }
        return terminal.fit(out)
    }

    func streamText(_ s: ISOStream) -> String {
        var line = "  #\(s.number) \(s.label)  \(s.role)"
        if let cig = s.cigID, let cis = s.cisID { line += "  CIG \(cig) CIS \(cis)" }
        if let big = s.bigHandle, let bis = s.bisIndex { line += "  BIG \(hex(big)) BIS \(bis)" }
        if let acl = s.aclHandle { line += "  ACL \(hex(acl, width: 4))" + (s.connectionNumber.map { " (#\($0))" } ?? "") }
        line += "  frames \(s.establishedFrame)–" + (s.endFrame.map(String.init) ?? "end")
        var out = line + "\n"
        if s.endedByReset, let end = s.endFrame { out += "     ended: \(ISOStream.endedByResetText) (frame \(end))\n" }
        if let reason = s.endReason { out += "     ended: \(reason)" + (s.endFrame.map { " (frame \($0))" } ?? "") + "\n" }
        out += "     ISO interval \(String(fractionDigits: 2, Double(s.isoInterval) * 1.25)) ms, NSE \(s.nse)\n"
        out += Self.direction("tx", interval: s.sduIntervalTx, sdu: s.maxSDUTx, phy: s.phyTx, latency: s.transportLatencyTx)
        out += Self.direction("rx", interval: s.sduIntervalRx, sdu: s.maxSDURx, phy: s.phyRx, latency: s.transportLatencyRx)
        for p in s.dataPaths {
            out += "     data path \(p.direction == .tx ? "tx" : "rx"): \(p.dataPathID == 0 ? "HCI" : "vendor \(hex(p.dataPathID))")"
            out += " \(p.codec), controller delay \(p.controllerDelayMicroseconds) µs (frame \(p.frame)"
            out += (p.removedFrame.map { ", removed at \($0)" } ?? "") + ")\n"
        }
        return out
    }

    /// `     tx: SDU every 10000 µs, max SDU 40, 2M, latency 11416 µs`, or nothing when the direction is unused.
    static func direction(_ name: String, interval: UInt32?, sdu: UInt16?, phy: LEPHY?, latency: UInt32?) -> String {
        guard interval != nil || sdu != nil || latency != nil else { return "" }
        var parts: [String] = []
        if let interval { parts.append("SDU every \(interval) µs") }
        if let sdu { parts.append("max SDU \(sdu)") }
        if let phy { parts.append(phy.description) }
        if let latency { parts.append("latency \(latency) µs") }
        return "     \(name): " + parts.joined(separator: ", ") + "\n"
    }

    /// The verdict line (yellow when SDUs were lost), then the figures behind it, one topic a line.
    func healthText(_ h: ISOStreamHealth, terminal: Terminal) -> String {
        let verdict = h.verdict(label: iso.label(of: h))
        var out = "  " + (h.lostSDUs > 0 ? terminal.paint(verdict, .yellow) : verdict) + "\n"
        out += "     packets \(h.packets), SDUs \(h.sdus)" + (h.fragmentedSDUs > 0 ? " (\(h.fragmentedSDUs) fragmented)" : "")
        out += ", sequence \(h.firstSequence.map(String.init) ?? "–")…\(h.lastSequence.map(String.init) ?? "–")"
        out += ", SDU interval \(h.sduIntervalMicroseconds) µs (\(h.intervalSource))\n"
        out += "     missing \(h.missingSDUs) in \(h.sequenceGaps) gap\(h.sequenceGaps == 1 ? "" : "s"), flagged lost \(h.flaggedLost)"
        out += ", possibly invalid \(h.possiblyInvalid), expected by time \(h.expectedSDUsByTime)\n"
        var jitter: [String] = []
        if let j = h.timestampJitterMaxMicroseconds {
            jitter.append("time-stamp max \(j) µs, mean \(String(fractionDigits: 1, h.timestampJitterMeanMicroseconds ?? 0)) µs")
        }
        if let a = h.arrivalJitterMaxMicroseconds { jitter.append("arrival max \(a) µs") }
        if !jitter.isEmpty { out += "     jitter: " + jitter.joined(separator: "; ") + "\n" }
        out += "     bitrate \(formatRate(h.bitrate))" + (h.configuredBitrate.map { " (configured \(formatRate($0)))" } ?? "") + "\n"
        if h.lostSDUs > 0 {
            out += "     loss over time (\(h.timeBucketMicroseconds / 1000) ms per mark): \(Self.sparkline(h.lostPerBucket))\n"
        }
        return out
    }

    /// `frame 133  #1 Config QoS ASE 1,2 → frame 136: ASE 1, 2: Invalid Configuration Parameter Value (Presentation_Delay)`:
    /// the server's answers, ASEs with the same answer together.
    static func operationLine(_ op: ASEOperation) -> String {
        var line = "frame \(op.frame)  #\(op.connectionNumber) \(op.name) ASE \(op.aseIDs.map(String.init).joined(separator: ","))"
        guard let r = op.responseFrame else { return line + " → no response" }
        var answers: [(ids: [UInt8], text: String)] = []
        for response in op.responses {
            let text = response.code == 0 ? response.codeName : "\(response.codeName) (\(response.reasonName))"
            if let i = answers.firstIndex(where: { $0.text == text }) {
                answers[i].ids.append(response.aseID)
            } else {
                answers.append(([response.aseID], text))
            }
        }
        line += (op.refused ? " REFUSED" : "") + " → frame \(r): "
        if answers.count == 1 && answers[0].ids == op.aseIDs { return line + answers[0].text }
        return line + answers.map { "ASE \($0.ids.map(String.init).joined(separator: ", ")): \($0.text)" }.joined(separator: "; ")
    }

    /// One character per bucket, from a dot (no loss: visible, so a line never ends in blanks) to full (the most).
    static func sparkline(_ values: [Int]) -> String {
        let marks = Array("·▁▂▃▄▅▆▇█")
        let top = max(values.max() ?? 0, 1)
        return String(values.map { $0 == 0 ? marks[0] : marks[1 + min(7, ($0 * 8 - 1) / top)] })
    }

    static func eventLine(_ e: ISOLifecycleEvent) -> String {
        var s = "frame \(e.frame)  \(e.kind.rawValue)"
        if let h = e.handle { s += "  handle \(hex(h, width: 4))" }
        if let c = e.cigID { s += "  CIG \(c)" }
        if let b = e.bigHandle { s += "  BIG \(hex(b))" }
        if e.status.rawValue != 0 { s += "  \(e.status)" }
        return s
    }

    func profilesText(_ p: LEAudioProfiles, terminal: Terminal) -> String {
        var out = ""
        if !p.operations.isEmpty {
            out += "\n" + terminal.paint("ASE Control Point (ASCS)", .bold) + "\n"
            for op in p.operations {
                let line = Self.operationLine(op)
                out += "  " + (op.refused ? terminal.paint(line, .red) : line) + "\n"
            }
        }
        if !p.aseStates.isEmpty {
            out += "\n" + terminal.paint("ASE states", .bold) + "\n"
            for a in p.aseStates where a.previous != a.state {
                let from = a.previous.map { (LEAudioTables.aseStates[Int64($0)] ?? "\($0)") + " → " } ?? ""
                out += "  frame \(a.frame)  #\(a.connectionNumber) \(a.role) ASE \(a.aseID): \(from)\(a.stateName)"
                out += (a.cigID.map { "  CIG \($0) CIS \(a.cisID ?? 0)" } ?? "") + (a.allowed ? "" : "  (not an ASCS transition)") + "\n"
            }
        }
        if !p.bass.isEmpty {
            out += "\n" + terminal.paint("Broadcast Audio Scan (BASS)", .bold) + "\n"
            for b in p.bass {
                var parts: [String] = []
                if let id = b.sourceID { parts.append("source \(id)") }
                if let id = b.broadcastID { parts.append("broadcast \(hex(id, width: 6))") }
                if let pa = b.paSyncState { parts.append("PA \(LEAudioTables.paSyncStates[Int64(pa)] ?? "\(pa)")") }
                if !b.bisSync.isEmpty { parts.append("BIS sync " + b.bisSync.map { hex($0, width: 2) }.joined(separator: ",")) }
                out +=
                    "  frame \(b.frame)  #\(b.connectionNumber) \(b.name)" + (parts.isEmpty ? "" : ": " + parts.joined(separator: ", "))
                    + "\n"
            }
        }
        return out
    }
}
