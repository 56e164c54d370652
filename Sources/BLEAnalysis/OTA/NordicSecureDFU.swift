import BLECore

/// A Secure DFU control point opcode (nRF5 SDK `nrf_dfu_op_t`).
public struct SecureDFUOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let create = SecureDFUOpcode(rawValue: 0x01)
    public static let setPRN = SecureDFUOpcode(rawValue: 0x02)
    public static let calculateCRC = SecureDFUOpcode(rawValue: 0x03)
    public static let execute = SecureDFUOpcode(rawValue: 0x04)
    public static let select = SecureDFUOpcode(rawValue: 0x06)
    public static let abort = SecureDFUOpcode(rawValue: 0x0C)
    /// Every response notification starts with this byte, then the request opcode and a result.
    public static let response = SecureDFUOpcode(rawValue: 0x60)

    public static let names = OTACodeTable<SecureDFUOpcode>(
        [
            .create: "Create", .setPRN: "Set PRN", .calculateCRC: "CRC request", .execute: "Execute", .select: "Select",
            .abort: "Abort", .response: "Response",
        ],
        unknown: { "control \(hex($0.rawValue))" })
    public var description: String { Self.names[self] }
}

/// A Secure DFU result code (`nrf_dfu_result_t`), and the extended errors after result 0x0B
/// (`nrf_dfu_ext_error_code_t`).
public struct SecureDFUResult: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let success = SecureDFUResult(rawValue: 0x01)
    public static let extendedError = SecureDFUResult(rawValue: 0x0B)

    public static let names = OTACodeTable<SecureDFUResult>(
        [
            SecureDFUResult(rawValue: 0x00): "Invalid opcode", .success: "Success",
            SecureDFUResult(rawValue: 0x02): "Opcode not supported", SecureDFUResult(rawValue: 0x03): "Invalid parameter",
            SecureDFUResult(rawValue: 0x04): "Insufficient resources", SecureDFUResult(rawValue: 0x05): "Invalid object",
            SecureDFUResult(rawValue: 0x07): "Unsupported type", SecureDFUResult(rawValue: 0x08): "Operation not permitted",
            SecureDFUResult(rawValue: 0x0A): "Operation failed", .extendedError: "Extended error",
        ],
        unknown: { "Result(\(hex($0.rawValue)))" })

    public static let extendedErrorNames = OTACodeTable<UInt8>(
        [
            0x00: "No error", 0x01: "Invalid error code", 0x02: "Wrong command format", 0x03: "Unknown command",
            0x04: "Init command invalid", 0x05: "Firmware version failure", 0x06: "Hardware version failure",
            0x07: "SoftDevice version failure", 0x08: "Signature missing", 0x09: "Wrong hash type", 0x0A: "Hash failed",
            0x0B: "Wrong signature type", 0x0C: "Verification failed", 0x0D: "Insufficient space",
        ],
        unknown: { "ExtendedError(\(hex($0)))" })
    public var description: String { Self.names[self] }
}

/// Nordic Secure DFU (service 0xFE59): objects created, filled through the packet characteristic,
/// checked by CRC-32 and executed, for the init packet (type 1) and the image (type 2).
///
/// nRF5 SDK "DFU protocol" / nRF Connect SDK `nrf_dfu_req_handler`. Offsets and CRCs are
/// cumulative per object type; a Create of a data object discards what was sent since the last
/// Execute. Select answering a non-zero offset means the update resumes.
public struct NordicSecureDFU: OTAProfile {
    public static let protocolName = OTAProtocol.nordicSecureDFU
    public static let controlPoint = BluetoothUUID("8EC90001-F315-4F60-9FB8-838830DAEA50")!
    public static let packet = BluetoothUUID("8EC90002-F315-4F60-9FB8-838830DAEA50")!
    public static let endpoints: [BluetoothUUID: OTAEndpoint] = [controlPoint: .control, packet: .packet]

    /// Cumulative offset and CRC of one object type (init packet or data).
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

    var currentType: UInt8 = 0
    var streams = [ObjectStream(), ObjectStream()]
    var pendingOp: SecureDFUOpcode?
    var createTime: Timestamp?
    var dataExecuted = false
    var aborted = false

    public init() {}

    public static func admission(_ v: OTAValue, open: NordicSecureDFU?) -> OTAAdmission {
        guard let op = v.first else { return .ignore }
        if v.isControl && v.isSent && SecureDFUOpcode(rawValue: op) == .select && v.count >= 2 && v[1] == 1,
            open?.dataExecuted == true
        {
            // A new init packet after a finished image: the next update (e.g. application after SoftDevice).
            return .restart("a new update")
        }
        if open == nil && !v.isControl && !v.isSent { return .ignore }
        return .join
    }

