import BLECore
import BLEProtocols

extension FindingCode {
    package static let unknownFirmwareUpdate = FindingCode(
        "SC-01", layer: .application, severity: .info,
        title: "Probable firmware update (protocol not known)",
        explain: .init(
            meaning:
                "A long run of same-size writes to one handle, then the link ending (and, often, the device coming back): the shape of a firmware image sent in pieces by a protocol blescope does not decode. The link's end is then most likely the device rebooting into the new firmware.",
            advice:
                "If an update was meant, read the device's version after it came back; if the link's end was not expected, look at the last writes of the run and at the device's logs."
        ),
        fold: .never)
}

/// A run of same-size writes to one handle that looks like a firmware image sent by a protocol no ``OTAProfile`` knows,
/// ended by the link's end (Sphero's custom update: 8,186 Write Commands of 20 bytes to 0x000E, then the robot leaves
/// and comes back).
public struct UnknownFirmwareUpdate: Hashable, Sendable {
    public var connection: Int
    public var handle: UInt16
    public var kind: ValueKind
    /// Writes in the run, those of ``size`` bytes, and their value bytes.
    public var writes: Int
    public var size: Int
    public var sameSize: Int
    public var bytes: Int
    public var firstFrame: Int
    public var lastFrame: Int
    public var microseconds: Int64
    /// The busiest other handle of the link during the run (the update's control point, often): its handle and uses.
    public var control: (handle: UInt16, uses: Int, what: String)?
    /// How the link ended after the run.
    public var ending: ConnectionLifecycle.Ending
    /// The device's next link: its number and first frame, and whether the address is the same.
    public var cameBack: (connection: Int, frame: Int, sameAddress: Bool, microseconds: Int64)?

    public var bytesPerSecond: Double { microseconds > 0 ? Double(bytes) * 1_000_000 / Double(microseconds) : 0 }

    /// `probable firmware update (protocol not known): 8186 writes of 20 bytes to handle 0x000e, 0.6 kB/s, frames 1613–18712`.
    public var summary: String {
        let rate = String(fractionDigits: bytesPerSecond < 10_000 ? 1 : 0, bytesPerSecond / 1000)
        let what = "\(writes) \(SC01UnknownFirmwareUpdate.words(kind))s"
        let of = sameSize == writes ? "\(what) of \(size) bytes" : "\(what), \(sameSize) of them \(size) bytes,"
        let beside = control.map { ", the link also carrying \($0.uses) \($0.what) on \(hex($0.handle, width: 4))" } ?? ""
        return
            "probable firmware update (protocol not known): \(of) to handle \(hex(handle, width: 4)) on link #\(connection), \(bytes) bytes at \(rate) kB/s, frames \(firstFrame)–\(lastFrame)\(beside)"
    }

    /// `probable firmware update (protocol not known) of 8186 same-size writes to 0x000e`: what a disconnect rule cites.
    public var rebootText: String {
        "probable firmware update (protocol not known) of \(sameSize) writes of \(size) bytes to \(hex(handle, width: 4))"
    }

    public static func == (a: Self, b: Self) -> Bool {
        (a.connection, a.handle, a.firstFrame, a.lastFrame) == (b.connection, b.handle, b.firstFrame, b.lastFrame)
    }
    public func hash(into h: inout Hasher) { h.combine(connection); h.combine(handle); h.combine(firstFrame) }
}

