import BLECore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a capture as pcapng (IETF draft-ietf-opsawg-pcapng), every record of the input as one Enhanced Packet
/// Block in the input's order (so frame numbers stay those of the input), each with its comments (`opt_comment`),
/// and a comment on the Section Header Block (`blescope convert --annotate`).
///
/// Each record keeps the bytes Wireshark shows for it in the input: a pcap or pcapng packet is written as stored
/// under its link type; a btsnoop H4 record under LINKTYPE 201 (the direction pseudo-header, which Wireshark does not
/// count in the frame's length, then the record); a Linux monitor record under 254; a PacketLogger HCI record under
/// 201 (its type byte becomes the H4 indicator); a PacketLogger note under 254 as a system note (the text and a NUL,
/// as long as the record), so Wireshark shows it; its syslog, LMP and other records under 147 (USER0) as stored
/// (type byte and payload). An interface is declared for each link type as it first occurs; a pcap or pcapng input's
/// packet keeps its own interface's link type, and a pcapng input's interfaces stay apart (a Bluetooth interface
/// beside an Ethernet one stays two interfaces), with each packet's flags (direction) as the input had them.
///
/// ```swift
/// let writer = try PcapngFileWriter(path: "out.pcapng", input: capture, sectionComment: "2 findings")
/// while let r = capture.next() { try writer.write(r, comments: comments[r.frame] ?? []) }
/// try writer.close()
/// ```
public final class PcapngFileWriter {
    public let path: String
    /// Records written and packet comments written.
    public private(set) var recordsWritten = 0
    public private(set) var commentsWritten = 0
    private let sink: FileSink
    private let input: Source
    private var buffer: [UInt8] = []
    /// Interface id of each (link type, input interface) declared so far.
    private var interfaces: [InterfaceKey: UInt32] = [:]

    /// An output interface: a link type, and the input's interface where the input has several (pcapng).
    struct InterfaceKey: Hashable {
        let linkType: UInt32
        let inputInterface: UInt16
    }

    /// LINKTYPE_USER0: PacketLogger records that are not HCI packets (notes, syslog, LMP), stored as in the file.
    public static let userLinkType: UInt32 = 147

    /// The input's container as far as the packets' layout goes.
    enum Source {
        case pcap(linkType: UInt32), btsnoopH4, btsnoopH1, btsnoopMonitor, packetLogger, other
    }

    /// Creates (truncates) `path`, writing the section header with `sectionComment` (omitted when nil or empty).
    /// `input` tells how the records to come lay out their bytes.
    public init(path: String, input: CaptureFile, sectionComment: String?, application: String = "blescope") throws(CaptureWriteError) {
        self.path = path
        self.sink = try FileSink(path: path)
        switch (input.format.name, input.datalink) {
        case ("pcap", let lt), ("pcapng", let lt): self.input = .pcap(linkType: lt)
        case (_, BTSnoop.datalinkMonitor): self.input = .btsnoopMonitor
        case ("pklg", _): self.input = .packetLogger
        case (_, BTSnoop.datalinkH1): self.input = .btsnoopH1
        case (_, BTSnoop.datalinkH4): self.input = .btsnoopH4
        default: self.input = .other
        }
        var options: [UInt8] = []
        if let sectionComment, !sectionComment.isEmpty { Self.appendOption(1, Array(sectionComment.utf8), to: &options) }
        Self.appendOption(4, Array(application.utf8), to: &options)  // shb_userappl
        var body: [UInt8] = []
        Self.append(UInt32(0x1A2B_3C4D), to: &body)  // byte-order magic
        Self.append(UInt16(1), to: &body)
        Self.append(UInt16(0), to: &body)
        Self.append(UInt64.max, to: &body)  // section length: not given
        appendBlock(type: 0x0A0D_0D0A, body: body, options: options)
    }

    deinit { try? close() }

    /// Writes one record with its comments (each an `opt_comment` of the packet).
    public func write(_ record: CaptureRecord, comments: [String] = []) throws(CaptureWriteError) {
        let (linkType, prefix, payload) = layout(record)
        let suffix: [UInt8] = linkType == PcapLinkType.linuxMonitor && isPacketLoggerInput ? [0] : []
        let interface = interfaceID(InterfaceKey(linkType: linkType, inputInterface: inputInterface(record)))
        let nanoseconds = UInt64(bitPattern: record.timestamp.microseconds &* 1000 &+ Int64(record.extraNanoseconds))
        // The original length: what is written plus what the capturer cut.
        let original = prefix.count + payload.count + suffix.count + max(0, record.originalLength - record.includedLength)
        var body: [UInt8] = []
        body.reserveCapacity(20 + prefix.count + payload.count + 3)
        Self.append(interface, to: &body)
        Self.append(UInt32(truncatingIfNeeded: nanoseconds >> 32), to: &body)
        Self.append(UInt32(truncatingIfNeeded: nanoseconds), to: &body)
        Self.append(UInt32(truncatingIfNeeded: prefix.count + payload.count + suffix.count), to: &body)
        Self.append(UInt32(truncatingIfNeeded: original), to: &body)
        body += prefix
        body.append(contentsOf: payload)
        body += suffix
        Self.pad(&body)
        var options: [UInt8] = []
        for comment in comments { Self.appendOption(1, Array(comment.utf8), to: &options) }
        if record.packetFlags != 0 {
            var flags: [UInt8] = []
            Self.append(record.packetFlags, to: &flags)
            Self.appendOption(2, flags, to: &options)  // epb_flags
        }
        appendBlock(type: 6, body: body, options: options)
        recordsWritten += 1
        commentsWritten += comments.count
        if buffer.count >= 1 << 20 { try flush() }
    }

