import BLECodecs
import BLECore

/// Follows firmware updates: Nordic Secure DFU, Nordic legacy DFU, MCUmgr SMP image upload,
/// Silicon Labs OTA, and vendor protocols whose YAML codec marks `ota-start` / `ota-data` /
/// `resend-request` / `ota-result` roles.
///
/// A value on no OTA characteristic and without OTA roles costs one dictionary lookup. Sessions are
/// per connection, so two updates at once on two connections stay apart. A session still open at a
/// disconnection or at the end of the capture ends `incomplete` with a finding.
public struct OTATracker: AttributeValueObserver {
    /// Gaps between two events of a session longer than this are reported as stalls (µs).
    public var stallThreshold: Int64
    /// Finished sessions, sorted by start frame after ``finish(frame:timestamp:)``.
    public private(set) var sessions: [OTASession] = []

    public init(stallThreshold: Int64 = 200_000) {
        self.stallThreshold = stallThreshold
    }

    // MARK: Endpoints

    enum Endpoint {
        case secureControl, securePacket, legacyControl, legacyPacket, smp, silabsControl, silabsData
    }

    static let secureControlUUID = BluetoothUUID("8EC90001-F315-4F60-9FB8-838830DAEA50")!
    static let securePacketUUID = BluetoothUUID("8EC90002-F315-4F60-9FB8-838830DAEA50")!
    static let legacyControlUUID = BluetoothUUID("00001531-1212-EFDE-1523-785FEABCD123")!
    static let legacyPacketUUID = BluetoothUUID("00001532-1212-EFDE-1523-785FEABCD123")!
    static let silabsControlUUID = BluetoothUUID("F7BF3564-FB6D-4E53-88A4-5E37E0326063")!
    static let silabsDataUUID = BluetoothUUID("984227F3-34FC-4045-A5D0-2C581F81A153")!

    static let endpoints: [BluetoothUUID: Endpoint] = [
        secureControlUUID: .secureControl, securePacketUUID: .securePacket,
        legacyControlUUID: .legacyControl, legacyPacketUUID: .legacyPacket,
        TransferOptions.smpCharacteristic: .smp,
        silabsControlUUID: .silabsControl, silabsDataUUID: .silabsData,
    ]

    struct Key: Hashable {
        var connectionNumber: Int
        var proto: OTAProtocol
        var codec: String?
    }

    /// Cumulative offset and CRC of one Nordic object type (init packet or data).
    struct ObjectStream {
        var offset = 0
        var crc = CRC32()
        var offsetLast = 0
        var crcLast = CRC32()
        var crcKnown = true
        var crcLastKnown = true
        /// (offset, crc) after each packet since the last Create: PRN receipts lag behind in a capture.
        var history: [(Int, UInt32)] = []
    }

    struct Open {
        var session: OTASession
        var lastTime: Timestamp
        var lastFrame: Int
        var lastLabel = "start"
        var phase: Int?
        // Nordic Secure DFU
        var currentType: UInt8 = 0
        var streams = [ObjectStream(), ObjectStream()]
        var pendingOp: UInt8?
        var createTime: Timestamp?
        var dataExecuted = false
        var aborted = false
        var lastError: OTAResult?
        var lastResponseOK = true
        var maxOffsetSent = 0
        var prnCount = 0
        // Legacy
        var legacyState: UInt8 = 0  // 1 awaiting sizes, 2 init packet, 3 image
        var activated = false
        var validated = false
        // MCUmgr / Silicon Labs
        var uploadDone = false
        var ended = false
        // Vendor
        var chunks: [Int: [UInt8]] = [:]
        var requested: Set<Int> = []
        var resultSeen = false

        init(_ s: OTASession, frame: Int, time: Timestamp) {
            session = s
            lastTime = time
            lastFrame = frame
        }
    }

    var open: [Key: Open] = [:]
    /// SMP reassembly per (connection number, direction).
    var smpBuffers: [SMPKey: [UInt8]] = [:]
    struct SMPKey: Hashable { var connectionNumber: Int; var direction: Direction }

    // MARK: Observer

