import BLECore
import BLESecurity

/// The firmware-update protocol of a session.
public struct OTAProtocol: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    /// Nordic Secure DFU (service 0xFE59), nRF5 SDK ≥ 12 / nRF Connect SDK.
    public static let nordicSecureDFU = OTAProtocol(rawValue: "nordic-secure-dfu")
    /// Nordic legacy DFU (service 00001530-1212-EFDE-1523-785FEABCD123), nRF5 SDK ≤ 11.
    public static let nordicLegacyDFU = OTAProtocol(rawValue: "nordic-legacy-dfu")
    /// MCUmgr SMP image upload (group 1, command 1).
    public static let mcumgr = OTAProtocol(rawValue: "mcumgr-smp")
    /// Silicon Labs Gecko bootloader OTA.
    public static let siliconLabs = OTAProtocol(rawValue: "silabs-ota")
    /// Nordic Buttonless DFU: the application reboots into its bootloader (joined to the Secure DFU that follows).
    public static let nordicButtonlessDFU = OTAProtocol(rawValue: "nordic-buttonless-dfu")
    /// TI OAD (enhanced, BLE5-Stack), service F000FFC0-0451-4000-B000-000000000000.
    public static let tiOAD = OTAProtocol(rawValue: "ti-oad")
    /// Dialog / Renesas SUOTA, service 0xFEF5.
    public static let dialogSUOTA = OTAProtocol(rawValue: "dialog-suota")
    /// Espressif BLE OTA (esp-iot-solution `ble_ota`), service 0x8018.
    public static let espressifBLEOTA = OTAProtocol(rawValue: "esp-ble-ota")
    /// Telink BLE SDK OTA, service 00010203-0405-0607-0809-0A0B0C0D1912.
    public static let telinkOTA = OTAProtocol(rawValue: "telink-ota")
    /// Cypress/Infineon PSoC bootloader, Bootloader Service 00060000-F8CE-11E4-ABF4-0002A5D5C51B.
    public static let cypressBootloader = OTAProtocol(rawValue: "cypress-bootloader")
    /// A vendor protocol described by a YAML codec with `ota-*` roles.
    public static let vendor = OTAProtocol(rawValue: "vendor")
    public var description: String { rawValue }
}

/// How an update ended.
public enum OTAResult: Hashable, Sendable, CustomStringConvertible {
    case success
    /// The device (or the phone) reported a failure; `code` is the raw result code when there is one.
    case failure(code: Int?, name: String)
    /// Stopped on purpose (Nordic Abort, a reset command).
    case aborted(String)
    /// Never finished: cut by a disconnection or the end of the capture, or no outcome seen.
    case incomplete(String)

    /// `success`, `failure`, `aborted`, `incomplete`.
    public var label: String {
        switch self {
        case .success: "success"
        case .failure: "failure"
        case .aborted: "aborted"
        case .incomplete: "incomplete"
        }
    }

    public var detail: String? {
        switch self {
        case .success: nil
        case let .failure(code, name): code.map { "\(name) (\(hex(UInt8(truncatingIfNeeded: $0))))" } ?? name
        case let .aborted(s), let .incomplete(s): s
        }
    }

    public var description: String { detail.map { "\(label): \($0)" } ?? label }
}

/// A named stretch of an update (init packet, data, validate …).
public struct OTAPhase: Hashable, Sendable {
    public var name: String
    public var startFrame: Int
    public var endFrame: Int
    public var startTime: Timestamp
    public var endTime: Timestamp
    /// Packets written and image (or init packet) bytes carried during the phase.
    public var packets: Int = 0
    public var bytes: Int = 0

    public init(name: String, frame: Int, time: Timestamp) {
        self.name = name
        startFrame = frame
        endFrame = frame
        startTime = time
        endTime = time
    }

    public var durationMicroseconds: Int64 { endTime.microseconds(since: startTime) }
}

/// A Nordic Secure DFU object (Create … Execute), or a legacy DFU part.
public struct OTAObject: Hashable, Sendable {
    /// 1 command (init packet), 2 data.
    public var type: UInt8
    /// Offset of the object in its stream (init packet or image).
    public var offset: Int
    public var size: Int
    public var createFrame: Int
    public var packets: Int = 0
    public var bytes: Int = 0
    /// Time from the Create response (or request) to the first packet: the device erasing flash.
    public var createPauseMicroseconds: Int64?
    /// CRC-32 computed over the bytes actually sent (cumulative per object type) when the device reported its CRC.
    public var computedCRC: UInt32?
    public var reportedCRC: UInt32?
    public var reportedOffset: Int?
    public var executed = false

    public init(type: UInt8, offset: Int, size: Int, createFrame: Int) {
        self.type = type
        self.offset = offset
        self.size = size
        self.createFrame = createFrame
    }

    public var crcMatches: Bool? {
        guard let c = computedCRC, let r = reportedCRC else { return nil }
        return c == r
    }
}

