import BLECore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A format to write records in.
public enum CaptureOutputFormat: Hashable, Sendable, CustomStringConvertible {
    /// btsnoop v1 with datalink 1001 (H1), 1002 (H4) or 2001 (Linux monitor).
    case btsnoop(datalink: UInt32)
    /// Classic pcap, µs timestamps, little-endian, with link type 201 (H4 + direction), 187, 254, or 251/256/272 for link-layer records.
    case pcap(linkType: UInt32)
    /// Apple PacketLogger records in either byte order.
    case packetLogger(bigEndian: Bool)

    public var description: String {
        switch self {
        case let .btsnoop(d): "btsnoop (datalink \(d))"
        case let .pcap(l): "pcap (link type \(l))"
        case let .packetLogger(be): "pklg (\(be ? "big" : "little")-endian)"
        }
    }

    /// Whether the format can hold records of this kind (others are skipped and counted).
    public func canWrite(_ kind: RecordKind) -> Bool {
        switch self {
        case .btsnoop(datalink: BTSnoop.datalinkH1): kind == .command || kind == .event || kind == .acl
        case .btsnoop(datalink: BTSnoop.datalinkMonitor): kind != .linkLayer
        case .btsnoop: kind.isHCI || kind == .other
        case let .pcap(lt) where PcapLinkType.isLinkLayer(lt): kind == .linkLayer
        case .pcap(linkType: PcapLinkType.linuxMonitor): kind != .linkLayer
        case .pcap: kind.isHCI
        case .packetLogger: kind.isHCI || kind == .text || kind == .other
        }
    }
}

/// Why writing failed.
public struct CaptureWriteError: Error, Hashable, Sendable, CustomStringConvertible {
    public var path: String
    public var message: String
    public var description: String { "\(path): \(message)" }
}

/// Writers for whole record lists (fixtures, tests); see ``CaptureFileWriter`` for streaming.
public enum CaptureWriter {
    /// btsnoop bytes (datalink 1001, 1002 or 2001); records the datalink cannot hold are skipped.
    public static func btsnoop(_ records: [OwnedRecord], datalink: UInt32 = BTSnoop.datalinkH4) -> [UInt8] {
        write(records, as: .btsnoop(datalink: datalink))
    }

    /// Classic pcap bytes (µs, little-endian) with the given link type (201 by default).
    public static func pcap(_ records: [OwnedRecord], linkType: UInt32 = PcapLinkType.h4WithPHDR) -> [UInt8] {
        write(records, as: .pcap(linkType: linkType))
    }

    /// PacketLogger bytes, big- or little-endian records.
    public static func packetLogger(_ records: [OwnedRecord], bigEndian: Bool) -> [UInt8] {
        write(records, as: .packetLogger(bigEndian: bigEndian))
    }