    public mutating func observe(_ event: AttributeValueEvent) {
        if let decoded = event.decoded, !decoded.roles.isEmpty {
            let r = decoded.roles
            if r[.otaStart] != nil || r[.otaData] != nil || r[.resendRequest] != nil || r[.otaResult] != nil
                || (r[.messageTerminator] != nil
                    && open[Key(connectionNumber: event.connectionNumber, proto: .vendor, codec: decoded.codec)] != nil) {
                vendor(event, decoded)
                return
            }
        }
        guard let uuid = event.characteristic, let endpoint = Self.endpoints[uuid] else { return }
        switch endpoint {
        case .secureControl, .securePacket: secureDFU(event, control: endpoint == .secureControl)
        case .legacyControl, .legacyPacket: legacyDFU(event, control: endpoint == .legacyControl)
        case .smp: smp(event)
        case .silabsControl, .silabsData: silabs(event, control: endpoint == .silabsControl)
        }
    }

    public mutating func connectionEnded(connectionNumber: Int, frame: Int, timestamp: Timestamp, reason: String) {
        for key in open.keys where key.connectionNumber == connectionNumber {
            close(key, why: "disconnection (\(reason))", frame: frame)
        }
        for key in smpBuffers.keys where key.connectionNumber == connectionNumber { smpBuffers[key] = nil }
    }

    public mutating func finish(frame: Int, timestamp: Timestamp) {
        for key in open.keys { close(key, why: "the end of the capture", frame: frame) }
        sessions.sort { ($0.startFrame, $0.connectionNumber) < ($1.startFrame, $1.connectionNumber) }
    }

    // MARK: Common bookkeeping

    /// Opens (or returns) the session for `key`.
    mutating func session(_ key: Key, _ e: AttributeValueEvent) -> Open {
        if let o = open.removeValue(forKey: key) { return o }
        let s = OTASession(protocolName: key.proto, codec: key.codec, connection: e.connection,
                           connectionNumber: e.connectionNumber, frame: e.frame, time: e.timestamp)
        return Open(s, frame: e.frame, time: e.timestamp)
    }

    /// Counts the event for the session: wire bytes, link, stall detection.
    func account(_ o: inout Open, _ e: AttributeValueEvent, _ label: String) {
        let gap = e.timestamp.microseconds(since: o.lastTime)
        if gap > stallThreshold, o.session.firstPacketFrame != nil {
            o.session.stalls.append(OTAStall(afterFrame: o.lastFrame, resumeFrame: e.frame, gapMicroseconds: gap,
                                             preceding: o.lastLabel))
        }
        o.lastTime = e.timestamp
        o.lastFrame = e.frame
        o.lastLabel = label
        o.session.endFrame = e.frame
        o.session.endTime = e.timestamp
        o.session.wireBytes += e.l2capBytes
        if o.session.links.last != e.link { o.session.links.append(e.link) }
        if let p = o.phase {
            o.session.phases[p].endFrame = e.frame
            o.session.phases[p].endTime = e.timestamp
        }
    }

    func beginPhase(_ o: inout Open, _ name: String, _ e: AttributeValueEvent) {
        if let p = o.phase, o.session.phases[p].name == name { return }
        o.session.phases.append(OTAPhase(name: name, frame: e.frame, time: e.timestamp))
        o.phase = o.session.phases.count - 1
    }

    /// An image-carrying write of `count` bytes.
    func countPacket(_ o: inout Open, _ e: AttributeValueEvent, bytes count: Int) {
        o.session.packets += 1
        o.session.packetBytes += count
        if o.session.firstPacketFrame == nil {
            o.session.firstPacketFrame = e.frame
            o.session.firstPacketTime = e.timestamp
        }
        o.session.lastPacketFrame = e.frame
        o.session.lastPacketTime = e.timestamp
        if let p = o.phase {
            o.session.phases[p].packets += 1
            o.session.phases[p].bytes += count
        }
    }

