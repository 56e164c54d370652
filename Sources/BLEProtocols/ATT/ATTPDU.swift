import BLECore

/// One ATT PDU, typed (Core Spec 5.4 Vol 3, Part F, 3.4).
///
/// `ATTPDU(bytes:)` / `init(parsing:)` look the opcode up in ``ATTTable``, check the size once, and decode;
/// an unknown opcode becomes `.unknown(opcode, parameters)`.
public enum ATTPDU: WireCodable, CustomStringConvertible {
    case errorResponse(ATTErrorResponse)
    case exchangeMTURequest(clientRxMTU: UInt16)
    case exchangeMTUResponse(serverRxMTU: UInt16)
    case findInformationRequest(ATTHandleRange)
    case findInformationResponse(ATTFindInformationResponse)
    case findByTypeValueRequest(ATTFindByTypeValueRequest)
    /// (found attribute handle, group end handle) pairs.
    case findByTypeValueResponse([ATTHandleRange])
    case readByTypeRequest(ATTTypeRequest)
    case readByTypeResponse([ATTHandleValue])
    case readRequest(handle: UInt16)
    case readResponse(value: [UInt8])
    case readBlobRequest(handle: UInt16, offset: UInt16)
    case readBlobResponse(value: [UInt8])
    case readMultipleRequest(handles: [UInt16])
    case readMultipleResponse(values: [UInt8])
    case readByGroupTypeRequest(ATTTypeRequest)
    case readByGroupTypeResponse([ATTGroupValue])
    case writeRequest(handle: UInt16, value: [UInt8])
    case writeResponse
    case prepareWriteRequest(handle: UInt16, offset: UInt16, value: [UInt8])
    case prepareWriteResponse(handle: UInt16, offset: UInt16, value: [UInt8])
    /// Flags: 0x00 cancel all prepared writes, 0x01 write all.
    case executeWriteRequest(flags: UInt8)
    case executeWriteResponse
    case handleValueNotification(handle: UInt16, value: [UInt8])
    case handleValueIndication(handle: UInt16, value: [UInt8])
    case handleValueConfirmation
    case readMultipleVariableRequest(handles: [UInt16])
    case readMultipleVariableResponse([ATTLengthValue])
    case multipleHandleValueNotification([ATTHandleValue])
    case writeCommand(handle: UInt16, value: [UInt8])
    /// Signature: 12 bytes (sign counter(4) + MAC(8)).
    case signedWriteCommand(handle: UInt16, value: [UInt8], signature: [UInt8])
    case unknown(ATTOpcode, [UInt8])

    public var opcode: ATTOpcode {
        switch self {
        case .errorResponse: .errorResponse
        case .exchangeMTURequest: .exchangeMTURequest
        case .exchangeMTUResponse: .exchangeMTUResponse
        case .findInformationRequest: .findInformationRequest
        case .findInformationResponse: .findInformationResponse
        case .findByTypeValueRequest: .findByTypeValueRequest
        case .findByTypeValueResponse: .findByTypeValueResponse
        case .readByTypeRequest: .readByTypeRequest
        case .readByTypeResponse: .readByTypeResponse
        case .readRequest: .readRequest
        case .readResponse: .readResponse
        case .readBlobRequest: .readBlobRequest
        case .readBlobResponse: .readBlobResponse
        case .readMultipleRequest: .readMultipleRequest
        case .readMultipleResponse: .readMultipleResponse
        case .readByGroupTypeRequest: .readByGroupTypeRequest
        case .readByGroupTypeResponse: .readByGroupTypeResponse
        case .writeRequest: .writeRequest
        case .writeResponse: .writeResponse
        case .prepareWriteRequest: .prepareWriteRequest
        case .prepareWriteResponse: .prepareWriteResponse
        case .executeWriteRequest: .executeWriteRequest
        case .executeWriteResponse: .executeWriteResponse
        case .handleValueNotification: .handleValueNotification
        case .handleValueIndication: .handleValueIndication
        case .handleValueConfirmation: .handleValueConfirmation
        case .readMultipleVariableRequest: .readMultipleVariableRequest
        case .readMultipleVariableResponse: .readMultipleVariableResponse
        case .multipleHandleValueNotification: .multipleHandleValueNotification
        case .writeCommand: .writeCommand
        case .signedWriteCommand: .signedWriteCommand
        case let .unknown(op, _): op
        }
    }