    public static func write(_ records: [OwnedRecord], as format: CaptureOutputFormat) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(64 + records.reduce(0) { $0 + $1.bytes.count + 32 })
        appendFileHeader(format, to: &out)
        for r in records {
            r.bytes.withUnsafeBytes { bytes in
                _ = appendRecord(
                    format, timestamp: r.timestamp, direction: r.direction, kind: r.kind,
                    controllerIndex: r.controllerIndex, originalLength: r.originalLength, rawType: r.rawType,
                    bytes: bytes, to: &out)
            }
        }
        return out
    }

    static func appendFileHeader(_ format: CaptureOutputFormat, to out: inout [UInt8]) {
        switch format {
        case let .btsnoop(datalink):
            out.append(contentsOf: BTSnoop.magic)
            appendBE(UInt32(1), &out)
            appendBE(datalink, &out)
        case let .pcap(linkType):
            appendLE(UInt32(0xA1B2_C3D4), &out)
            appendLE(UInt16(2), &out)
            appendLE(UInt16(4), &out)
            appendLE(UInt32(0), &out)  // thiszone
            appendLE(UInt32(0), &out)  // sigfigs
            appendLE(UInt32(BTSnoop.maxRecordLength), &out)  // snaplen
            appendLE(linkType, &out)
        case .packetLogger:
            break
        }
    }

    /// Appends one record; false (nothing written) when the format cannot hold it.
    /// `originalLength` is the payload's original length (as ``OwnedRecord`` keeps it).
    static func appendRecord(
        _ format: CaptureOutputFormat, timestamp: Timestamp, direction: Direction, kind: RecordKind,
        controllerIndex: UInt16, originalLength: Int, rawType: UInt32,
        bytes: UnsafeRawBufferPointer, to out: inout [UInt8]
    ) -> Bool {
        guard format.canWrite(kind) else { return false }
        let payloadOriginal = max(originalLength, bytes.count)
        let us = timestamp.microseconds
        switch format {
        case let .btsnoop(datalink):
            var prefix: [UInt8] = []
            var flags: UInt32
            switch datalink {
            case BTSnoop.datalinkMonitor:
                guard let opcode = LinuxMonitor.opcode(kind: kind, direction: direction, rawType: rawType) else { return false }
                flags = UInt32(controllerIndex) << 16 | UInt32(opcode)
            case BTSnoop.datalinkH1:
                let rx: UInt32 = direction == .rx || kind == .event ? 1 : 0
                flags = (kind == .command || kind == .event ? 2 : 0) | (kind == .command ? 0 : rx)
            default:
                flags = direction == .rx ? 1 : 0
                if kind == .command || kind == .event { flags |= 2 }
                if kind.isHCI { prefix = [kind.rawValue] }
            }
            appendBE(UInt32(truncatingIfNeeded: payloadOriginal + prefix.count), &out)
            appendBE(UInt32(truncatingIfNeeded: bytes.count + prefix.count), &out)
            appendBE(flags, &out)
            appendBE(UInt32(0), &out)
            appendBE(UInt64(bitPattern: us &+ BTSnoop.epochOffset), &out)
            out.append(contentsOf: prefix)
            out.append(contentsOf: bytes)
        case let .pcap(linkType):
            var prefix: [UInt8] = []
            switch linkType {
            case PcapLinkType.h4WithPHDR:
                prefix = [0, 0, 0, direction == .rx || kind == .event ? 1 : 0, kind.rawValue]
            case PcapLinkType.h4:
                prefix = [kind.rawValue]
            case PcapLinkType.linuxMonitor:
                guard let opcode = LinuxMonitor.opcode(kind: kind, direction: direction, rawType: rawType) else { return false }
                prefix = [UInt8(controllerIndex >> 8), UInt8(controllerIndex & 0xFF), UInt8(opcode >> 8), UInt8(opcode & 0xFF)]
            default:
                break
            }
            var seconds = us / 1_000_000
            var micros = us % 1_000_000
            if micros < 0 { micros += 1_000_000; seconds -= 1 }
            appendLE(UInt32(truncatingIfNeeded: seconds), &out)
            appendLE(UInt32(truncatingIfNeeded: micros), &out)
            appendLE(UInt32(truncatingIfNeeded: bytes.count + prefix.count), &out)
            appendLE(UInt32(truncatingIfNeeded: payloadOriginal + prefix.count), &out)
            out.append(contentsOf: prefix)
            out.append(contentsOf: bytes)
        case let .packetLogger(bigEndian):
            guard let type = PacketLogger.type(kind: kind, direction: direction, rawType: rawType) else { return false }
            var seconds = us / 1_000_000
            var micros = us % 1_000_000
            if micros < 0 { micros += 1_000_000; seconds -= 1 }
            let length = UInt32(truncatingIfNeeded: bytes.count + PacketLogger.minLength)
            let fields = [length, UInt32(truncatingIfNeeded: seconds), UInt32(truncatingIfNeeded: micros)]
            for f in fields { if bigEndian { appendBE(f, &out) } else { appendLE(f, &out) } }
            out.append(type)
            out.append(contentsOf: bytes)
        }
        return true
    }

    @inline(__always) static func appendBE<T: FixedWidthInteger>(_ v: T, _ out: inout [UInt8]) {
        withUnsafeBytes(of: v.bigEndian) { out.append(contentsOf: $0) }
    }
    @inline(__always) static func appendLE<T: FixedWidthInteger>(_ v: T, _ out: inout [UInt8]) {
        withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) }
    }
}