    /// Places image bytes at an absolute offset; bytes below the highest offset sent count as resent.
    func place(_ o: inout Open, _ bytes: UnsafeRawBufferPointer, at offset: Int, frame: Int) {
        if offset < o.maxOffsetSent {
            o.session.retransmittedPackets.append(offset)
            o.session.retransmittedBytes += min(bytes.count, o.maxOffsetSent - offset)
        }
        o.maxOffsetSent = max(o.maxOffsetSent, offset + bytes.count)
        if o.session.image.isEmpty && o.session.imageOffset == 0 && offset > 0 && o.session.resumedFromOffset == nil {
            o.session.findings.append(Finding(.warning, .otaNote("first image bytes at offset \(offset)"), frame: frame))
        }
        var position = offset - o.session.imageOffset
        if position < 0 {
            // Before what we hold: restart the image there.
            o.session.image = []
            o.session.imageOffset = offset
            position = 0
        }
        if position > o.session.image.count {
            o.session.findings.append(Finding(.warning, .otaError("gap in the image: bytes \(o.session.imageOffset + o.session.image.count)..<\(offset) never sent"), frame: frame))
            o.session.image += [UInt8](repeating: 0, count: position - o.session.image.count)
        }
        let overlap = min(bytes.count, o.session.image.count - position)
        if overlap > 0 {
            o.session.image.replaceSubrange(position..<(position + overlap), with: bytes[0..<overlap])
        }
        if overlap < bytes.count { o.session.image.append(contentsOf: bytes[overlap...]) }
    }

    mutating func close(_ key: Key, why: String, frame: Int) {
        guard var o = open.removeValue(forKey: key) else { return }
        finalize(&o, why: why, frame: frame)
        sessions.append(o.session)
    }

    func finalize(_ o: inout Open, why: String, frame: Int) {
        let cut = { (o: inout Open) in
            o.session.result = .incomplete("cut by \(why)")
            o.session.findings.append(Finding(.warning, .otaCut(why), frame: frame))
        }
        switch o.session.protocolName {
        case .nordicSecureDFU:
            let pending = o.streams[1].offset != o.streams[1].offsetLast
            if o.aborted {
                o.session.result = .aborted("Abort (0x0C)")
            } else if let err = o.lastError, !o.lastResponseOK {
                o.session.result = err
            } else if o.dataExecuted && !pending
                        && (o.session.expectedSize.map { o.session.imageOffset + o.session.image.count >= $0 } ?? true) {
                o.session.result = .success
            } else {
                cut(&o)
            }
        case .nordicLegacyDFU:
            if let err = o.lastError, !o.lastResponseOK { o.session.result = err }
            else if o.activated && o.validated { o.session.result = .success }
            else if o.aborted { o.session.result = .aborted("system reset (0x06)") }
            else { cut(&o) }
        case .mcumgr:
            if let err = o.lastError, !o.lastResponseOK { o.session.result = err }
            else if o.uploadDone { o.session.result = .success }
            else { cut(&o) }
        case .siliconLabs:
            if o.ended { o.session.result = .success } else { cut(&o) }
        default:
            if !o.resultSeen { cut(&o) }
            // Rebuild the image from the packets by index (the last copy of a resent one).
            if let maxIndex = o.chunks.keys.max() {
                var image: [UInt8] = []
                var missing: [Int] = []
                let upper = max(maxIndex + 1, o.session.expectedPackets ?? 0)
                for i in 0..<upper {
                    if let c = o.chunks[i] { image += c } else { missing.append(i) }
                }
                if !missing.isEmpty {
                    o.session.findings.append(Finding(.warning, .otaMissingPackets(missing), frame: o.session.endFrame))
                    if case .success = o.session.result {
                        o.session.result = .incomplete("packets missing but the device reported success")
                    }
                }
                o.session.image = image
            }
        }
        if let expected = o.session.expectedSize, o.session.imageOffset + o.session.image.count != expected,
           o.session.protocolName != .vendor {
            o.session.findings.append(Finding(.warning, .otaNote("image has \(o.session.image.count) bytes, \(expected) announced"),
                                              frame: o.session.endFrame))
        }
    }

    // MARK: Nordic Secure DFU

    /// Result codes of the DFU control point (nRF5 SDK `nrf_dfu_result_t`).
    public static func secureResultName(_ code: UInt8) -> String {
        switch code {
        case 0x00: "Invalid opcode"
        case 0x01: "Success"
        case 0x02: "Opcode not supported"
        case 0x03: "Invalid parameter"
        case 0x04: "Insufficient resources"
        case 0x05: "Invalid object"
        case 0x07: "Unsupported type"
        case 0x08: "Operation not permitted"
        case 0x0A: "Operation failed"
        case 0x0B: "Extended error"
        default: "Result(\(hex(code)))"
        }
    }