/// SC-01: names a firmware update in a protocol blescope does not know, by its shape: at least ``minimumWrites`` writes
/// to one handle, nearly all of one size of at least ``minimumSize`` bytes and ``minimumBytes`` in all, the link ending
/// within ``endWindow`` of the last one (by the peer or a loss, or by this side when the device then comes back), and no
/// known update protocol (``OTATracker``) following that link then. Info: context that explains the link's end, which
/// DC-01 and DC-02 then read as the reboot into the new firmware (``Evidence/expectedReboot(_:)``).
package struct SC01UnknownFirmwareUpdate: DiagnosisRule {
    package static let code = FindingCode.unknownFirmwareUpdate
    package static let group = RuleGroup.scenario
    package static let evidence =
        "The throughput streams of writes (Write Command or Request) per handle: count, size of nearly all, first and last frame; the link's end after the run and the device's next link; the firmware updates the OTA tracker followed"
    package static let anchor = "none"
    /// A hundred writes: an image of 8 KiB or more in pieces of 20 to 244 bytes (the bytes decide, the count keeps a
    /// handful of large writes out).
    package static let minimumWrites = 100
    package static let minimumSize = 16
    package static let minimumBytes = 8_192
    /// Share of the writes that must be exactly the run's size (the last piece, a header may differ).
    package static let sameShare = 0.95
    package static let endWindow: Int64 = 30_000_000
    /// How long after the end a new link to another address still counts as the device coming back.
    package static let comeBackWindow: Int64 = 60_000_000

    package static func evaluate(_ e: Evidence) -> [Diagnosis] {
        (e.scenarios?.unknownUpdates ?? recognise(e)).map { u in
            let c = e.connection(u.connection)
            let device = e.deviceName(c)
            var supporting = [CitedFrame(u.firstFrame, "first write of the run"), CitedFrame(u.lastFrame, "last write of the run")]
            supporting.append(CitedFrame(u.ending.frame, "link ended: \(u.ending.text)"))
            if let back = u.cameBack { supporting.append(CitedFrame(back.frame, "the device's next link (#\(back.connection))")) }
            return Diagnosis(
                rule: code, severity: severity, frame: u.lastFrame,
                message: "With \(device): \(u.summary). \(followed(u, e).capitalizedFirst).",
                headline: "probable firmware update (protocol not known) with \(device)", supporting: supporting,
                causes: ["an app updating the device's firmware by a vendor protocol, the device rebooting into it at the end"],
                device: c?.peerAddress, connection: u.connection)
        }
    }

    /// `the peer ended the link at frame 18722 (0x13 …), 0.29 s after the last write; the device came back at frame 18743
    /// (link #8, 1.88 s later)`.
    package static func followed(_ u: UnknownFirmwareUpdate, _ e: Evidence) -> String {
        let who: String
        switch u.ending.endedBy {
        case .local: who = "\(e.thisSide) ended the link"
        case .peer: who = "the device ended the link"
        case .link: who = "the link was lost"
        case .unknown: who = "the link ended"
        }
        let code =
            u.ending.inferredFrom != nil
            ? " with no LL_TERMINATE_IND (inferred: \(u.ending.inferredFrom!))" : u.ending.code.map { " (\(codeName($0)))" } ?? ""
        let after = duration(u.ending.timestamp.microseconds(since: lastWriteTime(u, e) ?? u.ending.timestamp))
        var text = "\(who) at frame \(u.ending.frame)\(code), \(after) after the last write"
        if let back = u.cameBack {
            text +=
                back.sameAddress
                ? "; the device came back at frame \(back.frame) (link #\(back.connection), \(duration(back.microseconds)) later)"
                : "; a device at another address connected at frame \(back.frame) (link #\(back.connection), \(duration(back.microseconds)) later): perhaps the same one, rebooted under a new address"
        } else {
            text += "; the device did not come back in the log"
        }
        return text
    }

    /// `Write Command`, `notification`: a stream's kind in the sentence.
    package static func words(_ kind: ValueKind) -> String {
        switch kind {
        case .writeCommand: "Write Command"
        case .writeRequest: "Write Request"
        case .notification: "notification"
        case .indication: "indication"
        default: kind.name
        }
    }

    package static func lastWriteTime(_ u: UnknownFirmwareUpdate, _ e: Evidence) -> Timestamp? {
        e.throughput?.first { $0.key.connectionNumber == u.connection && $0.key.handle == u.handle && $0.key.kind == u.kind }?.lastTime
    }
}

