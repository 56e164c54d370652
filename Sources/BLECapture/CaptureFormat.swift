import BLECore

/// The container format of a capture file, sniffed from its content (never from the extension).
///
/// An open struct: `name` is the short identifier used on the command line and in reports.
public struct CaptureFormat: Hashable, Sendable, CustomStringConvertible {
    /// Short identifier: `btsnoop`, `pcap`, `pcapng`, `pklg`, `btsnooz`, `hcidump`.
    public var name: String
    public init(name: String) { self.name = name }

    /// btsnoop v1 (RFC 1761 snoop variant): Android `btsnoop_hci.log`, BlueZ `btmon -w`.
    public static let btsnoop = CaptureFormat(name: "btsnoop")
    /// Classic libpcap file (any byte order, µs or ns timestamps).
    public static let pcap = CaptureFormat(name: "pcap")
    /// pcapng (``PcapngReader``: every interface, section and byte order).
    public static let pcapng = CaptureFormat(name: "pcapng")
    /// Apple PacketLogger `.pklg` (big- or little-endian records, no file header).
    public static let packetLogger = CaptureFormat(name: "pklg")
    /// Android bug report carrying a btsnooz block between `BTSNOOP_LOG_SUMMARY` markers.
    public static let btsnooz = CaptureFormat(name: "btsnooz")
    /// BlueZ hcidump's own format (`hcidump -w`; ``HCIDump``).
    public static let hcidump = CaptureFormat(name: "hcidump")

    public var description: String { name }
}

/// Why a file could not be opened as a capture; the CLI prints ``description`` and exits 2.
public struct CaptureOpenError: Error, Hashable, Sendable, CustomStringConvertible {
    public var path: String
    public var message: String
    /// The file is readable but holds no capture (no known format, or nothing at all): a folder's notes and scripts,
    /// which commands skip when they were not named explicitly.
    public var isNotACapture: Bool
    public init(path: String, message: String, isNotACapture: Bool = false) {
        self.path = path
        self.message = message
        self.isNotACapture = isNotACapture
    }
    /// `FILE: message`.
    public var description: String { "\(path): \(message)" }
}

extension FindingKind {
    /// The file ends inside a record: everything before it was read.
    public static func captureTruncatedFile(frame: Int, offset: Int64, needed: Int, available: Int) -> FindingKind {
        FindingKind(
            .captureTruncatedFile,
            message: "file ends inside record \(frame): header at offset \(offset) needs \(needed) bytes, \(available) available")
    }

    /// A record header states a length the format does not allow; reading stopped there.
    public static func captureInvalidRecordLength(frame: Int, offset: Int64, detail: String) -> FindingKind {
        FindingKind(
            .captureInvalidRecordLength,
            message: "record \(frame) at offset \(offset): \(detail); reading stopped here")
    }

    /// Records whose payload the capturer cut (included length < original length).
    public static func captureTruncatedRecords(count: Int, first: Int) -> FindingKind {
        FindingKind(
            .captureTruncatedRecords,
            message:
                "\(count) record\(count == 1 ? "" : "s") cut by the capturer (included length < original length), first is frame \(first)")
    }

    /// Records whose sub-second field is out of range (pcap: ts_usec ≥ 1,000,000, or ts_nsec ≥ 1,000,000,000 in a
    /// nanosecond file). The format defines the field as an unsigned count below one second; a writer that broke
    /// that rule leaves times that are wrong by seconds or hours, so the analysis says so instead of trusting them.
    public static func captureSubsecondOutOfRange(count: Int, first: Int, offset: Int64, value: UInt32, unit: String)
        -> FindingKind
    {
        FindingKind(
            .captureTimestampOutOfRange,
            message:
                "\(count) record\(count == 1 ? "" : "s") with a \(unit) field of one second or more, first is frame \(first) "
                + "(header at offset \(offset), \(unit) \(value)): read as the format defines it (seconds + field), "
                + "so their times and the durations across them are wrong")
    }

    /// Records of an H4 datalink whose packet indicator is not an HCI packet type (0x01–0x05): not decoded.
    public static func captureNonHCIIndicator(count: Int, first: Int, indicator: UInt8) -> FindingKind {
        FindingKind(
            .captureNonHCIRecords,
            message:
                "\(count) record\(count == 1 ? "" : "s") with an H4 packet indicator that is no HCI packet type "
                + "(0x01–0x05, Core Vol 4, Part A, 2), first is frame \(first) (indicator \(hex(indicator))): "
                + "kept as 'other', not decoded; another tool's records, not HCI traffic")
    }

    /// The capture library or decompressor reported an error; reading stopped there.
    public static func captureReadError(_ detail: String) -> FindingKind {
        FindingKind(.captureReadError, message: detail)
    }

    /// Something about the file worth knowing that is not an error.
    public static func captureNote(_ detail: String) -> FindingKind {
        FindingKind(.captureNote, message: detail)
    }
}