    /// Extended error codes (`nrf_dfu_ext_error_code_t`), after result 0x0B.
    public static func secureExtendedErrorName(_ code: UInt8) -> String {
        switch code {
        case 0x00: "No error"
        case 0x01: "Invalid error code"
        case 0x02: "Wrong command format"
        case 0x03: "Unknown command"
        case 0x04: "Init command invalid"
        case 0x05: "Firmware version failure"
        case 0x06: "Hardware version failure"
        case 0x07: "SoftDevice version failure"
        case 0x08: "Signature missing"
        case 0x09: "Wrong hash type"
        case 0x0A: "Hash failed"
        case 0x0B: "Wrong signature type"
        case 0x0C: "Verification failed"
        case 0x0D: "Insufficient space"
        default: "ExtendedError(\(hex(code)))"
        }
    }

    static func le32(_ v: UnsafeRawBufferPointer, _ at: Int) -> Int? {
        guard at >= 0, v.count >= at + 4 else { return nil }
        return Int(v[at]) | Int(v[at + 1]) << 8 | Int(v[at + 2]) << 16 | Int(v[at + 3]) << 24
    }

    mutating func secureDFU(_ e: AttributeValueEvent, control: Bool) {
        let key = Key(connectionNumber: e.connectionNumber, proto: .nordicSecureDFU)
        let v = e.value
        guard let op = v.first else { return }
        if control && e.direction != .rx && op == 0x06 && v.count >= 2 && v[1] == 1,
           let o = open[key], o.dataExecuted {
            // A new init packet after a finished image: the next update (e.g. application after SoftDevice).
            close(key, why: "a new update", frame: e.frame)
        }
        if open[key] == nil && !control && e.direction == .rx { return }
        var o = session(key, e)
        defer { open[key] = o }
        if !control {
            // Packet characteristic: bytes of the current object.
            account(&o, e, "packet")
            let t = Int(o.currentType == 1 ? 0 : 1)
            if o.currentType == 0 {
                o.session.findings.append(Finding(.warning, .otaError("packet before any Create"), frame: e.frame))
            }
            if let c = o.createTime, o.session.objects.last?.createPauseMicroseconds == nil, !o.session.objects.isEmpty {
                o.session.objects[o.session.objects.count - 1].createPauseMicroseconds = e.timestamp.microseconds(since: c)
                o.createTime = nil
            }
            if t == 0 {
                o.session.initPacket.append(contentsOf: v)
                o.session.packets += 1
                o.session.packetBytes += v.count
                if let p = o.phase { o.session.phases[p].packets += 1; o.session.phases[p].bytes += v.count }
            } else {
                place(&o, v, at: o.streams[1].offset, frame: e.frame)
                countPacket(&o, e, bytes: v.count)
            }
            o.streams[t].offset += v.count
            o.streams[t].crc.update(v)
            o.streams[t].history.append((o.streams[t].offset, o.streams[t].crc.value))
            if !o.session.objects.isEmpty {
                o.session.objects[o.session.objects.count - 1].packets += 1
                o.session.objects[o.session.objects.count - 1].bytes += v.count
            }
            o.prnCount += 1
            return
        }
        if e.direction == .rx {
            secureResponse(&o, e)
            return
        }
        switch op {
        case 0x01 where v.count >= 6:
            let type = v[1]
            let size = Self.le32(v, 2) ?? 0
            account(&o, e, type == 1 ? "Create command object" : "Create data object")
            o.currentType = type
            o.pendingOp = op
            o.prnCount = 0
            o.createTime = e.timestamp
            if type == 1 {
                beginPhase(&o, "init packet", e)
                o.streams[0] = ObjectStream()
                o.session.initPacket = []
                o.session.objects.append(OTAObject(type: 1, offset: 0, size: size, createFrame: e.frame))
            } else if type == 2 {
                beginPhase(&o, "data", e)
                var s = o.streams[1]
                if s.offset != s.offsetLast {
                    o.session.findings.append(Finding(.info, .otaNote("Create discards \(s.offset - s.offsetLast) bytes of an object not executed"), frame: e.frame))
                }
                s.offset = s.offsetLast
                s.crc = s.crcLast
                s.crcKnown = s.crcLastKnown
                s.history = []
                o.streams[1] = s
                let keep = s.offsetLast - o.session.imageOffset
                if keep >= 0, keep < o.session.image.count { o.session.image.removeSubrange(keep...) }
                o.session.objects.append(OTAObject(type: 2, offset: s.offsetLast, size: size, createFrame: e.frame))
            } else {
                o.session.findings.append(Finding(.warning, .otaError("Create of unknown object type \(type)"), frame: e.frame))
            }
        case 0x02 where v.count >= 3:
            account(&o, e, "Set PRN")
            o.pendingOp = op
            o.session.packetReceiptInterval = Int(v[1]) | Int(v[2]) << 8
        case 0x03:
            account(&o, e, "CRC request")
            o.pendingOp = op
        case 0x04:
            account(&o, e, "Execute")
            o.pendingOp = op
        case 0x06 where v.count >= 2:
            account(&o, e, "Select")
            o.pendingOp = op
            o.currentType = v[1]
            beginPhase(&o, v[1] == 1 ? "init packet" : "data", e)
        case 0x0C:
            account(&o, e, "Abort")
            o.aborted = true
        default:
            account(&o, e, "control \(hex(op))")
            o.pendingOp = op
        }
    }