    /// Writes one owned record (decrypted or rewritten): laid out from its kind, as it has no stored form.
    public func write(_ record: OwnedRecord, comments: [String] = []) throws(CaptureWriteError) {
        let result: Result<Void, CaptureWriteError> = record.bytes.withUnsafeBytes { raw in
            let borrowed = CaptureRecord(
                frame: record.frame, timestamp: record.timestamp, direction: record.direction, kind: record.kind,
                controllerIndex: record.controllerIndex, originalLength: max(record.originalLength, raw.count),
                includedLength: raw.count, fileOffset: 0, rawType: record.rawType, linkType: record.linkType, bytes: raw)
            do throws(CaptureWriteError) {
                try write(borrowed, comments: comments)
                return .success(())
            } catch {
                return .failure(error)
            }
        }
        try result.get()
    }

    public func close() throws(CaptureWriteError) {
        try flush()
        sink.close()
    }

    private var isPacketLoggerInput: Bool { if case .packetLogger = input { true } else { false } }

    /// The link type, the bytes before the record's and the record's bytes to write (a PacketLogger note under 254
    /// is followed by a NUL: see ``write(_:comments:)``).
    func layout(_ record: CaptureRecord) -> (UInt32, [UInt8], UnsafeRawBufferPointer) {
        let stored = record.stored
        let received: UInt8 = record.direction == .rx || record.kind == .event ? 1 : 0
        if stored.baseAddress != nil {
            switch input {
            // Each packet under its own interface's link type (a pcapng may mix Bluetooth and Ethernet interfaces).
            case .pcap(let linkType): return (record.linkType != 0 ? record.linkType : linkType, [], stored)
            case .btsnoopH4: return (PcapLinkType.h4WithPHDR, [0, 0, 0, received], stored)
            case .btsnoopH1 where record.kind.isHCI:
                return (PcapLinkType.h4WithPHDR, [0, 0, 0, received, record.kind.rawValue], stored)
            case .btsnoopMonitor:
                let index = record.controllerIndex, opcode = UInt16(truncatingIfNeeded: record.rawType)
                return (
                    PcapLinkType.linuxMonitor, [UInt8(index >> 8), UInt8(index & 0xFF), UInt8(opcode >> 8), UInt8(opcode & 0xFF)], stored
                )
            case .packetLogger where record.kind.isHCI && stored.count >= 1:
                return (PcapLinkType.h4WithPHDR, [0, 0, 0, received, record.kind.rawValue], UnsafeRawBufferPointer(rebasing: stored[1...]))
            case .packetLogger where record.kind == .text && record.rawType != UInt32(PacketLogger.syslog) && stored.count >= 1:
                // A note as a Linux monitor system note, which Wireshark shows as text: the text, then a NUL where the
                // type byte was, so the frame keeps its length.
                return (
                    PcapLinkType.linuxMonitor, [0, 0, 0, UInt8(LinuxMonitor.systemNote)], UnsafeRawBufferPointer(rebasing: stored[1...])
                )
            case .packetLogger: return (Self.userLinkType, [], stored)
            default: break
            }
        }
        // No stored form: from the kind.
        if record.kind == .linkLayer { return (record.linkType, [], record.bytes) }
        if record.kind.isHCI { return (PcapLinkType.h4WithPHDR, [0, 0, 0, received, record.kind.rawValue], record.bytes) }
        if case .btsnoopMonitor = input,
            let opcode = LinuxMonitor.opcode(kind: record.kind, direction: record.direction, rawType: record.rawType)
        {
            let index = record.controllerIndex
            return (
                PcapLinkType.linuxMonitor, [UInt8(index >> 8), UInt8(index & 0xFF), UInt8(opcode >> 8), UInt8(opcode & 0xFF)], record.bytes
            )
        }
        if case .packetLogger = input { return (Self.userLinkType, [UInt8(truncatingIfNeeded: record.rawType)], record.bytes) }
        // A packet of an interface that is no Bluetooth one (the corpus Ubertooth capture's Ethernet frames beside its
        // PPI interface): its bytes are the whole packet, written back under its own link type, not as a user record.
        if case .pcap = input, record.kind == .other, record.linkType != 0, !PcapLinkType.supported.contains(record.linkType) {
            return (record.linkType, [], record.bytes)
        }
        // An H4 record of a packet type that is no HCI one (a controller's LMP trace, 0x07): its bytes start with that
        // type, so it is written back as H4, not as a user record that loses the type and the direction.
        if record.kind == .other {
            switch input {
            case .btsnoopH4: return (PcapLinkType.h4WithPHDR, [0, 0, 0, received], record.bytes)
            case .pcap(let linkType) where linkType == PcapLinkType.h4WithPHDR && record.linkType == linkType:
                return (linkType, [0, 0, 0, received], record.bytes)
            case .pcap(let linkType) where linkType == PcapLinkType.h4 && record.linkType == linkType:
                return (linkType, [], record.bytes)
            default: break
            }
        }
        return (Self.userLinkType, [], record.bytes)
    }