/// Writes records to a file as they come (used by `blescope convert`).
///
/// ```swift
/// let writer = try CaptureFileWriter(path: "out.pcap", format: .pcap(linkType: 201))
/// while let r = file.next() { try writer.write(r) }
/// try writer.close()
/// ```
public final class CaptureFileWriter {
    public let path: String
    public let format: CaptureOutputFormat
    /// Records written and records skipped because the format cannot hold their kind.
    public private(set) var recordsWritten = 0
    public private(set) var recordsSkipped = 0
    private var fd: Int32
    private var buffer: [UInt8] = []
    private static let flushSize = 1 << 20

    /// Creates (truncates) `path`; "-" writes to standard output.
    public init(path: String, format: CaptureOutputFormat) throws(CaptureWriteError) {
        self.path = path
        self.format = format
        fd = try openForWriting(path)
        buffer.reserveCapacity(CaptureFileWriter.flushSize + 70_000)
        CaptureWriter.appendFileHeader(format, to: &buffer)
    }

    deinit { if fd >= 0 { try? close() } }

    /// Writes one record as read (its bytes are copied before `write` returns).
    public func write(_ record: CaptureRecord) throws(CaptureWriteError) {
        let original =
            record.kind == .text
            ? record.bytes.count
            : record.originalLength - (record.includedLength - record.bytes.count)
        let ok = CaptureWriter.appendRecord(
            format, timestamp: record.timestamp, direction: record.direction, kind: record.kind,
            controllerIndex: record.controllerIndex, originalLength: original,
            rawType: record.rawType, bytes: record.bytes, to: &buffer)
        if ok { recordsWritten += 1 } else { recordsSkipped += 1 }
        if buffer.count >= CaptureFileWriter.flushSize { try flush() }
    }

    /// Writes one owned record.
    public func write(_ record: OwnedRecord) throws(CaptureWriteError) {
        let ok = record.bytes.withUnsafeBytes { bytes in
            CaptureWriter.appendRecord(
                format, timestamp: record.timestamp, direction: record.direction, kind: record.kind,
                controllerIndex: record.controllerIndex, originalLength: record.originalLength,
                rawType: record.rawType, bytes: bytes, to: &buffer)
        }
        if ok { recordsWritten += 1 } else { recordsSkipped += 1 }
        if buffer.count >= CaptureFileWriter.flushSize { try flush() }
    }

    private func flush() throws(CaptureWriteError) {
        var done = 0
        let failure: Int32? = buffer.withUnsafeBytes { raw -> Int32? in
            while done < raw.count {
                let n = posixWrite(fd, raw.baseAddress! + done, raw.count - done)
                if n < 0 { if errno == EINTR { continue }; return errno }
                done += n
            }
            return nil
        }
        buffer.removeAll(keepingCapacity: true)
        if let failure { throw CaptureWriteError(path: path, message: String(cString: strerror(failure))) }
    }

    /// Flushes and closes the file.
    public func close() throws(CaptureWriteError) {
        guard fd >= 0 else { return }
        defer {
            #if canImport(Glibc)
            _ = Glibc.close(fd)
            #else
            _ = Darwin.close(fd)
            #endif
            fd = -1
        }
        try flush()
    }
}

@inline(__always) private func posixWrite(_ fd: Int32, _ p: UnsafeRawPointer, _ n: Int) -> Int {
    #if canImport(Glibc)
    return Glibc.write(fd, p, n)
    #else
    return Darwin.write(fd, p, n)
    #endif
}

/// Creates (truncates) `path` for writing, or duplicates standard output for "-": the one way the capture writers open
/// their output.
func openForWriting(_ path: String) throws(CaptureWriteError) -> Int32 {
    let fd: Int32
    if path == "-" {
        fd = dup(1)
    } else {
        #if canImport(Glibc)
        fd = Glibc.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        #else
        fd = Darwin.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        #endif
    }
    guard fd >= 0 else { throw CaptureWriteError(path: path, message: String(cString: strerror(errno))) }
    return fd
}