    func secureResponse(_ o: inout Open, _ e: AttributeValueEvent) {
        let v = e.value
        guard v.count >= 3, v[0] == 0x60 else {
            account(&o, e, "notification")
            o.session.findings.append(Finding(.warning, .otaError("control point notification without 0x60"), frame: e.frame))
            return
        }
        let requestOp = v[1]
        let result = v[2]
        let t = o.currentType == 1 ? 0 : 1
        let isReceipt = requestOp == 0x03 && o.pendingOp != 0x03
        account(&o, e, isReceipt ? "packet receipt" : "response to \(hex(requestOp))")
        if !isReceipt { o.pendingOp = nil }
        guard result == 0x01 else {
            var name = Self.secureResultName(result)
            if result == 0x0B, v.count >= 4 { name += ": " + Self.secureExtendedErrorName(v[3]) }
            o.lastError = .failure(code: Int(result == 0x0B && v.count >= 4 ? v[3] : result), name: name)
            o.lastResponseOK = false
            o.session.findings.append(Finding(.error, .otaError("request \(hex(requestOp)) failed: \(name)"), frame: e.frame))
            return
        }
        o.lastResponseOK = true
        switch requestOp {
        case 0x01:
            o.createTime = e.timestamp
        case 0x03:
            guard let offset = Self.le32(v, 3), let crcInt = Self.le32(v, 7) else { return }
            let crc = UInt32(truncatingIfNeeded: crcInt)
            if isReceipt {
                o.session.receipts += 1
                if let entry = o.streams[t].history.last(where: { $0.0 == offset }), o.streams[t].crcKnown,
                   entry.1 != crc {
                    o.session.findings.append(Finding(.error, .otaCRCMismatch(computed: entry.1, reported: crc, offset: offset), frame: e.frame))
                }
                return
            }
            var s = o.streams[t]
            if !s.crcKnown {
                s.crc = CRC32(crc)
                s.crcKnown = true
                o.session.findings.append(Finding(.info, .otaNote("CRC-32 taken from the device after a resume"), frame: e.frame))
            } else if s.offset != offset {
                o.session.findings.append(Finding(.error, .otaOffsetMismatch(device: offset, sent: s.offset), frame: e.frame))
            } else if s.crc.value != crc {
                o.session.findings.append(Finding(.error, .otaCRCMismatch(computed: s.crc.value, reported: crc, offset: offset), frame: e.frame))
            }
            o.streams[t] = s
            if !o.session.objects.isEmpty {
                let i = o.session.objects.count - 1
                o.session.objects[i].computedCRC = s.crc.value
                o.session.objects[i].reportedCRC = crc
                o.session.objects[i].reportedOffset = offset
            }
        case 0x04:
            o.streams[t].offsetLast = o.streams[t].offset
            o.streams[t].crcLast = o.streams[t].crc
            o.streams[t].crcLastKnown = o.streams[t].crcKnown
            if !o.session.objects.isEmpty { o.session.objects[o.session.objects.count - 1].executed = true }
            if t == 1 { o.dataExecuted = true }
            if t == 0, let info = DFUInitPacketInfo(o.session.initPacket) { o.session.expectedSize = info.totalSize }
        case 0x06:
            guard let offset = Self.le32(v, 7), let crcInt = Self.le32(v, 11) else { return }
            let maxSize = Self.le32(v, 3) ?? 0
            if offset > 0 && o.streams[t].offset == 0 && (t == 0 || o.session.image.isEmpty) {
                // The device already holds data: a resumed update.
                var s = ObjectStream()
                s.offset = offset
                s.crc = CRC32(UInt32(truncatingIfNeeded: crcInt))
                s.offsetLast = maxSize > 0 ? offset - offset % maxSize : offset
                s.crcLastKnown = s.offsetLast == offset
                s.crcLast = s.crc
                o.streams[t] = s
                if t == 1 {
                    o.session.resumedFromOffset = offset
                    o.session.imageOffset = offset
                    o.maxOffsetSent = offset
                    o.session.findings.append(Finding(.info, .otaNote("resumed: the device already has \(offset) bytes"), frame: e.frame))
                }
            }
        default:
            break
        }
    }