    /// The input interface a stored pcap(ng) packet came from (its controller index is the interface id); 0 otherwise,
    /// where the controller index is no interface (a monitor log's index is in each record's header).
    private func inputInterface(_ record: CaptureRecord) -> UInt16 {
        guard case .pcap = input, record.stored.baseAddress != nil else { return 0 }
        return record.controllerIndex
    }

    /// The interface of `key`, declared (Interface Description Block) the first time.
    private func interfaceID(_ key: InterfaceKey) -> UInt32 {
        if let id = interfaces[key] { return id }
        let linkType = key.linkType
        let id = UInt32(interfaces.count)
        interfaces[key] = id
        var body: [UInt8] = []
        Self.append(UInt16(truncatingIfNeeded: linkType), to: &body)
        Self.append(UInt16(0), to: &body)
        Self.append(UInt32(0), to: &body)  // snaplen: no limit
        var options: [UInt8] = []
        let name = linkType == Self.userLinkType ? "PacketLogger records that are not HCI packets" : PcapLinkType.name(linkType)
        Self.appendOption(2, Array(name.utf8), to: &options)  // if_name
        Self.appendOption(9, [9], to: &options)  // if_tsresol: nanoseconds
        appendBlock(type: 1, body: body, options: options)
        return id
    }

    /// type, total length, body, options (ended by opt_endofopt when there are any), total length again.
    private func appendBlock(type: UInt32, body: [UInt8], options: [UInt8]) {
        let total = 12 + body.count + (options.isEmpty ? 0 : options.count + 4)
        Self.append(type, to: &buffer)
        Self.append(UInt32(total), to: &buffer)
        buffer += body
        if !options.isEmpty {
            buffer += options
            buffer += [0, 0, 0, 0]
        }
        Self.append(UInt32(total), to: &buffer)
    }

    private func flush() throws(CaptureWriteError) {
        try sink.write(buffer)
        buffer.removeAll(keepingCapacity: true)
    }

    static func appendOption(_ code: UInt16, _ value: [UInt8], to out: inout [UInt8]) {
        // An option's value is at most 65,535 bytes: a longer comment is cut (on a UTF-8 boundary).
        var value = value
        if value.count > 65_532 {
            var end = 65_532
            while end > 0 && value[end] & 0xC0 == 0x80 { end -= 1 }
            value = Array(value[..<end])
        }
        append(code, to: &out)
        append(UInt16(value.count), to: &out)
        out += value
        pad(&out)
    }

    static func pad(_ out: inout [UInt8]) {
        while out.count % 4 != 0 { out.append(0) }
    }

    /// Little-endian: the section's byte-order magic says so.
    static func append<T: FixedWidthInteger>(_ v: T, to out: inout [UInt8]) {
        withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) }
    }
}

/// An open file descriptor written in full ("-": standard output).
final class FileSink {
    let path: String
    private var fd: Int32

    init(path: String) throws(CaptureWriteError) {
        self.path = path
        fd = try openForWriting(path)
    }

    func write(_ bytes: [UInt8]) throws(CaptureWriteError) {
        var done = 0
        let failure: Int32? = bytes.withUnsafeBytes { raw -> Int32? in
            while done < raw.count {
                #if canImport(Glibc)
                let n = Glibc.write(fd, raw.baseAddress! + done, raw.count - done)
                #else
                let n = Darwin.write(fd, raw.baseAddress! + done, raw.count - done)
                #endif
                if n < 0 { if errno == EINTR { continue }; return errno }
                done += n
            }
            return nil
        }
        if let failure { throw CaptureWriteError(path: path, message: String(cString: strerror(failure))) }
    }

    func close() {
        guard fd >= 0 else { return }
        #if canImport(Glibc)
        _ = Glibc.close(fd)
        #else
        _ = Darwin.close(fd)
        #endif
        fd = -1
    }
}