    /// Parses one PDU (opcode and the rest of the reader).
    /// - Throws: ``DecodeError/invalidSize(expected:got:)`` when the parameters are shorter than the table's
    ///   minimum or differ from its fixed size; field errors for malformed lists.
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let opcode = ATTOpcode(rawValue: try input.readUInt8())
        guard let info = ATTTable.entries[opcode.rawValue] else {
            self = .unknown(opcode, input.readRemaining())
            return
        }
        let n = input.remaining
        if info.fixed ? n != info.size : n < info.size {
            throw .invalidSize(expected: 1 + info.size, got: 1 + n)
        }
        self = try info.decode(&input)
        try input.expectEnd()
    }

    public func encode(into w: inout ByteWriter) {
        w.write(opcode.rawValue)
        func u16(_ v: UInt16) { w.write(littleEndian: v) }
        switch self {
        case let .errorResponse(e): w.write(e.requestOpcode.rawValue); u16(e.handle); w.write(e.error.rawValue)
        case let .exchangeMTURequest(m), let .exchangeMTUResponse(m): u16(m)
        case let .findInformationRequest(r): r.encode(into: &w)
        case let .findInformationResponse(f):
            w.write(f.format)
            for e in f.entries {
                u16(e.handle)
                if f.format == 1, let short = e.uuid.uuid16 {
                    u16(short)
                } else {
                    let full = BluetoothUUID(high: e.uuid.high, low: e.uuid.low)
                    w.write(contentsOf: full.littleEndianBytes)
                }
            }
        case let .findByTypeValueRequest(f): f.range.encode(into: &w); u16(f.type); w.write(contentsOf: f.value)
        case let .findByTypeValueResponse(list): for r in list { r.encode(into: &w) }
        case let .readByTypeRequest(t), let .readByGroupTypeRequest(t):
            t.range.encode(into: &w); w.write(contentsOf: t.type.littleEndianBytes)
        case let .readByTypeResponse(list):
            w.write(UInt8(truncatingIfNeeded: 2 + (list.first?.value.count ?? 0)))
            for e in list { u16(e.handle); w.write(contentsOf: e.value) }
        case let .readRequest(h): u16(h)
        case let .readResponse(v), let .readBlobResponse(v), let .readMultipleResponse(v): w.write(contentsOf: v)
        case let .readBlobRequest(h, o): u16(h); u16(o)
        case let .readMultipleRequest(hs), let .readMultipleVariableRequest(hs): for h in hs { u16(h) }
        case let .readByGroupTypeResponse(list):
            w.write(UInt8(truncatingIfNeeded: 4 + (list.first?.value.count ?? 0)))
            for e in list { u16(e.start); u16(e.end); w.write(contentsOf: e.value) }
        case let .writeRequest(h, v), let .handleValueNotification(h, v), let .handleValueIndication(h, v),
            let .writeCommand(h, v):
            u16(h); w.write(contentsOf: v)
        case .writeResponse, .executeWriteResponse, .handleValueConfirmation: break
        case let .prepareWriteRequest(h, o, v), let .prepareWriteResponse(h, o, v): u16(h); u16(o); w.write(contentsOf: v)
        case let .executeWriteRequest(f): w.write(f)
        case let .readMultipleVariableResponse(list): for e in list { u16(e.length); w.write(contentsOf: e.value) }
        case let .multipleHandleValueNotification(list):
            for e in list { u16(e.handle); u16(UInt16(truncatingIfNeeded: e.value.count)); w.write(contentsOf: e.value) }
        case let .signedWriteCommand(h, v, s): u16(h); w.write(contentsOf: v); w.write(contentsOf: s)
        case let .unknown(_, b): w.write(contentsOf: b)
        }
    }

    /// The attribute handle the PDU is about, for PDUs that name a single handle (the handle in error for Error Response).
    public var attributeHandle: UInt16? {
        switch self {
        case let .errorResponse(e): e.handle
        case let .readRequest(h), let .readBlobRequest(h, _), let .writeRequest(h, _), let .prepareWriteRequest(h, _, _),
            let .prepareWriteResponse(h, _, _), let .handleValueNotification(h, _), let .handleValueIndication(h, _),
            let .writeCommand(h, _), let .signedWriteCommand(h, _, _):
            h
        default: nil
        }
    }

    /// The attribute value bytes the PDU carries (a part value for blob/prepare PDUs, the set of values for
    /// Read Multiple Response); nil for PDUs without one.
    public var value: [UInt8]? {
        switch self {
        case let .readResponse(v), let .readBlobResponse(v), let .readMultipleResponse(v): v
        case let .writeRequest(_, v), let .prepareWriteRequest(_, _, v), let .prepareWriteResponse(_, _, v),
            let .handleValueNotification(_, v), let .handleValueIndication(_, v), let .writeCommand(_, v),
            let .signedWriteCommand(_, v, _):
            v
        default: nil
        }
    }

    /// `Handle Value Notification handle=0x002a value=0a1b` style one-liner.
    public var summary: String {
        let name = opcode.description
        let fields: String
        switch self {
        case let .errorResponse(e): fields = "request=\(e.requestOpcode) handle=\(hex(e.handle)) error=\(e.error)"
        case let .exchangeMTURequest(m), let .exchangeMTUResponse(m): fields = "mtu=\(m)"
        case let .findInformationRequest(r): fields = "range=\(r)"
        case let .findInformationResponse(f): fields = f.entries.map { "\(hex($0.handle)):\($0.uuid)" }.joined(separator: " ")
        case let .findByTypeValueRequest(f):
            fields = "range=\(f.range) type=\(BluetoothUUID(uuid16: f.type)) value=\(hexString(f.value))"
        case let .findByTypeValueResponse(list): fields = list.map(\.description).joined(separator: " ")
        case let .readByTypeRequest(t), let .readByGroupTypeRequest(t): fields = "range=\(t.range) type=\(t.type)"
        case let .readByTypeResponse(list): fields = list.map { "\(hex($0.handle))=\(hexString($0.value))" }.joined(separator: " ")
        case let .readByGroupTypeResponse(list):
            fields = list.map { "\(hex($0.start))–\(hex($0.end))=\(hexString($0.value))" }.joined(separator: " ")
        case let .readBlobRequest(h, o): fields = "handle=\(hex(h)) offset=\(o)"
        case let .readMultipleRequest(hs), let .readMultipleVariableRequest(hs):
            fields = "handles=" + hs.map { hex($0) }.joined(separator: ",")
        case let .prepareWriteRequest(h, o, v), let .prepareWriteResponse(h, o, v):
            fields = "handle=\(hex(h)) offset=\(o) value=\(hexString(v))"
        case let .executeWriteRequest(f): fields = "flags=\(f == 0 ? "cancel" : f == 1 ? "write" : hex(f))"
        case let .readMultipleVariableResponse(list): fields = list.map { hexString($0.value) }.joined(separator: " ")
        case let .multipleHandleValueNotification(list):
            fields = list.map { "\(hex($0.handle))=\(hexString($0.value))" }.joined(separator: " ")
        case let .unknown(_, b): fields = b.isEmpty ? "" : "params=" + hexString(b)
        default:
            var parts: [String] = []
            if let h = attributeHandle { parts.append("handle=\(hex(h))") }
            if let v = value { parts.append("value=\(hexString(v))") }
            fields = parts.joined(separator: " ")
        }
        return fields.isEmpty ? name : name + " " + fields
    }
    public var description: String { summary }
}