    // MARK: Nordic legacy DFU

    /// Status codes of legacy DFU responses (`0x10 op status`).
    public static func legacyStatusName(_ code: UInt8) -> String {
        switch code {
        case 1: "Success"
        case 2: "Invalid state"
        case 3: "Not supported"
        case 4: "Data size exceeds limit"
        case 5: "CRC error"
        case 6: "Operation failed"
        default: "Status(\(hex(code)))"
        }
    }

    mutating func legacyDFU(_ e: AttributeValueEvent, control: Bool) {
        let key = Key(connectionNumber: e.connectionNumber, proto: .nordicLegacyDFU)
        let v = e.value
        guard let op = v.first else { return }
        if open[key] == nil && !(control && e.direction != .rx) { return }
        var o = session(key, e)
        defer { open[key] = o }
        if !control {
            account(&o, e, "packet")
            switch o.legacyState {
            case 1:
                // Start DFU sizes: SoftDevice, bootloader, application (u32 LE each), or the application alone.
                let sizes = stride(from: 0, to: v.count - 3, by: 4).compactMap { Self.le32(v, $0) }
                o.session.expectedSize = sizes.reduce(0, +)
                o.legacyState = 0
            case 2:
                o.session.initPacket.append(contentsOf: v)
            default:
                place(&o, v, at: o.session.imageOffset + o.session.image.count, frame: e.frame)
                countPacket(&o, e, bytes: v.count)
            }
            return
        }
        if e.direction == .rx {
            account(&o, e, "notification")
            if op == 0x10, v.count >= 3 {
                if v[2] == 1 {
                    o.lastResponseOK = true
                    if v[1] == 0x04 { o.validated = true }
                } else {
                    let name = Self.legacyStatusName(v[2])
                    o.lastError = .failure(code: Int(v[2]), name: name)
                    o.lastResponseOK = false
                    o.session.findings.append(Finding(.error, .otaError("request \(hex(v[1])) failed: \(name)"), frame: e.frame))
                }
            } else if op == 0x11, let n = Self.le32(v, 1) {
                o.session.receipts += 1
                if n > o.session.image.count {
                    o.session.findings.append(Finding(.warning, .otaOffsetMismatch(device: n, sent: o.session.image.count), frame: e.frame))
                }
            }
            return
        }
        switch op {
        case 0x01:
            account(&o, e, "Start DFU")
            beginPhase(&o, "start", e)
            o.legacyState = 1
        case 0x02:
            account(&o, e, "Initialize DFU parameters")
            beginPhase(&o, "init packet", e)
            o.legacyState = v.count >= 2 && v[1] == 1 ? 0 : 2
        case 0x03:
            account(&o, e, "Receive firmware image")
            beginPhase(&o, "image", e)
            o.legacyState = 3
        case 0x04:
            account(&o, e, "Validate firmware")
            beginPhase(&o, "validate", e)
        case 0x05:
            account(&o, e, "Activate and reset")
            beginPhase(&o, "activate", e)
            o.activated = true
        case 0x06:
            account(&o, e, "Reset")
            o.aborted = true
        case 0x08 where v.count >= 3:
            account(&o, e, "PRN request")
            o.session.packetReceiptInterval = Int(v[1]) | Int(v[2]) << 8
        default:
            account(&o, e, "control \(hex(op))")
        }
    }

