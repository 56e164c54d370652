import BLECapture
import BLECore
import BLEProtocols

/// What a capture's isochronous channels did: each CIS and BIS with its parameters, the steps of their lives, and the
/// health of each stream direction that carried ISO data over HCI.
public struct ISOAnalysis: Hashable, Sendable {
    public var streams: [ISOStream] = []
    public var events: [ISOLifecycleEvent] = []
    public var health: [ISOStreamHealth] = []
    public init() {}

    /// The stream a health entry belongs to.
    public func stream(of health: ISOStreamHealth) -> ISOStream? { health.streamNumber.map { streams[$0 - 1] } }
    /// `CIS 0x0002` (or `ISO 0x0002` for data on a handle no event established).
    public func label(of health: ISOStreamHealth) -> String {
        stream(of: health)?.label ?? "ISO \(hex(health.handle, width: 4))"
    }
    public var isEmpty: Bool { streams.isEmpty && health.isEmpty && events.isEmpty }
}

extension FindingKind {
    static let isoCutByCapturer = FindingKind(
        .isoCutByCapturer, message: "HCI ISO data packets cut by the capturer: not counted as SDUs")
}

/// The ISO tracker as the analyzer's isochronous machine: the HCI ISO data records, the isochronous commands, the end of
/// the pass and its result. The analyzer hands it each record of its kind and emits the timeline event it answers.
extension ISOTracker {
    /// One HCI ISO data packet (H4 0x05, btsnoop, PacketLogger 0x12/0x13, Linux monitor 18/19, pcap LT 201/187/254):
    /// its header read in place, counted in its stream's health; its timeline event when `timeline`.
    mutating func data(_ record: CaptureRecord, timeline: Bool, findings: inout [Finding]) -> TimelineEvent? {
        guard !record.isTruncated else {
            if !cutNoted {
                cutNoted = true
                findings.append(Finding(.info, .isoCutByCapturer, frame: record.frame, offset: record.fileOffset))
            }
            return nil
        }
        var input = record.reader
        let header: ISOHeader
        do { header = try ISOHeader(parsing: &input) } catch {
            findings.append(Finding(.warning, .malformed("HCI ISO data packet", error), frame: record.frame, offset: record.fileOffset))
            return nil
        }
        if input.remaining > header.fragmentLength {
            findings.append(
                Finding(
                    .warning, .hciLengthMismatch(kind: record.kind, declared: header.loadLength + 4, present: record.bytes.count),
                    frame: record.frame, offset: record.fileOffset))
        }
        data.add(
            header, direction: record.direction, controller: record.controllerIndex, frame: record.frame,
            timestamp: record.timestamp, findings: &findings)
        return timeline ? Self.event(header, record) : nil
    }

    private static func event(_ header: ISOHeader, _ record: CaptureRecord) -> TimelineEvent {
        var e = TimelineEvent(
            frame: record.frame, timestamp: record.timestamp, connection: nil, direction: record.direction, layer: .iso,
            code: nil, name: "ISO Data", summary: header.summary)
        var fields: [(String, Int64)] = [("iso_handle", Int64(header.handle)), ("pb", Int64(header.boundary.rawValue))]
        if let s = header.sequenceNumber { fields.append(("sequence_number", Int64(s))) }
        if let l = header.sduLength { fields.append(("sdu_length", Int64(l))) }
        if let s = header.status { fields.append(("packet_status", Int64(s.rawValue))) }
        if let t = header.timestamp { fields.append(("time_stamp", Int64(t))) }
        fields.append(("fragment_length", Int64(header.fragmentLength)))
        e.fields = fields
        return e
    }

    /// The isochronous commands (Core Spec Vol 4, Part E, 7.8.97–7.8.117; one look at the opcode for the rest).
    @inline(__always)
    mutating func noteCommand(_ packet: HCICommandPacket, record: CaptureRecord) {
        guard packet.opcode.ogf == 0x08, (0x0061...0x0075).contains(packet.opcode.ocf) else { return }
        command(packet, controller: record.controllerIndex, frame: record.frame, timestamp: record.timestamp)
    }

    /// Ends the streams' reassembly and computes their health; the tracker's findings go to `findings`.
    mutating func finish(findings: inout [Finding], frame: Int) {
        var f: [Finding] = []
        health = data.finish(streams: streams, findings: &f, frame: frame)
        findings += f + self.findings
    }

    /// The result, once ``finish(findings:frame:)`` ran: streams, their life, their health (with each CIS's ACL
    /// connection number, the latest connection on its ACL handle that started before it).
    func analysis(connections: [Connection]) -> ISOAnalysis {
        var result = ISOAnalysis()
        result.streams = streams.map { s in
            var s = s
            if let acl = s.aclHandle {
                s.connectionNumber =
                    connections.last {
                        $0.controller == s.controller && $0.handle == acl && $0.startFrame <= s.establishedFrame
                    }?.number
            }
            return s
        }
        result.events = events
        result.health = health
        return result
    }
}

extension Analyzer {
    /// The ISO tracker's result, once ``finish()`` ran (``ISOTracker/analysis(connections:)``).
    public var isoAnalysis: ISOAnalysis { hci.iso.analysis(connections: connections) }
}
