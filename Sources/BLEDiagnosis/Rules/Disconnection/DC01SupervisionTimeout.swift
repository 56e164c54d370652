import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let supervisionTimeout = FindingCode(
        "DC-01", layer: .link, severity: .critical,
        title: "Link lost: supervision timeout",
        explain: .init(
            meaning:
                "No packet came from the peer for the whole supervision timeout, so the link was declared lost: out of range, blocked, or the peer stopped (reset, crash, brown-out).",
            advice: "Check range and the peer's power and logs at that time; a longer supervision timeout tolerates short fades."),
        fold: .device, traits: [.restsOnSetup])
}

/// DC-01: the link was lost because the peer went silent for the supervision timeout (Disconnection Complete 0x08,
/// Core Spec Vol 6, Part B, 4.5.2). Says when the peer was last heard, the timeout in force and where it came from, and
/// what the controller's quality reports said before.
struct DC01SupervisionTimeout: DiagnosisRule {
    static let code = FindingCode.supervisionTimeout
    static let group = RuleGroup.disconnection
    static let evidence =
        "Disconnection Complete 0x08; the last packet received from the peer; the supervision timeout in force (connection complete or update); Android quality reports before it (approaching LSTO, RSSI)"
    static let anchor = "none (btmon -a prints the reason only)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        e.disconnections.filter { $0.reason == .connectionTimeout && $0.airSender == nil }.map { d in
            let c = d.connection
            let device = e.deviceName(c)
            var supporting: [CitedFrame] = []
            var facts: [UsedFact] = []
            var details: [String] = []
            // A request of this side the peer never answered, its wait ended by this loss: the peer stopped responding
            // before the link was lost (cited first among the causes).
            let unanswered = Self.unansweredRequest(ending: d, e)
            if let rx = c?.activity.lastReceived, rx.frame < d.frame {
                let silent = d.event.timestamp.microseconds(since: rx.timestamp)
                supporting.append(CitedFrame(rx.frame, "last data from the peer, \(duration(silent)) before the loss"))
                details.append("its last data came \(duration(silent)) before")
                // This side spoke into the silence and nothing came back (a request never answered is told below).
                if let sent = c?.activity.lastSent, sent.frame > rx.frame, sent.frame < d.frame, sent.frame != unanswered?.frame {
                    let what = Self.lastSent(c?.activity, at: sent.frame)
                    supporting.append(CitedFrame(sent.frame, "\(what), nothing came back"))
                    details.append("\(what) at frame \(sent.frame) got nothing back")
                }
            }
            if let t = c?.supervisionTimeout {
                facts.append(t.fact)
                details.append(
                    "the \(t.fact.value) supervision timeout expired" + (t.fact.source.kind == "observed" ? "" : " (\(t.fact.source.kind))")
                )
                if let f = t.fact.source.frame { supporting.append(CitedFrame(f, "supervision timeout \(t.fact.value) set")) }
            }
            let reports = e.qualityReports(of: d.event.connection).filter { $0.frame < d.frame }
            for r in reports.suffix(3) {
                guard case .qualityReport(_, let id, let rssi, _, let noRx, _) = r.kind else { continue }
                supporting.append(CitedFrame(r.frame, "quality report \(id): \(rssiText(rssi)), \(noRx) no-RX"))
            }
            if let warn = reports.last(where: { if case .qualityReport(_, .approachingLSTO, _, _, _, _) = $0.kind { true } else { false } })
            {
                details.append("the controller warned of it at frame \(warn.frame)")
            }
            if let last = reports.last, case .qualityReport(_, _, let rssi, _, _, _) = last.kind, rssi > BQRSignal.noSignal {
                details.append("RSSI was \(rssi) dBm at the last report")
            }
            if let failed = interruptedEncryption(e, connection: d.event.connection, since: c?.startFrame ?? 0, before: d.frame) {
                supporting.append(CitedFrame(failed, "encryption start failed with the same timeout (0x08)"))
                details.append("the encryption being started failed with it at frame \(failed)")
            }
            if let u = unanswered, case .attUnanswered(let request, let handle, _, _, _, _) = u.kind {
                let on = handle.map { " for \(hex($0, width: 4))" } ?? ""
                supporting.append(CitedFrame(u.frame, "\(request)\(on), never answered"))
                details.append("the peer never answered this side's \(request)\(on) at frame \(u.frame)")
            }
            var sentence =
                "Link to \(device) lost: supervision timeout (0x08) at frame \(d.frame)"
                + (details.isEmpty ? "." : "; " + details.joined(separator: ", ") + ".")
            let reboot = e.expectedReboot(d)
            let probable = reboot == nil ? nil : e.scenarios?.update(endingAt: d.frame, connection: c?.number)
            if let reboot {
                supporting.append(reboot)
                sentence += " It follows the \(reboot.text) (frame \(reboot.frame)): the device most likely rebooted into the new firmware."
            }
            var found = Diagnosis(
                rule: Self.code, severity: reboot == nil ? severity : .info, frame: d.frame, message: sentence,
                headline: "link to \(device) lost by supervision timeout (0x08)",
                supporting: supporting.sorted { $0.frame < $1.frame },
                causes: (reboot == nil ? [] : Self.rebootCauses(probable: probable != nil))
                    + (unanswered.map {
                        ["the peer stopped responding before the link was lost (request at frame \($0.frame) unanswered)"]
                    } ?? [])
                    + [
                        "out of range or blocked by the body, interference (Wi-Fi coexistence)",
                        "the peer reset, browned out or crashed (watchdog)",
                        "a supervision timeout too short for the link",
                    ],
                device: c?.peerAddress, connection: c?.number, facts: facts, fold: "\(device)\(reboot == nil ? "" : " reboot")")
            found.instance = details.isEmpty ? nil : details.joined(separator: ", ")
            return found
        }
    }
}