    public mutating func feed(_ v: OTAValue, _ o: inout OTASessionBuilder) {
        let e = v.event
        guard let first = v.first else { return }
        if !v.isControl {
            packet(v, &o)
            return
        }
        if !v.isSent {
            response(v, &o)
            return
        }
        let op = SecureDFUOpcode(rawValue: first)
        switch op {
        case .create where v.count >= 6:
            let type = v[1]
            let size = v.le32(2) ?? 0
            o.account(e, type == 1 ? "Create command object" : "Create data object")
            currentType = type
            pendingOp = op
            createTime = e.timestamp
            if type == 1 {
                o.beginPhase("init packet", e)
                streams[0] = ObjectStream()
                o.session.initPacket = []
                o.session.objects.append(OTAObject(type: 1, offset: 0, size: size, createFrame: e.frame))
            } else if type == 2 {
                o.beginPhase("data", e)
                var s = streams[1]
                if s.offset != s.offsetLast {
                    o.session.findings.append(
                        Finding(
                            .info, .otaNote("Create discards \(s.offset - s.offsetLast) bytes of an object not executed"), frame: e.frame))
                }
                s.offset = s.offsetLast
                s.crc = s.crcLast
                s.crcKnown = s.crcLastKnown
                s.history = []
                streams[1] = s
                let keep = s.offsetLast - o.session.imageOffset
                if keep >= 0, keep < o.session.image.count { o.session.image.removeSubrange(keep...) }
                o.session.objects.append(OTAObject(type: 2, offset: s.offsetLast, size: size, createFrame: e.frame))
            } else {
                o.session.findings.append(Finding(.warning, .otaError("Create of unknown object type \(type)"), frame: e.frame))
            }
        case .setPRN where v.count >= 3:
            o.account(e, "Set PRN")
            pendingOp = op
            o.session.packetReceiptInterval = v.le16(1)
        case .calculateCRC, .execute:
            o.account(e, op.description)
            pendingOp = op
        case .select where v.count >= 2:
            o.account(e, "Select")
            pendingOp = op
            currentType = v[1]
            o.beginPhase(v[1] == 1 ? "init packet" : "data", e)
        case .abort:
            o.account(e, "Abort")
            aborted = true
        default:
            o.account(e, "control \(hex(first))")
            pendingOp = op
        }
    }

    /// Packet characteristic: bytes of the current object.
    mutating func packet(_ v: OTAValue, _ o: inout OTASessionBuilder) {
        let e = v.event
        o.account(e, "packet")
        let t = currentType == 1 ? 0 : 1
        if currentType == 0 {
            o.session.findings.append(Finding(.warning, .otaError("packet before any Create"), frame: e.frame))
        }
        if let c = createTime, o.session.objects.last?.createPauseMicroseconds == nil, !o.session.objects.isEmpty {
            o.session.objects[o.session.objects.count - 1].createPauseMicroseconds = e.timestamp.microseconds(since: c)
            createTime = nil
        }
        if t == 0 {
            o.session.initPacket.append(contentsOf: v.bytes)
            o.countPhaseBytes(v.count)
        } else {
            o.place(v.bytes, at: streams[1].offset, frame: e.frame)
            o.countPacket(e, bytes: v.count)
        }
        streams[t].offset += v.count
        streams[t].crc.update(v.bytes)
        streams[t].history.append((streams[t].offset, streams[t].crc.value))
        if !o.session.objects.isEmpty {
            o.session.objects[o.session.objects.count - 1].packets += 1
            o.session.objects[o.session.objects.count - 1].bytes += v.count
        }
    }