/// A pause in an update longer than the tracker's stall threshold.
public struct OTAStall: Hashable, Sendable {
    /// The last session event before the pause and the first after it.
    public var afterFrame: Int
    public var resumeFrame: Int
    public var gapMicroseconds: Int64
    /// What happened just before: `Create data object`, `packet 37`, `CRC request` …
    public var preceding: String
}

/// One connection of an update: the application's (buttonless DFU), the bootloader's, or the only one.
public struct OTAConnectionStep: Hashable, Sendable {
    /// `application` (asked to enter the bootloader), `bootloader` (took the image), or `update`.
    public var role: String
    public var connectionNumber: Int
    public var connection: UInt16
    public var peerAddress: String?
    public var startFrame: Int
    public var startTime: Timestamp
    /// Nil when the capture ended with the connection open.
    public var endFrame: Int?
    public var endTime: Timestamp?
    /// Why the connection ended (`Remote User Terminated Connection`, `Connection Timeout` …).
    public var endReason: String?
    /// From the previous connection's end to this one's start (µs); nil for the first.
    public var gapMicroseconds: Int64?

    public init(
        role: String, connectionNumber: Int, connection: UInt16, peerAddress: String?, startFrame: Int,
        startTime: Timestamp, endFrame: Int?, endTime: Timestamp?, endReason: String?, gapMicroseconds: Int64? = nil
    ) {
        self.role = role
        self.connectionNumber = connectionNumber
        self.connection = connection
        self.peerAddress = peerAddress
        self.startFrame = startFrame
        self.startTime = startTime
        self.endFrame = endFrame
        self.endTime = endTime
        self.endReason = endReason
        self.gapMicroseconds = gapMicroseconds
    }
}

/// A packet the device asked for again, and the frame of the copy sent after the request.
public struct OTAResend: Hashable, Sendable {
    /// Packet index (vendor protocols) the device asked for.
    public var index: Int
    public var requestFrame: Int
    /// The packet sent again after the request; nil when it never was.
    public var resentFrame: Int?

    public init(index: Int, requestFrame: Int, resentFrame: Int? = nil) {
        self.index = index
        self.requestFrame = requestFrame
        self.resentFrame = resentFrame
    }
}

/// One firmware update seen in a capture.
public struct OTASession: Hashable, Sendable {
    public var protocolName: OTAProtocol
    /// Codec name for vendor sessions; the names joined by `+` when several specs decoded its values.
    public var codec: String?
    public var connection: UInt16
    public var connectionNumber: Int
    public var startFrame: Int
    public var startTime: Timestamp
    public var endFrame: Int
    public var endTime: Timestamp
    public var phases: [OTAPhase] = []
    public var objects: [OTAObject] = []
    /// The image as rebuilt from the bytes sent (the last copy of any resent part).
    public var image: [UInt8] = []
    /// Offset of `image[0]` in the firmware (non-zero when an update resumed).
    public var imageOffset = 0
    /// Nordic init packet (command object) / legacy init packet.
    public var initPacket: [UInt8] = []
    /// Size announced by the protocol (legacy start sizes, MCUmgr `len`), and packet count (`total-count`).
    public var expectedSize: Int?
    public var expectedPackets: Int?
    /// Image-carrying writes (init packet writes included for Nordic).
    public var packets = 0
    /// Bytes those writes carried (payload only).
    public var packetBytes = 0
    /// Packets sent again: indices (vendor) or byte offsets (Nordic, MCUmgr).
    public var retransmittedPackets: [Int] = []
    /// Whether ``retransmittedPackets`` holds indices or offsets.
    public var retransmissionUnit = "offset"
    /// Bytes sent more than once.
    public var retransmittedBytes = 0
    /// Indices (or offsets) the device asked for again.
    public var resendRequests: [Int] = []
    /// Each resend request with the packet that answered it.
    public var resends: [OTAResend] = []
    /// Nordic packet receipt notifications.
    public var receipts = 0
    public var packetReceiptInterval: Int?
    /// Nordic Secure DFU: the device already had this many bytes (Select returned an offset).
    public var resumedFromOffset: Int?
    public var stalls: [OTAStall] = []
    /// The connections the update went through, in order, with why each ended (filled by
    /// ``OTAUpdateStory/link(_:connections:)``).
    public var connections: [OTAConnectionStep] = []
    /// Distinct link states seen during the session, in order.
    public var links: [LinkSnapshot] = []
    /// Bytes on the link for every PDU of the session (L2CAP header + ATT PDU), both directions.
    public var wireBytes = 0
    /// First and last image packet.
    public var firstPacketFrame: Int?
    public var lastPacketFrame: Int?
    public var firstPacketTime: Timestamp?
    public var lastPacketTime: Timestamp?
    public var result: OTAResult = .incomplete("no outcome seen")
    public var findings: [Finding] = []

