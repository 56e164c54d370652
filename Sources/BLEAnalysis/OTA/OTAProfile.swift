import BLECodecs
import BLECore

/// One firmware-update protocol, as ``OTATracker`` follows it: the characteristics it listens on,
/// when a value opens, joins or restarts a session, how each value changes the session, and how a
/// session that closes ended.
///
/// A conforming type is the protocol's own state for one session (a fresh value per session);
/// what every protocol shares (timing, phases, packets, image placement) lives in
/// ``OTASessionBuilder``. Adding a protocol is one new file with a type like this and one line in
/// ``OTATracker/profiles``.
public protocol OTAProfile: Sendable {
    /// The name sessions of this protocol carry.
    static var protocolName: OTAProtocol { get }
    /// Characteristics the protocol uses, and what each one is to it.
    static var endpoints: [BluetoothUUID: OTAEndpoint] { get }
    init()
    /// What `value` does to the session this protocol has open on its connection (`open`, or nil).
    static func admission(_ value: OTAValue, open: Self?) -> OTAAdmission
    /// Follows one value of an admitted session.
    mutating func feed(_ value: OTAValue, _ session: inout OTASessionBuilder)
    /// Sets the result of a session that closes: at its end, a disconnection, a new update, or the
    /// end of the capture (`why`).
    func finish(_ session: inout OTASessionBuilder, why: String, frame: Int)
}

/// What a characteristic is to an update protocol.
public struct OTAEndpoint: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Commands and their responses (Nordic control point, Silicon Labs control …).
    public static let control = OTAEndpoint(rawValue: "control")
    /// Image packets (Nordic packet characteristic, Silicon Labs data …).
    public static let packet = OTAEndpoint(rawValue: "packet")
    /// Whole MCUmgr SMP messages, reassembled from the SMP characteristic.
    public static let smp = OTAEndpoint(rawValue: "smp")
    /// A value a codec gave OTA roles to (`ota-start`, `ota-data`, `resend-request`, `ota-result` …).
    public static let roles = OTAEndpoint(rawValue: "roles")
    public var description: String { rawValue }
}

/// One value as a profile sees it: the event, the endpoint it arrived on, and its bytes (the
/// event's value, or a whole SMP message). `bytes` is borrowed for the call only: an unsafe pointer the profiles
/// slice without copying (every image packet goes through here), so it is `package`; outside, the value reads through
/// `first`, `count`, the subscript and `le16`/`le32`.
public struct OTAValue {
    public var event: AttributeValueEvent
    public var endpoint: OTAEndpoint
    package var bytes: UnsafeRawBufferPointer

    public var isControl: Bool { endpoint == .control }
    /// Sent by the capturing host (write), not received (notification).
    public var isSent: Bool { event.direction != .rx }
    public var first: UInt8? { bytes.first }
    public var count: Int { bytes.count }
    public subscript(_ i: Int) -> UInt8 { bytes[i] }

    /// A little-endian u32 at `at`, when the value holds it.
    public func le32(_ at: Int) -> Int? {
        guard at >= 0, bytes.count >= at + 4 else { return nil }
        return Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24
    }

    /// A little-endian u16 at `at`, when the value holds it.
    public func le16(_ at: Int) -> Int? {
        guard at >= 0, bytes.count >= at + 2 else { return nil }
        return Int(bytes[at]) | Int(bytes[at + 1]) << 8
    }
}

/// What a value does to a protocol's session on its connection.
public enum OTAAdmission: Sendable, Equatable {
    /// Not part of an update (a response with no session open, …).
    case ignore
    /// Joins the open session, or opens one.
    case join
    /// Closes the open session (`why`: "a new update") and opens a new one.
    case restart(String)
}

/// A session being followed: the ``OTASession`` it will become and the bookkeeping every protocol
/// shares (timing and stalls, phases, image packets, image placement by offset, the last failure).
public struct OTASessionBuilder: Sendable {
    public var session: OTASession
    var lastTime: Timestamp
    var lastFrame: Int
    var lastLabel = "start"
    var phase: Int?
    /// Highest image offset sent so far: bytes below it count as resent.
    public var maxOffsetSent = 0
    /// The last failure the device reported, and whether the latest response succeeded.
    public var lastError: OTAResult?
    public var lastResponseOK = true
    /// Set by a profile when the session ended by itself (a result): the tracker closes it.
    public var ended: String?
    let stallThreshold: Int64

    init(_ s: OTASession, frame: Int, time: Timestamp, stallThreshold: Int64) {
        session = s
        lastTime = time
        lastFrame = frame
        self.stallThreshold = stallThreshold
    }

    /// Counts a value for the session: wire bytes, link, stall detection; `label` names it in stalls.
    public mutating func account(_ e: AttributeValueEvent, _ label: String) {
        let gap = e.timestamp.microseconds(since: lastTime)
        if gap > stallThreshold, session.firstPacketFrame != nil {
            session.stalls.append(
                OTAStall(
                    afterFrame: lastFrame, resumeFrame: e.frame, gapMicroseconds: gap,
                    preceding: lastLabel))
        }
        lastTime = e.timestamp
        lastFrame = e.frame
        lastLabel = label
        session.endFrame = e.frame
        session.endTime = e.timestamp
        session.wireBytes += e.l2capBytes
        if session.links.last != e.link { session.links.append(e.link) }
        if let p = phase {
            session.phases[p].endFrame = e.frame
            session.phases[p].endTime = e.timestamp
        }
    }

