import BLECore
import CPcap
import CZlib

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One open capture being read, record by record, in file order.
///
/// The format is sniffed from the content (never the extension); gzip is decompressed transparently.
/// Reading is streaming with memory flat in the file size: ``next()`` hands out records whose bytes
/// borrow the reader's buffer (valid until the next call). Bad input never traps: what can be read is
/// read, and what went wrong is in ``findings``.
///
/// ```swift
/// let file = try CaptureFile.open(path: "btsnoop_hci.log")
/// var stats = CaptureStatistics()
/// while let record = file.next() { stats.add(record) }
/// ```
public final class CaptureFile {
    /// The path given to ``open(path:)`` (or the name given to ``open(bytes:name:)``).
    public let path: String
    public let format: CaptureFormat
    /// True when the file was gzip-compressed.
    public let compressed: Bool
    /// btsnoop datalink (1001, 1002, 2001; btsnooz reads as 1002) or pcap link type (187, 201, 254, 251, 256, 272, 192).
    /// PacketLogger has no datalink field: 0.
    public let datalink: UInt32
    /// Size of the file on disk (compressed size for gzip); nil for pipes.
    public let fileSize: Int64?
    /// For PacketLogger: whether the records are big-endian; nil for other formats.
    public let packetLoggerBigEndian: Bool?
    /// For pcapng: what its section header and interfaces say of where it was written (`shb_os`, `if_name`…).
    public let pcapngSection: PcapngSection?

    private let reader: RecordReader
    /// The hot readers by concrete type, so `next()` needs no dynamic dispatch. Unmanaged, called through
    /// `_withUnsafeGuaranteedRef`: `reader` owns them for the file's life, a strong `if let` cost two atomic counts per
    /// record and an `unowned(unsafe)` one still a retain and a release (docs/performance.md#capture-file).
    private let btsnoop: Unmanaged<BTSnoopReader>?
    private let classicPcap: Unmanaged<ClassicPcapReader>?
    private let pcapng: Unmanaged<PcapngReader>?
    private var openNotes: [Finding]
    /// For air captures whose pseudo-header holds the sniffer's clock: record times put back on it where the file's are
    /// off by whole wraps (``SnifferClock``).
    private var clock: SnifferClock?

    private init(
        path: String, format: CaptureFormat, compressed: Bool, datalink: UInt32, fileSize: Int64?,
        packetLoggerBigEndian: Bool? = nil, pcapngSection: PcapngSection? = nil, reader: RecordReader, notes: [Finding] = []
    ) {
        self.path = path
        self.format = format
        self.compressed = compressed
        self.datalink = datalink
        self.fileSize = fileSize
        self.packetLoggerBigEndian = packetLoggerBigEndian
        self.pcapngSection = pcapngSection
        self.reader = reader
        self.btsnoop = (reader as? BTSnoopReader).map { Unmanaged.passUnretained($0) }
        self.classicPcap = (reader as? ClassicPcapReader).map { Unmanaged.passUnretained($0) }
        self.pcapng = (reader as? PcapngReader).map { Unmanaged.passUnretained($0) }
        self.openNotes = notes
        if format == .pcap || format == .pcapng, SnifferClock.applies(to: datalink) { clock = SnifferClock() }
    }

    /// The next record, or nil at the end (or where reading had to stop; see ``findings``).
    /// Its bytes are valid until the next call.
    @inline(__always) public func next() -> CaptureRecord? {
        if let btsnoop { return btsnoop._withUnsafeGuaranteedRef { $0.next() } }
        var record = CaptureRecord.empty
        return next(into: &record) ? record : nil
    }