    public init(
        protocolName: OTAProtocol, codec: String? = nil, connection: UInt16, connectionNumber: Int,
        frame: Int, time: Timestamp
    ) {
        self.protocolName = protocolName
        self.codec = codec
        self.connection = connection
        self.connectionNumber = connectionNumber
        startFrame = frame
        startTime = time
        endFrame = frame
        endTime = time
    }

    public var durationMicroseconds: Int64 { endTime.microseconds(since: startTime) }

    /// First image packet to last image packet, in µs.
    public var transferMicroseconds: Int64? {
        guard let a = firstPacketTime, let b = lastPacketTime else { return nil }
        return b.microseconds(since: a)
    }

    /// Image bits per second over the transfer time; nil when the packets span less than one connection interval
    /// (7.5 ms, the shortest, when the interval is not known): packets handed to the controller in one burst say
    /// nothing of the link's rate (a cut capture's 3 packets within 44 µs read as 88,727 kbps).
    public var throughputBitsPerSecond: Double? {
        guard let t = ratedTransferMicroseconds else { return nil }
        return Double(image.count) * 8 * 1_000_000 / Double(t)
    }

    /// ``transferMicroseconds`` when long enough to rate (at least one connection interval).
    public var ratedTransferMicroseconds: Int64? {
        guard let t = transferMicroseconds, t >= Int64(max(connectionIntervalMicroseconds ?? 0, 7_500)) else { return nil }
        return t
    }

    /// Image bytes / bytes on the link (0…1).
    public var goodput: Double? {
        wireBytes > 0 ? Double(image.count) / Double(wireBytes) : nil
    }

    /// Connection interval in µs during the transfer (the last one seen).
    public var connectionIntervalMicroseconds: Int? {
        links.last(where: { $0.parameters != nil })?.parameters?.intervalMicroseconds
    }

    /// Packets per connection event: packets / (transfer time / CI).
    public var packetsPerConnectionEvent: Double? {
        guard let t = ratedTransferMicroseconds, let ci = connectionIntervalMicroseconds, ci > 0 else { return nil }
        return Double(packets) / (Double(t) / Double(ci))
    }

    public var imageSHA256: String { SHA256.hexDigest(image) }
    public var imageCRC32: UInt32 { CRC32.checksum(image) }

    /// Compares the rebuilt image with a known one.
    public func compare(expected: [UInt8]) -> ImageComparison { OTASession.compare(image: image, expected: expected) }

    /// Size, SHA-256, CRC-32 and the first differing offset of two images.
    public static func compare(image: [UInt8], expected: [UInt8]) -> ImageComparison {
        var first: Int?
        let n = min(image.count, expected.count)
        var i = 0
        while i < n {
            if image[i] != expected[i] { first = i; break }
            i += 1
        }
        if first == nil, image.count != expected.count { first = n }
        return ImageComparison(
            size: image.count, expectedSize: expected.count,
            sha256: SHA256.hexDigest(image), expectedSHA256: SHA256.hexDigest(expected),
            crc32: CRC32.checksum(image), expectedCRC32: CRC32.checksum(expected),
            firstDifference: first)
    }
}

/// The result of ``OTASession/compare(image:expected:)``.
public struct ImageComparison: Hashable, Sendable, CustomStringConvertible {
    public var size: Int
    public var expectedSize: Int
    public var sha256: String
    public var expectedSHA256: String
    public var crc32: UInt32
    public var expectedCRC32: UInt32
    /// First offset where the images differ (the shorter length when one is a prefix of the other).
    public var firstDifference: Int?

    public var matches: Bool { firstDifference == nil }

    public var description: String {
        if matches { return "identical: \(size) bytes, SHA-256 \(sha256), CRC-32 \(hex(crc32))" }
        return "different: \(size) vs \(expectedSize) bytes, first difference at offset \(firstDifference ?? 0), "
            + "SHA-256 \(sha256) vs \(expectedSHA256), CRC-32 \(hex(crc32)) vs \(hex(expectedCRC32))"
    }
}

extension FindingKind {
    public static func otaCRCMismatch(computed: UInt32, reported: UInt32, offset: Int) -> FindingKind {
        FindingKind(
            .otaCRCMismatch,
            message: "device CRC-32 \(hex(reported)) at offset \(offset) differs from the bytes sent (\(hex(computed)))")
    }
    public static func otaOffsetMismatch(device: Int, sent: Int) -> FindingKind {
        FindingKind(.otaOffsetMismatch, message: "device reports \(device) bytes, \(sent) were sent")
    }
    public static func otaError(_ what: String) -> FindingKind {
        FindingKind(.otaError, message: what)
    }
    public static func otaNote(_ what: String) -> FindingKind {
        FindingKind(.otaNote, message: what)
    }
    public static func otaCut(_ why: String) -> FindingKind {
        FindingKind(.otaIncomplete, message: "update cut by \(why)")
    }
    public static func otaMissingPackets(_ indices: [Int]) -> FindingKind {
        FindingKind(.otaMissingPackets, message: "packet(s) never sent: \(indexList(indices))")
    }
}