extension DC01SupervisionTimeout {
    /// This side's request whose wait the loss ended (``EvidenceEvent/Kind/attUnanswered``).
    static func unansweredRequest(ending d: DisconnectionStory, _ e: Evidence) -> EvidenceEvent? {
        e.events.last { ev in
            guard ev.connection == d.event.connection, ev.frame < d.frame,
                case .attUnanswered(_, _, .local, .disconnection, let end, _) = ev.kind
            else { return false }
            return end == d.frame
        }
    }

    /// This side's last packet, named as the write it was when it was one (`this side's write to 0x0019`).
    static func lastSent(_ activity: LinkActivity?, at frame: Int) -> String {
        guard let handle = activity?.written.first(where: { $0.value.last == frame })?.key else { return "this side's last packet" }
        return "this side's write to \(hex(handle, width: 4))"
    }

    /// The causes of a link's end that follows a firmware update: the reboot into it, first.
    static func rebootCauses(probable: Bool) -> [String] {
        probable
            ? [
                "the device rebooting into the new firmware at the end of the probable update (protocol not known; SC-01)",
                "the update failed and the device reset: the capture cannot show which (read its version once it is back)",
            ]
            : ["the device rebooting into the new firmware once the update succeeded"]
    }

    /// An Encryption Change with 0x08 Connection Timeout on the lost link: the controller failing the encryption start
    /// the loss interrupted (Core Spec Vol 4, Part E, 7.7.8), the same event seen from the encryption (a PacketLogger
    /// log: Encryption Change v2 four frames before the loss).
    static func interruptedEncryption(_ e: Evidence, connection: Int?, since start: Int, before end: Int) -> Int? {
        e.events.last { ev in
            guard ev.connection == connection, ev.frame >= start, ev.frame < end,
                case .encryptionChange(_, let status, _) = ev.kind
            else { return false }
            return status == .connectionTimeout
        }?.frame
    }
}

/// An RSSI as the messages say it: the bottom of the scale (−127 dBm) on a report means nothing was received to
/// measure, not a very weak signal (AOSP BQR: RSSI of the last received packet).
enum BQRSignal {
    static let noSignal = LinkQualitySummary.unmeasuredRSSI
}

func rssiText(_ rssi: Int) -> String {
    rssi <= BQRSignal.noSignal ? "no packet received to measure (RSSI −127, the bottom of the scale)" : "RSSI \(rssi) dBm"
}