    // MARK: MCUmgr SMP

    /// MCUmgr `rc` codes (`MGMT_ERR_*`).
    public static func mcumgrErrorName(_ rc: Int64) -> String {
        switch rc {
        case 0: "EOK"
        case 1: "EUNKNOWN"
        case 2: "ENOMEM"
        case 3: "EINVAL"
        case 4: "ETIMEOUT"
        case 5: "ENOENT"
        case 6: "EBADSTATE"
        case 7: "EMSGSIZE"
        case 8: "ENOTSUP"
        case 9: "ECORRUPT"
        case 10: "EBUSY"
        case 11: "EACCESSDENIED"
        default: "rc \(rc)"
        }
    }

    mutating func smp(_ e: AttributeValueEvent) {
        let bufferKey = SMPKey(connectionNumber: e.connectionNumber, direction: e.direction)
        var buffer = smpBuffers.removeValue(forKey: bufferKey) ?? []
        if buffer.isEmpty, let first = e.value.first, first & 0x07 > 3 { return }
        buffer.append(contentsOf: e.value)
        while buffer.count >= 8 {
            let length = Int(buffer[2]) << 8 | Int(buffer[3])
            guard buffer.count >= 8 + length else { break }
            let message = Array(buffer[0..<(8 + length)])
            buffer.removeFirst(8 + length)
            smpMessage(message, e)
        }
        if !buffer.isEmpty { smpBuffers[bufferKey] = buffer }
    }

    mutating func smpMessage(_ message: [UInt8], _ e: AttributeValueEvent) {
        let header: SMPHeader
        do { header = try withByteReader(message) { (r: inout ByteReader) throws(DecodeError) in try SMPHeader(parsing: &r) } }
        catch { return }
        let key = Key(connectionNumber: e.connectionNumber, proto: .mcumgr)
        let isUpload = header.group == 1 && header.id == 1
        let isImageState = header.group == 1 && header.id == 0 && header.op == 2
        let isReset = header.group == 0 && header.id == 5 && header.op == 2
        guard isUpload || ((isImageState || isReset) && open[key] != nil) else { return }
        let body = try? CBORValue(bytes: Array(message[8...]))
        if isUpload && header.op == 2, let off = body?["off"]?.intValue, off == 0, let o = open[key], o.uploadDone {
            close(key, why: "a new upload", frame: e.frame)
        }
        if open[key] == nil && !(isUpload && header.op == 2) { return }
        var o = session(key, e)
        defer { open[key] = o }
        if isImageState { account(&o, e, "image state"); beginPhase(&o, "confirm", e); return }
        if isReset { account(&o, e, "reset"); beginPhase(&o, "reset", e); return }
        if header.op == 2 {
            account(&o, e, "upload request")
            beginPhase(&o, "upload", e)
            guard let body, let off = body["off"]?.intValue, let data = body["data"]?.bytesValue else {
                o.session.findings.append(Finding(.warning, .otaError("image upload request without off/data"), frame: e.frame))
                return
            }
            if let len = body["len"]?.intValue { o.session.expectedSize = Int(clamping: len) }
            data.withUnsafeBytes { place(&o, $0, at: Int(clamping: off), frame: e.frame) }
            countPacket(&o, e, bytes: data.count)
        } else if header.op == 3 {
            account(&o, e, "upload response")
            let rc = body?["rc"]?.intValue ?? 0
            if rc != 0 {
                let name = Self.mcumgrErrorName(rc)
                o.lastError = .failure(code: Int(clamping: rc), name: name)
                o.lastResponseOK = false
                o.session.findings.append(Finding(.error, .otaError("image upload failed: \(name)"), frame: e.frame))
            } else {
                o.lastResponseOK = true
                if let off = body?["off"]?.intValue, let size = o.session.expectedSize, Int(clamping: off) >= size {
                    o.uploadDone = true
                }
            }
        }
    }

