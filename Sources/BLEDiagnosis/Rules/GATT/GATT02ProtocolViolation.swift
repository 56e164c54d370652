import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let protocolViolation = FindingCode(
        "GATT-02", layer: .att, severity: .warning,
        title: "ATT sequential-protocol violation",
        explain: .init(
            meaning:
                "A request was sent while the previous one still waited for its response (ATT allows one at a time), or a response came with no request.",
            advice: "Queue GATT operations in the app: wait for each callback before the next request."),
        fold: .device, traits: [.readsPayloads])
}

/// GATT-02: a second ATT request before the answer to the first (Core Spec Vol 3, Part F, 3.3.2: one outstanding
/// request per bearer), or a response without a request.
struct GATT02ProtocolViolation: DiagnosisRule {
    static let code = FindingCode.protocolViolation
    static let group = RuleGroup.gatt
    static let evidence = "A request (or indication) sent while another waits for its answer on the same bearer; a response with no request"
    static let anchor = "none (Wireshark links requests and responses, no rule)"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var out: [Diagnosis] = e.events.compactMap { ev in
            guard case .attUnanswered(let request, let handle, let sender, .nextRequest, let next, _) = ev.kind, e.answersInLog else {
                return nil
            }
            let c = e.connection(ev.connection)
            let device = e.deviceName(c)
            // The peer as the client (a peripheral discovering the phone's database) sends its requests the other way.
            let way = sender == .local ? "went to" : "came from"
            return Diagnosis(
                rule: Self.code, severity: severity, frame: next,
                message:
                    "A new ATT request \(way) \(device) at frame \(next) while \(request)\(handle.map { " for \(hex($0, width: 4))" } ?? "") (frame \(ev.frame)) was still waiting for its answer; the peer may ignore it.",
                headline: "ATT requests overlapped on \(device)", supporting: [CitedFrame(ev.frame, "\(request), unanswered")],
                causes: ["a client stack or app queue bug", "a custom GATT stack"], device: c?.peerAddress, connection: c?.number,
                fold: "\(device)")
        }
        // Only a signal when the capture is whole around it: a cut or late-started log loses requests (a response on
        // a connection that started before the capture may answer a request sent before it).
        let lateStarts = e.connections.filter(\.inferred).map { $0.startFrame...($0.endFrame ?? Int.max) }
        let orphans = e.findings.filter { f in
            f.kind.code == .attResponseWithoutRequest && !lateStarts.contains { $0.contains(f.frame ?? 0) }
        }
        if let first = orphans.first, let frame = first.frame, !(e.completeness?.hasWarnings ?? false) {
            out.append(
                Diagnosis(
                    rule: Self.code, severity: .info, frame: frame,
                    message:
                        "\(orphans.count) ATT response\(orphans.count == 1 ? "" : "s") came without a request in the capture (first at frame \(frame)).",
                    headline: "ATT responses without a request",
                    supporting: orphans.dropFirst().prefix(20).compactMap { f in
                        f.frame.map { CitedFrame($0, "response without a request") }
                    },
                    causes: orphanCauses(e, frame: frame)))
        }
        return out
    }

    /// Why a response at `frame` has no request in the capture. The request can have gone before the capture only on a
    /// link that began before it; on an air link followed from its CONNECT_IND the sniffer missed it (the LESC debug-key
    /// capture's 503: a Read By Type Response on a link followed from frame 165, after the sniffer missed connection event
    /// 246 between 500 and 501), and an HCI log that saw the link open lost it.
    static func orphanCauses(_ e: Evidence, frame: Int) -> [String] {
        let twice = "a peer that answers twice"
        let event = e.events.first { $0.frame == frame && $0.kind.isResponseUnpaired }
        guard let c = e.connection(event?.connection), !c.inferred, c.startFrame < frame else {
            return ["the request was sent before the capture started", twice]
        }
        guard e.isAirCapture else {
            return ["the log lost the request (it holds link #\(c.number) from its start at frame \(c.startFrame))", twice]
        }
        let followed =
            "the sniffer missed the request (inferred): it followed link #\(c.number) from its CONNECT_IND at frame \(c.startFrame)"
        // The last stretch of the link the sniffer missed before the response, where the requester's packet could be: a
        // connection event, a packet with a bad CRC, or the requester's packet the responder's NESN acknowledged.
        guard case .attResponseUnpaired(_, let requester)? = event?.kind,
            let gap = c.linkLayer?.missed.within(c.startFrame, frame)?.last(where: {
                $0.at <= frame && ($0.unheard ?? requester) == requester
            })
        else {
            // No gap: the sniffer heard every event and acknowledgement of the link, so a peer answering unasked comes first.
            return [twice, followed]
        }
        let what =
            gap.events > 0
            ? "\(gap.events) connection event\(gap.events == 1 ? "" : "s")"
            : gap.unheard == nil
                ? "a packet (bad CRC)"
                : "a packet of \(e.sides(requester)) (\(e.sides(requester == .local ? .peer : .local)) NESN acknowledged it)"
        return [followed + " and missed \(what) between frames \(gap.after) and \(gap.at), the last gap before the response", twice]
    }
}

extension EvidenceEvent.Kind {
    fileprivate var isResponseUnpaired: Bool {
        if case .attResponseUnpaired = self { return true }
        return false
    }
}