    /// Reads the next record over `record` (every field is written); false at the end (or where reading had to stop).
    /// Its bytes are valid until the next call. The same records as ``next()``, for the per-record loops of the passes:
    /// a record returned as an optional was built on the reader's stack and copied twice on its way to the analyzer,
    /// each copy reading back the 80 bytes just written field by field (store-forwarding stalls); here the reader
    /// writes the caller's record in place. One copy is left, the argument of `Analyzer.process`: the compiler copies a
    /// `var` to pass it (docs/performance.md#capture-file).
    ///
    /// ```swift
    /// var record = CaptureRecord.empty
    /// while file.next(into: &record) { analyzer.process(record) }
    /// ```
    @inline(__always) public func next(into record: inout CaptureRecord) -> Bool {
        if let btsnoop { return btsnoop._withUnsafeGuaranteedRef { $0.next(into: &record) } }
        if let classicPcap {
            guard classicPcap._withUnsafeGuaranteedRef({ $0.next(into: &record) }) else { return false }
        } else if let pcapng {
            guard pcapng._withUnsafeGuaranteedRef({ $0.next(into: &record) }) else { return false }
        } else {
            guard let next = reader.next() else { return false }
            record = next
        }
        if clock != nil { clock!.correct(&record) }
        return true
    }

    /// Everything odd seen so far: truncated file, impossible lengths, records cut by the capturer, notes.
    public var findings: [Finding] { openNotes + reader.findings + (clock?.finding.map { [$0] } ?? []) }

    /// The format's reader (for tests of what it counted).
    var recordReader: RecordReader { reader }

    /// Bytes of the file consumed so far (compressed bytes for gzip), for progress reporting.
    public var bytesConsumed: Int64 { reader.bytesConsumed }

    /// Human name of the datalink: "H4", "H1", "Linux monitor", "LE LL with RF header", "Nordic BLE sniffer", …
    public var datalinkName: String {
        switch format {
        case .packetLogger: packetLoggerBigEndian == true ? "PacketLogger (big-endian)" : "PacketLogger (little-endian)"
        case .pcap, .pcapng: PcapLinkType.name(datalink)
        case .btsnooz: "H4 (btsnooz)"
        case .hcidump: "H4 (hcidump)"
        default: BTSnoop.datalinkName(datalink)
        }
    }

    // MARK: Opening

    /// Opens a capture file. Errors (the CLI exits 2): missing/unreadable file, directory, empty file,
    /// content that is no capture, unsupported datalink.
    /// - Parameter classicPcapThroughLibpcap: read classic pcap files with libpcap instead of blescope's
    ///   own reader (which is faster, docs/performance.md#classic-pcap, and reports exact byte offsets for cut
    ///   files); pcapng always goes through libpcap. Tests use it to check that both readers agree.
    public static func open(path: String) throws(CaptureOpenError) -> CaptureFile {
        try open(path: path, classicPcapThroughLibpcap: false)
    }

    /// Why `path` would not open as a capture, or nil when it would; it is opened on the caller's thread and closed.
    public static func openError(path: String) -> CaptureOpenError? {
        do throws(CaptureOpenError) {
            _ = try open(path: path, classicPcapThroughLibpcap: false, readAhead: nil)
            return nil
        } catch {
            return error
        }
    }

    public static func open(path: String, classicPcapThroughLibpcap: Bool) throws(CaptureOpenError) -> CaptureFile {
        // Inflating gzip, and reading pipes, on a second thread where there is one: see `ReadAhead` for why and the figures.
        try open(path: path, classicPcapThroughLibpcap: classicPcapThroughLibpcap, readAhead: secondThreadAvailable ? .standard : nil)
    }