    // MARK: Silicon Labs OTA

    mutating func silabs(_ e: AttributeValueEvent, control: Bool) {
        let key = Key(connectionNumber: e.connectionNumber, proto: .siliconLabs)
        guard e.direction != .rx else { return }
        let v = e.value
        if control, v.first == 0x00, let o = open[key], o.session.packets > 0 || o.ended {
            close(key, why: "a new upload", frame: e.frame)
        }
        if open[key] == nil && !(control && v.first == 0x00) && control { return }
        var o = session(key, e)
        defer { open[key] = o }
        if control {
            switch v.first {
            case 0x00: account(&o, e, "OTA start"); beginPhase(&o, "upload", e)
            case 0x03: account(&o, e, "OTA end"); beginPhase(&o, "end", e); o.ended = true
            case 0x04: account(&o, e, "close connection")
            default: account(&o, e, "control")
            }
            return
        }
        account(&o, e, "packet")
        place(&o, v, at: o.session.imageOffset + o.session.image.count, frame: e.frame)
        countPacket(&o, e, bytes: v.count)
    }

    // MARK: Vendor (codec roles)

    mutating func vendor(_ e: AttributeValueEvent, _ d: DecodedValue) {
        let key = Key(connectionNumber: e.connectionNumber, proto: .vendor, codec: d.codec)
        let r = d.roles
        if r[.otaStart] != nil, let o = open[key], o.session.packets > 0 || o.resultSeen {
            close(key, why: "a new update", frame: e.frame)
        }
        var o = session(key, e)
        o.session.retransmissionUnit = "index"
        if r[.otaStart] != nil {
            account(&o, e, d.message)
            beginPhase(&o, "start", e)
            if let n = r[.totalCount]?.intValue { o.session.expectedPackets = Int(clamping: n) }
        }
        if let data = r[.otaData]?.bytesValue {
            let index = r[.sequence]?.intValue.map { Int(clamping: $0) } ?? (o.chunks.keys.max() ?? -1) + 1
            account(&o, e, "\(d.message) \(index)")
            beginPhase(&o, "transfer", e)
            if let old = o.chunks[index] {
                o.session.retransmittedPackets.append(index)
                o.session.retransmittedBytes += data.count
                if old != data {
                    o.session.findings.append(Finding(.warning, .otaNote("packet \(index) resent with different bytes"), frame: e.frame))
                }
            } else if let n = o.session.expectedPackets, index >= n {
                o.session.findings.append(Finding(.warning, .otaNote("packet \(index) beyond the announced \(n)"), frame: e.frame))
            }
            o.requested.remove(index)
            o.chunks[index] = data
            countPacket(&o, e, bytes: data.count)
        }
        if let index = r[.resendRequest]?.intValue {
            account(&o, e, "\(d.message) \(index)")
            o.session.resendRequests.append(Int(clamping: index))
            o.requested.insert(Int(clamping: index))
        }
        if r[.messageTerminator] != nil && r[.otaData] == nil {
            account(&o, e, d.message)
            beginPhase(&o, "finish", e)
        }
        if let code = r[.otaResult]?.intValue {
            account(&o, e, d.message)
            o.resultSeen = true
            let name = d.fields.first(where: {
                if case let .named(v, n) = $0.value { return v == code && n != nil } else { return false }
            }).flatMap { field -> String? in if case let .named(_, n) = field.value { n } else { nil } } ?? "result \(code)"
            switch d.otaSuccess {
            case true?: o.session.result = .success
            case false?: o.session.result = .failure(code: Int(clamping: code), name: name)
            case nil: o.session.result = code == 0 ? .success : .failure(code: Int(clamping: code), name: name)
            }
            if case .failure = o.session.result {
                o.session.findings.append(Finding(.error, .otaError("update failed: \(name)"), frame: e.frame))
            }
            if !o.requested.isEmpty {
                o.session.findings.append(Finding(.warning, .otaNote("resend requested but never sent: \(indexList(Array(o.requested)))"), frame: e.frame))
            }
            finalize(&o, why: "result", frame: e.frame)
            sessions.append(o.session)
            return
        }
        open[key] = o
    }
}