extension SC01UnknownFirmwareUpdate {
    /// The runs of the capture, one per link at most (its largest).
    package static func recognise(_ e: Evidence) -> [UnknownFirmwareUpdate] {
        let streams = (e.throughput ?? []).filter { s in
            (s.key.kind == .writeCommand || s.key.kind == .writeRequest) && s.packets >= minimumWrites && s.maxValueSize >= minimumSize
                && s.valueBytes >= minimumBytes && Double(s.valuesAtMaxSize) >= sameShare * Double(s.packets)
        }
        var found: [UnknownFirmwareUpdate] = []
        for s in streams.sorted(by: { $0.valueBytes > $1.valueBytes })
        where !found.contains(where: { $0.connection == s.key.connectionNumber }) {
            guard let c = e.connection(s.key.connectionNumber), let end = c.lifecycle.ending, endsTheRun(end),
                end.frame >= s.lastFrame, end.timestamp.microseconds(since: s.lastTime) <= endWindow,
                !claimedByKnownUpdate(s, e)
            else { continue }
            let back = cameBack(after: c, end, e)
            // This side closing after a bulk write is a job done (a printout, a file sent) unless the device comes back.
            guard end.endedBy != .local || back != nil else { continue }
            found.append(
                UnknownFirmwareUpdate(
                    connection: c.number, handle: s.key.handle, kind: s.key.kind, writes: s.packets, size: s.maxValueSize,
                    sameSize: s.valuesAtMaxSize, bytes: s.valueBytes, firstFrame: s.firstFrame, lastFrame: s.lastFrame,
                    microseconds: s.durationMicroseconds, control: control(beside: s, e), ending: end, cameBack: back))
        }
        return found.sorted { $0.firstFrame < $1.firstFrame }
    }

    /// An end the capture shows, or on air one it infers from the peripheral leaving or the link going silent (a device
    /// rebooting sends no LL_TERMINATE_IND); not a link the sniffer only lost.
    package static func endsTheRun(_ end: ConnectionLifecycle.Ending) -> Bool {
        end.inferredFrom == nil || end.endedBy == .peer || end.endedBy == .link || end.reason == LinkSilence.endedUnseen
    }

    /// A known update protocol's session on the link that overlaps the run: the OTA tracker told it already.
    package static func claimedByKnownUpdate(_ s: ThroughputStream, _ e: Evidence) -> Bool {
        (e.otaSessions ?? []).contains { o in
            o.connectionNumber == s.key.connectionNumber && o.startFrame <= s.lastFrame && o.endFrame >= s.firstFrame
        }
    }

    /// The busiest other stream of the link that overlaps the run (notifications from a control point, its commands).
    package static func control(beside s: ThroughputStream, _ e: Evidence) -> (handle: UInt16, uses: Int, what: String)? {
        let other = (e.throughput ?? []).filter { o in
            o.key.connectionNumber == s.key.connectionNumber && o.key.handle != s.key.handle && o.firstFrame <= s.lastFrame
                && o.lastFrame >= s.firstFrame
        }.max { $0.packets < $1.packets }
        return other.map { ($0.key.handle, $0.packets, words($0.key.kind) + ($0.packets == 1 ? "" : "s")) }
    }

    /// The device's next LE link after `end`: to the same address at any time, or to another one within
    /// ``comeBackWindow`` (a device that reboots under a new random address).
    package static func cameBack(after c: Connection, _ end: ConnectionLifecycle.Ending, _ e: Evidence)
        -> (connection: Int, frame: Int, sameAddress: Bool, microseconds: Int64)?
    {
        let later = e.connections.filter { $0.isLE && $0.number != c.number && $0.startFrame > end.frame && !$0.inferred }
        if let address = c.peerAddress, let same = later.first(where: { $0.peerAddress == address }) {
            return (same.number, same.startFrame, true, same.startTime.microseconds(since: end.timestamp))
        }
        if let next = later.first, next.startTime.microseconds(since: end.timestamp) <= comeBackWindow {
            return (next.number, next.startFrame, false, next.startTime.microseconds(since: end.timestamp))
        }
        return nil
    }
}