public typealias ATTDecoder = @Sendable (inout ByteReader) throws(DecodeError) -> ATTPDU

/// One row of the ATT table: name, parameter size after the opcode (fixed or minimum), where a single attribute value
/// lies (for the PDUs that carry one), decoder.
public struct ATTOpcodeInfo: Sendable {
    public var name: String
    /// Parameter bytes after the opcode: the exact size when `fixed`, the minimum otherwise.
    public var size: Int
    public var fixed: Bool
    /// For a PDU that carries one whole attribute value after its handle: where the value lies; nil for the others.
    public var valueLayout: ATTValueLayout?
    public var decode: ATTDecoder
    /// `valueTrailer`: the PDU is handle(2) value, followed by this many bytes that are not the value.
    init(_ name: String, size: Int, fixed: Bool, valueTrailer: Int? = nil, _ decode: @escaping ATTDecoder) {
        self.name = name; self.size = size; self.fixed = fixed; self.decode = decode
        valueLayout = valueTrailer.map { ATTValueLayout(minimumSize: 1 + size, trailer: $0) }
    }
}

/// Where a PDU that carries one whole attribute value holds it: opcode(1) handle(2) value, then `trailer` bytes
/// (Write Request, Write Command, Handle Value Notification and Indication: none; Signed Write Command: the 12-byte
/// authentication signature, Core Spec Vol 3, Part F, 3.4.5.4). Read from ``ATTTable``, so the analyzer's fast path
/// finds a value without a typed decode and without a rule of its own.
public struct ATTValueLayout: Hashable, Sendable {
    /// The shortest such PDU, opcode included (1 + the table's minimum parameter size).
    public var minimumSize: Int
    public var trailer: Int