    /// - Parameters:
    ///   - readAhead: read gzip files and pipes on a second thread in blocks of this shape, or on the caller's (nil).
    ///   - readAheadPlainFiles: plain files too. Not by default: the copy moved to the other core, but the analysis then
    ///     read blocks another core had written and was no faster (docs/performance.md#read-ahead). Tests use it, with
    ///     small blocks to put block boundaries everywhere.
    static func open(
        path: String, classicPcapThroughLibpcap: Bool, readAhead: ReadAhead.Shape?, readAheadPlainFiles: Bool = false
    ) throws(CaptureOpenError) -> CaptureFile {
        func fail(_ message: String) -> CaptureOpenError { CaptureOpenError(path: path, message: message) }
        let fd = posixOpen(path)
        guard fd >= 0 else { throw fail(String(cString: strerror(errno))) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { let e = errno; close(fd); throw fail(String(cString: strerror(e))) }
        let mode = st.st_mode & S_IFMT
        if mode == S_IFDIR { close(fd); throw fail("is a directory") }
        let regular = mode == S_IFREG
        let size = Int64(st.st_size)
        if regular && size == 0 { close(fd); throw CaptureOpenError(path: path, message: "empty file", isNotACapture: true) }

        let source: ByteSource
        var compressed = false
        if regular {
            var magic: [UInt8] = [0, 0]
            let got = pread(fd, &magic, 2, 0)
            if got == 2 && magic == [0x1F, 0x8B] {
                compressed = true
                source = ByteSource(streaming: fd, gzip: true, readAhead: readAhead)
            } else {
                // read(2) into a reusable cache-sized buffer: faster than mmap here and keeps RSS flat
                // (docs/performance.md#read-ahead).
                #if os(Linux)
                _ = posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_SEQUENTIAL))
                #endif
                source = ByteSource(streaming: fd, gzip: false, readAhead: readAheadPlainFiles ? readAhead : nil)
            }
        } else {
            // Pipes and devices: zlib passes plain data through, so gzip or not is found out while reading.
            source = ByteSource(streaming: fd, gzip: true, readAhead: readAhead)
            compressed = true
        }
        return try make(
            path: path, source: source, compressed: compressed, fileSize: regular ? size : nil, memory: false,
            classicPcapThroughLibpcap: classicPcapThroughLibpcap)
    }

    /// Opens a capture held in memory (tests); gzip content is decompressed first.
    public static func open(bytes: [UInt8], name: String) throws(CaptureOpenError) -> CaptureFile {
        if bytes.isEmpty { throw CaptureOpenError(path: name, message: "empty file") }
        var content = bytes
        var compressed = false
        if bytes.count >= 2 && bytes[0] == 0x1F && bytes[1] == 0x8B {
            guard let inflated = zlibInflate(bytes, gzip: true) else {
                throw CaptureOpenError(path: name, message: "gzip data is corrupt")
            }
            content = inflated
            compressed = true
            if content.isEmpty { throw CaptureOpenError(path: name, message: "empty file (after gzip decompression)") }
        }
        let source = content.withUnsafeBytes { ByteSource(copying: $0) }
        return try make(path: name, source: source, compressed: compressed, fileSize: Int64(bytes.count), memory: true)
    }

    private static func make(
        path: String, source: ByteSource, compressed: Bool, fileSize: Int64?,
        memory: Bool, classicPcapThroughLibpcap: Bool = false
    ) throws(CaptureOpenError) -> CaptureFile {
        func fail(_ message: String) -> CaptureOpenError { CaptureOpenError(path: path, message: message) }
        _ = source.ensure(1 << 16)
        let window = UnsafeRawBufferPointer(start: source.cursor, count: min(source.available, 1 << 16))
        var isCompressed = compressed
        if compressed && source.isPassthrough { isCompressed = false }  // a pipe of plain data
        if window.isEmpty {
            if let error = source.streamError { throw fail(error) }
            throw fail(compressed ? "empty file (after gzip decompression)" : "empty file")
        }
        let starts = "starts with " + hexString(window.prefix(4), separator: " ")

        // btsnoop
        if window.count >= 8 && window.prefix(8).elementsEqual(BTSnoop.magic) {
            guard window.count >= BTSnoop.fileHeaderSize else { throw fail("btsnoop file header cut short (\(window.count) bytes)") }
            let p = source.cursor
            let version = p.be32(8), datalink = p.be32(12)
            guard version == 1 else { throw fail("btsnoop version \(version) is not supported (expected 1)") }
            guard [BTSnoop.datalinkH1, BTSnoop.datalinkH4, BTSnoop.datalinkMonitor].contains(datalink) else {
                throw fail("btsnoop datalink \(datalink) (\(BTSnoop.datalinkName(datalink))) is not supported")
            }
            return CaptureFile(
                path: path, format: .btsnoop, compressed: isCompressed, datalink: datalink, fileSize: fileSize,
                reader: BTSnoopReader(source: source, datalink: datalink))
        }

        // pcap / pcapng
        if window.count >= 4 {
            let be = source.cursor.be32(0)
            if let (bigEndian, nanoseconds) = ClassicPcap.magic(be), !(classicPcapThroughLibpcap && !memory) {
                guard source.available >= ClassicPcap.headerSize else {
                    throw fail("pcap file header cut short (\(source.available) bytes)")
                }
                let raw = bigEndian ? source.cursor.be32(20) : source.cursor.le32(20)
                let linkType = raw & 0x03FF_FFFF
                guard PcapLinkType.supported.contains(linkType) else {
                    throw fail(
                        "pcap link type \(linkType) is not a Bluetooth link type (supported: 187, 201, 254, 251, 256, 272, 192 with LE inside)"
                    )
                }
                return CaptureFile(
                    path: path, format: .pcap, compressed: isCompressed, datalink: linkType, fileSize: fileSize,
                    reader: ClassicPcapReader(
                        source: source, bigEndian: bigEndian, nanoseconds: nanoseconds,
                        linkType: linkType))
            }
            let isPcapng = be == 0x0A0D_0D0A
            if isPcapng { return try openPcapng(path: path, source: source, compressed: isCompressed, fileSize: fileSize) }
            if ClassicPcap.magic(be) != nil {
                return try openPcap(
                    path: path, source: source, compressed: isCompressed, fileSize: fileSize,
                    memory: memory, isPcapng: isPcapng)
            }
        }

        // PacketLogger: no magic; the leading records must be plausible in one byte order.
        let big = PacketLogger.plausibleRecords(window, bigEndian: true)
        let little = PacketLogger.plausibleRecords(window, bigEndian: false)
        func accepted(_ r: (count: Int, exactEnd: Bool)?) -> Int {
            guard let r, r.count >= 2 || r.exactEnd else { return 0 }; return r.count
        }
        let bigScore = accepted(big), littleScore = accepted(little)
        if bigScore > 0 || littleScore > 0 {
            let bigEndian = bigScore >= littleScore
            return CaptureFile(
                path: path, format: .packetLogger, compressed: isCompressed, datalink: 0, fileSize: fileSize,
                packetLoggerBigEndian: bigEndian, reader: PacketLoggerReader(source: source, bigEndian: bigEndian))
        }

        // BlueZ hcidump: no magic either; its leading records and their H4 packets agree on their lengths.
        if let r = HCIDump.plausibleRecords(window), r.count >= 2 || r.exactEnd {
            return CaptureFile(
                path: path, format: .hcidump, compressed: isCompressed, datalink: PcapLinkType.h4WithPHDR, fileSize: fileSize,
                reader: HCIDumpReader(source: source))
        }

        // Android bug report with a btsnooz block.
        if looksLikeText(window.prefix(4096)) {
            if let blob = BTSnooz.extractBlob(from: source) {
                guard let (snoop, notes) = BTSnooz.decodeToBTSnoop(blob) else {
                    throw fail("btsnooz block found but it could not be decoded (bad base64, version or zlib data)")
                }
                let inner = snoop.withUnsafeBytes { ByteSource(copying: $0) }
                return CaptureFile(
                    path: path, format: .btsnooz, compressed: isCompressed, datalink: BTSnoop.datalinkH4,
                    fileSize: fileSize, reader: BTSnoopReader(source: inner, datalink: BTSnoop.datalinkH4),
                    notes: notes.map { Finding(.info, .captureNote($0)) })
            }
        }
        throw CaptureOpenError(
            path: path,
            message: "not a capture (expected btsnoop, pcap, pcapng, PacketLogger, hcidump or a bug report with btsnooz); \(starts)",
            isNotACapture: true)
    }

    private static func looksLikeText(_ bytes: Slice<UnsafeRawBufferPointer>) -> Bool {
        var printable = 0
        for b in bytes {
            if b == 0 { return false }
            if b >= 0x20 || b == 0x09 || b == 0x0A || b == 0x0D { printable += 1 }
        }
        return printable * 10 >= bytes.count * 9
    }

    /// pcapng through ``PcapngReader``: the file's datalink is its first Bluetooth interface's link type (every
    /// interface keeps its own for its packets).
    private static func openPcapng(path: String, source: ByteSource, compressed: Bool, fileSize: Int64?) throws(CaptureOpenError)
        -> CaptureFile
    {
        let reader = PcapngReader(source: source)
        let interfaces = reader.readInterfacesAhead()
        guard let first = interfaces.first(where: \.isBluetooth) else {
            let types = interfaces.map { String($0.linkType) }
            throw CaptureOpenError(
                path: path,
                message: types.isEmpty
                    ? "pcapng: no Interface Description Block before the first packet"
                    : "pcapng link type\(types.count == 1 ? "" : "s") \(types.joined(separator: ", ")) \(types.count == 1 ? "is not a Bluetooth link type" : "are not Bluetooth link types") (supported: 187, 201, 254, 251, 256, 272, 192 with LE inside)"
            )
        }
        return CaptureFile(
            path: path, format: .pcapng, compressed: compressed, datalink: first.linkType, fileSize: fileSize,
            pcapngSection: reader.readSectionAhead(), reader: reader)
    }

    private static func openPcap(
        path: String, source: ByteSource, compressed: Bool, fileSize: Int64?, memory: Bool,
        isPcapng: Bool
    ) throws(CaptureOpenError) -> CaptureFile {
        func fail(_ message: String) -> CaptureOpenError { CaptureOpenError(path: path, message: message) }
        var errbuf = [CChar](repeating: 0, count: Int(PCAP_ERRBUF_SIZE) + 1)
        // Nanoseconds: records keep what a µs timestamp cannot hold (CaptureRecord.extraNanoseconds).
        let precision = UInt32(PCAP_TSTAMP_PRECISION_NANO)
        var handle: OpaquePointer? = nil
        var keepAlive: AnyObject? = nil
        var gzipSizes: (Int64, Int64)? = nil
        if memory {
            // fmemopen over the source's bytes (the source stays alive with the reader).
            let all = UnsafeMutableRawPointer(mutating: source.cursor)
            if let f = fmemopen(all, source.available, "r") {
                handle = pcap_fopen_offline_with_tstamp_precision(f, precision, &errbuf)
                if handle == nil { fclose(f) }
            }
            keepAlive = source
        } else if compressed || fileSize == nil {
            // gzip or a pipe: libpcap needs a FILE *, so the (decompressed) stream goes to a temporary file.
            guard let (f, size) = source.drainToTemporaryFile() else { throw fail("cannot write a temporary file for libpcap") }
            handle = pcap_fopen_offline_with_tstamp_precision(f, precision, &errbuf)
            if handle == nil { fclose(f) }
            gzipSizes = (size, fileSize ?? size)
        } else {
            handle = pcap_open_offline_with_tstamp_precision(path, precision, &errbuf)
        }
        guard let handle else {
            let message = String(decoding: errbuf.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw fail("\(isPcapng ? "pcapng" : "pcap"): \(message.isEmpty ? "libpcap cannot read it" : message)")
        }
        let linkType = UInt32(bitPattern: pcap_datalink(handle))
        guard PcapLinkType.supported.contains(linkType) else {
            pcap_close(handle)
            // libpcap gives a pcapng file the link type of its first interface and refuses later interfaces of
            // another type, so a file that records Ethernet beside a sniffer cannot be read through it: say so.
            let mixed =
                isPcapng
                ? "; a pcapng file is read with the link type of its first interface (libpcap), so one whose first interface is not Bluetooth cannot be read even if a later one is (tshark reads such files)"
                : ""
            throw fail(
                "\(isPcapng ? "pcapng" : "pcap") link type \(linkType) is not a Bluetooth link type (supported: 187, 201, 254, 251, 256, 272, 192 with LE inside)\(mixed)"
            )
        }
        let reader = PcapReader(handle: handle, isPcapng: isPcapng, fileSize: fileSize, keepAlive: keepAlive, gzipSizes: gzipSizes)
        return CaptureFile(
            path: path, format: isPcapng ? .pcapng : .pcap, compressed: compressed, datalink: linkType,
            fileSize: fileSize, reader: reader)
    }
}

@inline(__always) private func posixOpen(_ path: String) -> Int32 {
    #if canImport(Glibc)
    return Glibc.open(path, O_RDONLY | O_CLOEXEC)
    #else
    return Darwin.open(path, O_RDONLY | O_CLOEXEC)
    #endif
}