    /// Control point notification: `60 op result …`, or a packet receipt (`60 03 01 offset crc`
    /// nobody asked for).
    mutating func response(_ v: OTAValue, _ o: inout OTASessionBuilder) {
        let e = v.event
        guard v.count >= 3, SecureDFUOpcode(rawValue: v[0]) == .response else {
            o.account(e, "notification")
            o.session.findings.append(Finding(.warning, .otaError("control point notification without 0x60"), frame: e.frame))
            return
        }
        let requestOp = SecureDFUOpcode(rawValue: v[1])
        let result = SecureDFUResult(rawValue: v[2])
        let t = currentType == 1 ? 0 : 1
        let isReceipt = requestOp == .calculateCRC && pendingOp != .calculateCRC
        o.account(e, isReceipt ? "packet receipt" : "response to \(hex(requestOp.rawValue))")
        if !isReceipt { pendingOp = nil }
        guard result == .success else {
            var name = result.description
            let extended = result == .extendedError && v.count >= 4
            if extended { name += ": " + SecureDFUResult.extendedErrorNames[v[3]] }
            o.fail(
                code: Int(extended ? v[3] : result.rawValue), name: name,
                finding: "request \(hex(requestOp.rawValue)) failed: \(name)", frame: e.frame)
            return
        }
        o.lastResponseOK = true
        switch requestOp {
        case .create:
            createTime = e.timestamp
        case .calculateCRC:
            checksumResponse(v, stream: t, isReceipt: isReceipt, &o)
        case .execute:
            streams[t].offsetLast = streams[t].offset
            streams[t].crcLast = streams[t].crc
            streams[t].crcLastKnown = streams[t].crcKnown
            if !o.session.objects.isEmpty { o.session.objects[o.session.objects.count - 1].executed = true }
            if t == 1 { dataExecuted = true }
            if t == 0, let info = DFUInitPacketInfo(o.session.initPacket) { o.session.expectedSize = info.totalSize }
        case .select:
            selectResponse(v, stream: t, &o)
        default:
            break
        }
    }

    /// Calculate Checksum response (`60 03 01 offset crc`): a packet receipt checked against the CRC sent up to its
    /// offset, or the answer to a request checked against the stream (or taken as the CRC when resuming).
    private mutating func checksumResponse(_ v: OTAValue, stream t: Int, isReceipt: Bool, _ o: inout OTASessionBuilder) {
        let e = v.event
        guard let offset = v.le32(3), let crcInt = v.le32(7) else { return }
        let crc = UInt32(truncatingIfNeeded: crcInt)
        if isReceipt {
            o.session.receipts += 1
            if let entry = streams[t].history.last(where: { $0.0 == offset }), streams[t].crcKnown, entry.1 != crc {
                o.session.findings.append(
                    Finding(.error, .otaCRCMismatch(computed: entry.1, reported: crc, offset: offset), frame: e.frame))
            }
            return
        }
        var s = streams[t]
        if !s.crcKnown {
            s.crc = CRC32(crc)
            s.crcKnown = true
            o.session.findings.append(Finding(.info, .otaNote("CRC-32 taken from the device after a resume"), frame: e.frame))
        } else if s.offset != offset {
            o.session.findings.append(Finding(.error, .otaOffsetMismatch(device: offset, sent: s.offset), frame: e.frame))
        } else if s.crc.value != crc {
            o.session.findings.append(
                Finding(.error, .otaCRCMismatch(computed: s.crc.value, reported: crc, offset: offset), frame: e.frame))
        }
        streams[t] = s
        if !o.session.objects.isEmpty {
            let i = o.session.objects.count - 1
            o.session.objects[i].computedCRC = s.crc.value
            o.session.objects[i].reportedCRC = crc
            o.session.objects[i].reportedOffset = offset
        }
    }

    /// Select response (`60 06 01 max-size offset crc`): an offset already held by the device is a resumed update.
    private mutating func selectResponse(_ v: OTAValue, stream t: Int, _ o: inout OTASessionBuilder) {
        let e = v.event
        guard let offset = v.le32(7), let crcInt = v.le32(11) else { return }
        let maxSize = v.le32(3) ?? 0
        if offset > 0 && streams[t].offset == 0 && (t == 0 || o.session.image.isEmpty) {
            // The device already holds data: a resumed update.
            var s = ObjectStream()
            s.offset = offset
            s.crc = CRC32(UInt32(truncatingIfNeeded: crcInt))
            s.offsetLast = maxSize > 0 ? offset - offset % maxSize : offset
            s.crcLastKnown = s.offsetLast == offset
            s.crcLast = s.crc
            streams[t] = s
            if t == 1 {
                o.session.resumedFromOffset = offset
                o.session.imageOffset = offset
                o.maxOffsetSent = offset
                o.session.findings.append(Finding(.info, .otaNote("resumed: the device already has \(offset) bytes"), frame: e.frame))
            }
        }
    }

    public func finish(_ o: inout OTASessionBuilder, why: String, frame: Int) {
        let pending = streams[1].offset != streams[1].offsetLast
        if aborted {
            o.session.result = .aborted("Abort (0x0C)")
        } else if let failure = o.standingFailure {
            o.session.result = failure
        } else if dataExecuted && !pending
            && (o.session.expectedSize.map { o.session.imageOffset + o.session.image.count >= $0 } ?? true)
        {
            o.session.result = .success
        } else {
            o.cut(why, frame: frame)
        }
    }
}