    /// Starts a named phase unless it is the current one.
    public mutating func beginPhase(_ name: String, _ e: AttributeValueEvent) {
        if let p = phase, session.phases[p].name == name { return }
        session.phases.append(OTAPhase(name: name, frame: e.frame, time: e.timestamp))
        phase = session.phases.count - 1
    }

    /// Counts bytes of the current phase that are not image packets (a Nordic init packet).
    public mutating func countPhaseBytes(_ count: Int) {
        session.packets += 1
        session.packetBytes += count
        if let p = phase { session.phases[p].packets += 1; session.phases[p].bytes += count }
    }

    /// An image-carrying write of `count` bytes.
    public mutating func countPacket(_ e: AttributeValueEvent, bytes count: Int) {
        session.packets += 1
        session.packetBytes += count
        if session.firstPacketFrame == nil {
            session.firstPacketFrame = e.frame
            session.firstPacketTime = e.timestamp
        }
        session.lastPacketFrame = e.frame
        session.lastPacketTime = e.timestamp
        if let p = phase {
            session.phases[p].packets += 1
            session.phases[p].bytes += count
        }
    }

    /// Places image bytes at an absolute offset; bytes below the highest offset sent count as resent.
    /// `package`: `bytes` is a profile's borrowed slice of ``OTAValue/bytes``, copied into the image here.
    package mutating func place(_ bytes: UnsafeRawBufferPointer, at offset: Int, frame: Int) {
        if offset < maxOffsetSent {
            session.retransmittedPackets.append(offset)
            session.retransmittedBytes += min(bytes.count, maxOffsetSent - offset)
        }
        maxOffsetSent = max(maxOffsetSent, offset + bytes.count)
        if session.image.isEmpty && session.imageOffset == 0 && offset > 0 && session.resumedFromOffset == nil {
            session.findings.append(Finding(.warning, .otaNote("first image bytes at offset \(offset)"), frame: frame))
        }
        var position = offset - session.imageOffset
        if position < 0 {
            // Before what we hold: restart the image there.
            session.image = []
            session.imageOffset = offset
            position = 0
        }
        if position - session.image.count > Self.maximumGap {
            // A wild offset (a damaged or misread value): zero-filling up to it could take gigabytes.
            session.findings.append(
                Finding(
                    .warning,
                    .otaError("image bytes at offset \(offset), \(position - session.image.count) bytes beyond what was sent: ignored"),
                    frame: frame))
            return
        }
        if position > session.image.count {
            session.findings.append(
                Finding(
                    .warning, .otaError("gap in the image: bytes \(session.imageOffset + session.image.count)..<\(offset) never sent"),
                    frame: frame))
            session.image += [UInt8](repeating: 0, count: position - session.image.count)
        }
        let overlap = min(bytes.count, session.image.count - position)
        if overlap > 0 {
            session.image.replaceSubrange(position..<(position + overlap), with: bytes[0..<overlap])
        }
        if overlap < bytes.count { session.image.append(contentsOf: bytes[overlap...]) }
    }

    /// The largest hole ``place(_:at:frame:)`` fills with zeros (16 MiB); bytes further out are ignored with a finding.
    public static let maximumGap = 16 << 20
    /// The highest packet or block index kept (indices beyond are damaged values, ignored with a finding).
    public static let maximumIndex = 1 << 20

    /// Appends image bytes after what the session holds.
    package mutating func append(_ bytes: UnsafeRawBufferPointer, frame: Int) {
        place(bytes, at: session.imageOffset + session.image.count, frame: frame)
    }

    /// Records a failure the device reported for a request.
    public mutating func fail(code: Int?, name: String, finding: String, frame: Int) {
        lastError = .failure(code: code, name: name)
        lastResponseOK = false
        session.findings.append(Finding(.error, .otaError(finding), frame: frame))
    }

    /// The session never finished: cut by `why`.
    public mutating func cut(_ why: String, frame: Int) {
        session.result = .incomplete("cut by \(why)")
        session.findings.append(Finding(.warning, .otaCut(why), frame: frame))
    }

    /// The last failure when the latest response failed (the usual first check of a `finish`).
    public var standingFailure: OTAResult? { lastResponseOK ? nil : lastError }
}

/// A table of names for the codes of one protocol field (opcodes, result codes): data, not switches.
public struct OTACodeTable<Code: Hashable & Sendable>: Sendable {
    public var names: [Code: String]
    /// How an unknown code prints: `Result(0x2a)`.
    public var unknown: @Sendable (Code) -> String

    public init(_ names: [Code: String], unknown: @escaping @Sendable (Code) -> String) {
        self.names = names
        self.unknown = unknown
    }

    public subscript(_ code: Code) -> String { names[code] ?? unknown(code) }
}