    /// The handle and the value's byte range in `pdu` (opcode at 0); nil when `pdu` is shorter than ``minimumSize``
    /// (then the typed decoder would refuse it).
    @inlinable @inline(__always) public func value(in pdu: UnsafeRawBufferPointer) -> ATTValueSpan? {
        guard pdu.count >= minimumSize else { return nil }
        return ATTValueSpan(handle: UInt16(pdu[1]) | UInt16(pdu[2]) << 8, range: 3..<(pdu.count &- trailer))
    }
}

/// The attribute handle of a value-carrying PDU and where its value lies in the PDU's bytes.
public struct ATTValueSpan: Hashable, Sendable {
    public var handle: UInt16
    public var range: Range<Int>
    @inlinable public init(handle: UInt16, range: Range<Int>) { self.handle = handle; self.range = range }
}

/// The ATT table (Core Spec 5.4 Vol 3, Part F, 3.4.8): every opcode with its name, size and decoder.
public enum ATTTable {
    public static let entries: [UInt8: ATTOpcodeInfo] = [
        0x01: .init("Error Response", size: 4, fixed: true) { input throws(DecodeError) in
            .errorResponse(
                ATTErrorResponse(
                    requestOpcode: ATTOpcode(try input.readUInt8()),
                    handle: try UInt16(parsingLittleEndian: &input),
                    error: ATTErrorCode(try input.readUInt8())))
        },
        0x02: .init("Exchange MTU Request", size: 2, fixed: true) { input throws(DecodeError) in
            .exchangeMTURequest(clientRxMTU: try UInt16(parsingLittleEndian: &input))
        },
        0x03: .init("Exchange MTU Response", size: 2, fixed: true) { input throws(DecodeError) in
            .exchangeMTUResponse(serverRxMTU: try UInt16(parsingLittleEndian: &input))
        },
        0x04: .init("Find Information Request", size: 4, fixed: true) { input throws(DecodeError) in
            .findInformationRequest(try ATTHandleRange(parsing: &input))
        },
        0x05: .init("Find Information Response", size: 5, fixed: false) { input throws(DecodeError) in
            let format = try input.readUInt8()
            let width: Int
            switch format {
            case 1: width = 2
            case 2: width = 16
            default: throw .invalidValue(field: "Find Information format", value: Int(format), offset: input.absoluteOffset - 1)
            }
            guard input.remaining % (2 + width) == 0 else {
                throw .invalidSize(expected: (input.remaining / (2 + width) + 1) * (2 + width), got: input.remaining)
            }
            var entries: [ATTHandleUUID] = []
            while !input.isAtEnd {
                entries.append(
                    ATTHandleUUID(
                        handle: try UInt16(parsingLittleEndian: &input),
                        uuid: try BluetoothUUID(parsingLittleEndian: &input, width: width)))
            }
            return .findInformationResponse(ATTFindInformationResponse(format: format, entries: entries))
        },
        0x06: .init("Find By Type Value Request", size: 6, fixed: false) { input throws(DecodeError) in
            .findByTypeValueRequest(
                ATTFindByTypeValueRequest(
                    range: try ATTHandleRange(parsing: &input),
                    type: try UInt16(parsingLittleEndian: &input),
                    value: input.readRemaining()))
        },
        0x07: .init("Find By Type Value Response", size: 4, fixed: false) { input throws(DecodeError) in
            guard input.remaining % 4 == 0 else { throw .invalidSize(expected: (input.remaining / 4 + 1) * 4, got: input.remaining) }
            var list: [ATTHandleRange] = []
            while !input.isAtEnd { list.append(try ATTHandleRange(parsing: &input)) }
            return .findByTypeValueResponse(list)
        },
        0x08: .init("Read By Type Request", size: 6, fixed: false) { input throws(DecodeError) in
            .readByTypeRequest(try ATTTable.typeRequest(&input))
        },
        0x09: .init("Read By Type Response", size: 3, fixed: false) { input throws(DecodeError) in
            let length = Int(try input.readUInt8())
            guard length >= 2 else {
                throw .invalidValue(field: "Read By Type Response length", value: length, offset: input.absoluteOffset - 1)
            }
            guard input.remaining % length == 0 else {
                throw .invalidValue(field: "Read By Type Response length", value: length, offset: input.absoluteOffset - 1)
            }
            var list: [ATTHandleValue] = []
            while !input.isAtEnd {
                list.append(ATTHandleValue(handle: try UInt16(parsingLittleEndian: &input), value: try input.readArray(length - 2)))
            }
            return .readByTypeResponse(list)
        },
        0x0A: .init("Read Request", size: 2, fixed: true) { input throws(DecodeError) in
            .readRequest(handle: try UInt16(parsingLittleEndian: &input))
        },
        0x0B: .init("Read Response", size: 0, fixed: false) { input throws(DecodeError) in .readResponse(value: input.readRemaining()) },
        0x0C: .init("Read Blob Request", size: 4, fixed: true) { input throws(DecodeError) in
            .readBlobRequest(handle: try UInt16(parsingLittleEndian: &input), offset: try UInt16(parsingLittleEndian: &input))
        },
        0x0D: .init("Read Blob Response", size: 0, fixed: false) { input throws(DecodeError) in
            .readBlobResponse(value: input.readRemaining())
        },
        0x0E: .init("Read Multiple Request", size: 4, fixed: false) { input throws(DecodeError) in
            .readMultipleRequest(handles: try ATTTable.handles(&input))
        },
        0x0F: .init("Read Multiple Response", size: 0, fixed: false) { input throws(DecodeError) in
            .readMultipleResponse(values: input.readRemaining())
        },
        0x10: .init("Read By Group Type Request", size: 6, fixed: false) { input throws(DecodeError) in
            .readByGroupTypeRequest(try ATTTable.typeRequest(&input))
        },
        0x11: .init("Read By Group Type Response", size: 5, fixed: false) { input throws(DecodeError) in
            let length = Int(try input.readUInt8())
            guard length >= 4, input.remaining % length == 0 else {
                throw .invalidValue(field: "Read By Group Type Response length", value: length, offset: input.absoluteOffset - 1)
            }
            var list: [ATTGroupValue] = []
            while !input.isAtEnd {
                list.append(
                    ATTGroupValue(
                        start: try UInt16(parsingLittleEndian: &input), end: try UInt16(parsingLittleEndian: &input),
                        value: try input.readArray(length - 4)))
            }
            return .readByGroupTypeResponse(list)
        },
        0x12: .init("Write Request", size: 2, fixed: false, valueTrailer: 0) { input throws(DecodeError) in
            .writeRequest(handle: try UInt16(parsingLittleEndian: &input), value: input.readRemaining())
        },
        0x13: .init("Write Response", size: 0, fixed: true) { _ throws(DecodeError) in .writeResponse },
        0x16: .init("Prepare Write Request", size: 4, fixed: false) { input throws(DecodeError) in
            .prepareWriteRequest(
                handle: try UInt16(parsingLittleEndian: &input), offset: try UInt16(parsingLittleEndian: &input),
                value: input.readRemaining())
        },
        0x17: .init("Prepare Write Response", size: 4, fixed: false) { input throws(DecodeError) in
            .prepareWriteResponse(
                handle: try UInt16(parsingLittleEndian: &input), offset: try UInt16(parsingLittleEndian: &input),
                value: input.readRemaining())
        },
        0x18: .init("Execute Write Request", size: 1, fixed: true) { input throws(DecodeError) in
            .executeWriteRequest(flags: try input.readUInt8())
        },
        0x19: .init("Execute Write Response", size: 0, fixed: true) { _ throws(DecodeError) in .executeWriteResponse },
        0x1B: .init("Handle Value Notification", size: 2, fixed: false, valueTrailer: 0) { input throws(DecodeError) in
            .handleValueNotification(handle: try UInt16(parsingLittleEndian: &input), value: input.readRemaining())
        },
        0x1D: .init("Handle Value Indication", size: 2, fixed: false, valueTrailer: 0) { input throws(DecodeError) in
            .handleValueIndication(handle: try UInt16(parsingLittleEndian: &input), value: input.readRemaining())
        },
        0x1E: .init("Handle Value Confirmation", size: 0, fixed: true) { _ throws(DecodeError) in .handleValueConfirmation },
        0x20: .init("Read Multiple Variable Request", size: 4, fixed: false) { input throws(DecodeError) in
            .readMultipleVariableRequest(handles: try ATTTable.handles(&input))
        },
        0x21: .init("Read Multiple Variable Response", size: 0, fixed: false) { input throws(DecodeError) in
            var list: [ATTLengthValue] = []
            while !input.isAtEnd {
                let length = try UInt16(parsingLittleEndian: &input)
                // The last tuple may be cut at ATT_MTU (3.4.4.12).
                list.append(ATTLengthValue(length: length, value: try input.readArray(min(Int(length), input.remaining))))
            }
            return .readMultipleVariableResponse(list)
        },
        0x23: .init("Multiple Handle Value Notification", size: 4, fixed: false) { input throws(DecodeError) in
            var list: [ATTHandleValue] = []
            while !input.isAtEnd {
                let handle = try UInt16(parsingLittleEndian: &input)
                let length = Int(try UInt16(parsingLittleEndian: &input))
                list.append(ATTHandleValue(handle: handle, value: try input.readArray(length)))
            }
            return .multipleHandleValueNotification(list)
        },
        0x52: .init("Write Command", size: 2, fixed: false, valueTrailer: 0) { input throws(DecodeError) in
            .writeCommand(handle: try UInt16(parsingLittleEndian: &input), value: input.readRemaining())
        },
        0xD2: .init("Signed Write Command", size: 14, fixed: false, valueTrailer: 12) { input throws(DecodeError) in
            let handle = try UInt16(parsingLittleEndian: &input)
            let value = try input.readArray(input.remaining - 12)
            return .signedWriteCommand(handle: handle, value: value, signature: try input.readArray(12))
        },
    ]

    /// ``ATTOpcodeInfo/valueLayout`` by opcode value, as a flat array for the per-PDU path (no hashing).
    public static let valueLayouts: [ATTValueLayout?] = (0...255).map { entries[UInt8($0)]?.valueLayout }

    static func typeRequest(_ input: inout ByteReader) throws(DecodeError) -> ATTTypeRequest {
        let range = try ATTHandleRange(parsing: &input)
        let width = input.remaining
        guard width == 2 || width == 16 else { throw .invalidSize(expected: 4 + (width < 2 ? 2 : 16), got: 4 + width) }
        return ATTTypeRequest(range: range, type: try BluetoothUUID(parsingLittleEndian: &input, width: width))
    }

    static func handles(_ input: inout ByteReader) throws(DecodeError) -> [UInt16] {
        guard input.remaining % 2 == 0 else { throw .invalidSize(expected: input.remaining + 1, got: input.remaining) }
        var list: [UInt16] = []
        while !input.isAtEnd { list.append(try UInt16(parsingLittleEndian: &input)) }
        return list
    }
}
