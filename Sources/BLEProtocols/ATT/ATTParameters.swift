import BLECore

/// Attribute handle range: starting handle(2) ending handle(2).
public struct ATTHandleRange: Hashable, Sendable, CustomStringConvertible {
    public var start: UInt16
    public var end: UInt16
    public init(start: UInt16, end: UInt16) { self.start = start; self.end = end }
    init(parsing input: inout ByteReader) throws(DecodeError) {
        start = try UInt16(parsingLittleEndian: &input)
        end = try UInt16(parsingLittleEndian: &input)
    }
    func encode(into w: inout ByteWriter) { w.write(littleEndian: start); w.write(littleEndian: end) }
    public var description: String { "\(hex(start))–\(hex(end))" }
}

/// Error Response (Vol 3, Part F, 3.4.1.1): request opcode(1) handle(2) error code(1).
public struct ATTErrorResponse: Hashable, Sendable {
    public var requestOpcode: ATTOpcode
    public var handle: UInt16
    public var error: ATTErrorCode
    public init(requestOpcode: ATTOpcode, handle: UInt16, error: ATTErrorCode) {
        self.requestOpcode = requestOpcode; self.handle = handle; self.error = error
    }
}

/// (handle, UUID) pair of a Find Information Response.
public struct ATTHandleUUID: Hashable, Sendable {
    public var handle: UInt16
    public var uuid: BluetoothUUID
    public init(handle: UInt16, uuid: BluetoothUUID) { self.handle = handle; self.uuid = uuid }
}

/// Find Information Response (3.4.3.2): format(1: 1 = 16-bit UUIDs, 2 = 128-bit) then (handle, UUID) pairs.
public struct ATTFindInformationResponse: Hashable, Sendable {
    public var format: UInt8
    public var entries: [ATTHandleUUID]
    public init(format: UInt8, entries: [ATTHandleUUID]) { self.format = format; self.entries = entries }
}

/// Find By Type Value Request (3.4.3.3): range(4) attribute type(2, 16-bit UUID) value.
public struct ATTFindByTypeValueRequest: Hashable, Sendable {
    public var range: ATTHandleRange
    public var type: UInt16
    public var value: [UInt8]
    public init(range: ATTHandleRange, type: UInt16, value: [UInt8]) { self.range = range; self.type = type; self.value = value }
}

/// Read By Type / Read By Group Type request (3.4.4.1, 3.4.4.9): range(4) type (2- or 16-byte UUID).
public struct ATTTypeRequest: Hashable, Sendable {
    public var range: ATTHandleRange
    public var type: BluetoothUUID
    public init(range: ATTHandleRange, type: BluetoothUUID) { self.range = range; self.type = type }
}

/// (handle, value) pair: Read By Type Response entries and Multiple Handle Value Notification entries.
public struct ATTHandleValue: Hashable, Sendable {
    public var handle: UInt16
    public var value: [UInt8]
    public init(handle: UInt16, value: [UInt8]) { self.handle = handle; self.value = value }
}

/// (start, end, value) of a Read By Group Type Response (3.4.4.10).
public struct ATTGroupValue: Hashable, Sendable {
    public var start: UInt16
    public var end: UInt16
    public var value: [UInt8]
    public init(start: UInt16, end: UInt16, value: [UInt8]) { self.start = start; self.end = end; self.value = value }
}

/// Length Value Tuple of a Read Multiple Variable Response (3.4.4.12): length(2) value. The last tuple may be
/// cut at ATT_MTU, so `value.count` may be less than `length`.
public struct ATTLengthValue: Hashable, Sendable {
    public var length: UInt16
    public var value: [UInt8]
    public init(length: UInt16, value: [UInt8]) { self.length = length; self.value = value }
    public init(value: [UInt8]) { self.init(length: UInt16(truncatingIfNeeded: value.count), value: value) }
    public var isTruncated: Bool { value.count < Int(length) }
}
