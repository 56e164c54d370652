import BLECore
import CPcap
import CZlib

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// pcap link types blescope reads (tcpdump.org LINKTYPE_ values).
public enum PcapLinkType {
    /// H4 without direction.
    public static let h4: UInt32 = 187
    /// H4 after a 4-byte big-endian direction pseudo-header (bit 0 set = received).
    public static let h4WithPHDR: UInt32 = 201
    /// Linux monitor: u16 BE adapter index, u16 BE opcode, payload.
    public static let linuxMonitor: UInt32 = 254
    /// LE link layer (access address first).
    public static let leLL: UInt32 = 251
    /// LE link layer after a 10-byte RF pseudo-header.
    public static let leLLWithRF: UInt32 = 256
    /// Nordic nRF Sniffer for Bluetooth LE.
    public static let nordicBLE: UInt32 = 272
    /// PPI (Per-Packet Information) wrapping LE link-layer packets: crackle and early Ubertooth tools write
    /// PPI with DLT 147 (USER0) for BTLE packets (access address onwards).
    public static let ppi: UInt32 = 192

    public static let supported: [UInt32] = [h4, h4WithPHDR, linuxMonitor, leLL, leLLWithRF, nordicBLE, ppi]

    public static func name(_ linkType: UInt32) -> String {
        switch linkType {
        case h4: "H4"
        case h4WithPHDR: "H4 with direction pseudo-header"
        case linuxMonitor: "Linux monitor"
        case leLL: "LE LL"
        case leLLWithRF: "LE LL with RF header"
        case nordicBLE: "Nordic BLE sniffer"
        case ppi: "PPI (LE link layer inside)"
        default: "link type \(linkType)"
        }
    }

    /// True for the over-the-air link types, whose records are `.linkLayer`.
    public static func isLinkLayer(_ linkType: UInt32) -> Bool {
        linkType == leLL || linkType == leLLWithRF || linkType == nordicBLE || linkType == ppi
    }
}

/// Reads pcapng (and, as a fallback, anything else libpcap opens) through libpcap, at nanosecond precision (the
/// timestamp in µs, the rest in `extraNanoseconds`).
///
/// The pcapng interface id of a packet is not exposed by libpcap: `controllerIndex` stays 0 (except for
/// LINKTYPE 254, whose pseudo-header names the adapter).
final class PcapReader: RecordReader {
    private let handle: OpaquePointer
    let linkType: UInt32
    private let isPcapng: Bool
    private let fileSize: Int64?
    private var walk = RecordWalk()
    /// Offset of the next classic pcap record (computed: 24 + Σ(16 + caplen)).
    private var nextOffset: Int64 = 24
    private var keepAlive: AnyObject?
    /// For gzip: (decompressed size, compressed size), to scale progress.
    private let gzipSizes: (Int64, Int64)?

    init(handle: OpaquePointer, isPcapng: Bool, fileSize: Int64?, keepAlive: AnyObject? = nil, gzipSizes: (Int64, Int64)? = nil) {
        self.handle = handle
        self.linkType = UInt32(bitPattern: pcap_datalink(handle))
        self.isPcapng = isPcapng
        self.fileSize = fileSize
        self.keepAlive = keepAlive
        self.gzipSizes = gzipSizes
    }

    deinit { pcap_close(handle) }

    var findings: [Finding] { walk.findings }

    var bytesConsumed: Int64 {
        let position = isPcapng ? (pcap_file(handle).map { Int64(ftello($0)) } ?? 0) : nextOffset
        if let (inner, outer) = gzipSizes, inner > 0 { return position * outer / inner }
        return position
    }

    func next() -> CaptureRecord? {
        if walk.stopped { return nil }
        var header: UnsafeMutablePointer<pcap_pkthdr>? = nil
        var data: UnsafePointer<UInt8>? = nil
        let recordOffset: Int64 = isPcapng ? (pcap_file(handle).map { Int64(ftello($0)) } ?? 0) : nextOffset
        let status = pcap_next_ex(handle, &header, &data)
        guard status == 1, let header else {
            walk.stopped = true
            if status == PCAP_ERROR {
                let message = String(cString: pcap_geterr(handle))
                reportError(message, offset: recordOffset)
            }
            return nil
        }
        walk.frame &+= 1
        let frame = walk.frame
        let caplen = Int(header.pointee.caplen)
        let len = Int(header.pointee.len)
        nextOffset &+= 16 &+ Int64(caplen)
        if caplen < len { walk.truncation.note(frame: frame) }
        let tv = header.pointee.ts
        // The handle is opened at nanosecond precision (tv_usec holds nanoseconds): the timestamp in µs, the rest kept.
        let nanoseconds = Int64(tv.tv_usec)
        let timestamp = Timestamp(microseconds: Int64(tv.tv_sec) &* 1_000_000 &+ nanoseconds / 1000)
        let packet = UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : caplen)
        var record = CaptureRecord(
            frame: frame, timestamp: timestamp, direction: .unknown, kind: .other,
            originalLength: len, includedLength: caplen, fileOffset: recordOffset,
            rawType: linkType, linkType: linkType, bytes: packet)
        record.stored = packet
        record.extraNanoseconds = UInt16(truncatingIfNeeded: nanoseconds % 1000)
        PcapLinkType.interpret(&record, packet: packet)
        if let indicator = PcapLinkType.nonHCIIndicator(record, packet: packet) {
            walk.nonHCI.note(frame: frame, indicator: indicator)
        }
        return record
    }

    /// Turns libpcap's "truncated dump file; tried to read N … bytes, only got M" into the common finding.
    private func reportError(_ message: String, offset: Int64) {
        if message.contains("truncated") {
            let numbers = message.split(whereSeparator: { !$0.isNumber }).compactMap { Int($0) }
            if numbers.count >= 2 {
                var needed = numbers[numbers.count - 2]
                var got = numbers[numbers.count - 1]
                if !isPcapng && message.contains("captured bytes") { needed += 16; got += 16 }
                walk.stop(truncatedAt: offset, needed: needed, available: got)
                return
            }
        }
        if message.contains("larger than") || message.contains("bigger than") || message.contains("length") {
            walk.stop(invalidLength: "libpcap: \(message)", offset: offset)
        } else {
            walk.stop(readError: "libpcap: \(message)", offset: offset)
        }
    }
}

extension PcapLinkType {
    /// The H4 packet indicator of an H4 record (LINKTYPE 187, or 201 after its 4-octet direction) that is no HCI
    /// packet type, which ``interpret(_:packet:)`` left as `.other`; nil for every other record.
    @inline(__always)
    static func nonHCIIndicator(_ record: CaptureRecord, packet: UnsafeRawBufferPointer) -> UInt8? {
        guard record.kind == .other else { return nil }
        switch record.linkType {
        case PcapLinkType.h4WithPHDR: return packet.count >= 5 ? packet[4] : nil
        case PcapLinkType.h4: return packet.count >= 1 ? packet[0] : nil
        default: return nil
        }
    }

    /// Fills kind, direction, controller and payload of a pcap record from its link type.
    @inline(__always)
    static func interpret(_ record: inout CaptureRecord, packet: UnsafeRawBufferPointer) {
        let linkType = record.linkType
        switch linkType {
        case PcapLinkType.h4WithPHDR:
            guard packet.count >= 5 else { break }
            let direction = UnsafeRawPointer(packet.baseAddress!).be32(0)
            record.direction = direction & 1 != 0 ? .rx : .tx
            let type = packet[4]
            if type >= 1 && type <= 5 {
                record.kind = RecordKind(rawValue: type)
                record.bytes = UnsafeRawBufferPointer(rebasing: packet[5...])
            } else {
                record.bytes = UnsafeRawBufferPointer(rebasing: packet[4...])
            }
        case PcapLinkType.h4:
            guard packet.count >= 1 else { break }
            let type = packet[0]
            if type >= 1 && type <= 5 {
                record.kind = RecordKind(rawValue: type)
                record.bytes = UnsafeRawBufferPointer(rebasing: packet[1...])
                if record.kind == .command { record.direction = .tx } else if record.kind == .event { record.direction = .rx }
            }
        case PcapLinkType.linuxMonitor:
            guard packet.count >= 4 else { break }
            let p = UnsafeRawPointer(packet.baseAddress!)
            let opcode = p.be16(2)
            let (kind, direction) = LinuxMonitor.classify(opcode)
            record.kind = kind
            record.direction = direction
            record.controllerIndex = p.be16(0)
            record.rawType = UInt32(opcode)
            record.bytes = UnsafeRawBufferPointer(rebasing: packet[4...])
        default:
            record.kind = .linkLayer
        }
    }
}
