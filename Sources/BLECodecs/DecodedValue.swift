import BLECore

/// What an analysis role means for a decoded message, so transfer and OTA trackers can follow a
/// proprietary protocol without knowing its spec. An open set: specs may name others.
public struct Role: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }
    /// Packet / record index (int).
    public static let sequence = Role("sequence")
    /// How many records or packets will follow (int).
    public static let totalCount = Role("total-count")
    /// How many image bytes an update will carry (int): the OTA session's announced size.
    public static let totalSize = Role("total-size")
    /// The peer asks for this packet index again (int).
    public static let resendRequest = Role("resend-request")
    /// The message starts an update (value: the field's int, or 1 when set on a message).
    public static let otaStart = Role("ota-start")
    /// Image bytes of an update (bytes).
    public static let otaData = Role("ota-data")
    /// The update's outcome code (int); ``DecodedValue/otaSuccess`` tells success or failure.
    public static let otaResult = Role("ota-result")
    /// The message ends a multi-part transfer.
    public static let messageTerminator = Role("message-terminator")
    public var description: String { rawValue }
    public static func < (a: Role, b: Role) -> Bool { a.rawValue < b.rawValue }
}

/// The value a role carries.
public enum RoleValue: Hashable, Sendable {
    case int(Int64)
    case bytes([UInt8])
    /// The role applies to the whole message.
    case present

    public var intValue: Int64? { if case let .int(v) = self { v } else { nil } }
    public var bytesValue: [UInt8]? { if case let .bytes(b) = self { b } else { nil } }
}

/// A decoded field value.
public enum FieldValue: Hashable, Sendable {
    case int(Int64)
    case double(Double)
    case string(String)
    case bytes([UInt8])
    case bool(Bool)
    case list([DecodedField])
    case nested([DecodedField])
    /// An enumerated value: the raw number and its name (nil when the spec has no name for it).
    case named(Int64, String?)
    /// A bit set: the raw number and the names of the bits that are set.
    case flags(Int64, [String])

    /// The integer behind the value, when there is one.
    public var intValue: Int64? {
        switch self {
        case let .int(v), let .named(v, _), let .flags(v, _): v
        case let .bool(b): b ? 1 : 0
        default: nil
        }
    }
}

/// One named field of a decoded value, in wire order.
public struct DecodedField: Hashable, Sendable, CustomStringConvertible {
    public var name: String
    public var value: FieldValue
    /// Unit for numbers (`bpm`, `°C`, `kcal`), shown after the value.
    public var unit: String?
    /// Byte offset of the field in the value (nil for synthesised fields).
    public var offset: Int?
    /// Framing fields (sync bytes, selectors, checksums) kept in ``DecodedValue/fields`` but left out of the summary.
    public var hidden: Bool

    public init(_ name: String, _ value: FieldValue, unit: String? = nil, offset: Int? = nil, hidden: Bool = false) {
        self.name = name
        self.value = value
        self.unit = unit
        self.offset = offset
        self.hidden = hidden
    }

    /// Human text: `72 bpm`, `near(0)`, `0x0c`, `[a, b]`.
    public var display: String {
        let text: String
        switch value {
        case let .int(v): text = String(v)
        case let .double(d): text = formatDouble(d)
        case let .string(s): text = "\"" + s + "\""
        case let .bytes(b): text = b.isEmpty ? "(empty)" : hexString(b, separator: " ")
        case let .bool(b): text = b ? "true" : "false"
        case let .list(items): text = "[" + items.map(\.display).joined(separator: ", ") + "]"
        case let .nested(fields): text = "{" + fields.map(\.description).joined(separator: " ") + "}"
        case let .named(v, n): text = n.map { "\($0)(\(v))" } ?? "unknown(\(v))"
        case let .flags(v, names): text = names.isEmpty ? hex(UInt64(truncatingIfNeeded: v), width: 2) : names.joined(separator: "|")
        }
        if let unit, !unit.isEmpty { return text + " " + unit }
        return text
    }

    public var description: String { name + "=" + display }
}

func formatDouble(_ d: Double) -> String {
    if d.isFinite, d == d.rounded(), abs(d) < 1e15 { return String(Int64(d)) }
    if d.isFinite, abs(d) < 1e12 {
        var s = String(fractionDigits: 4, d)
        while s.hasSuffix("0") { s.removeLast() }
        if s.hasSuffix(".") { s.removeLast() }
        return s
    }
    return d.description
}

/// The result of decoding one attribute value.
public struct DecodedValue: Hashable, Sendable, CustomStringConvertible {
    /// Codec that produced it: `sig.heart-rate-measurement`, `bracelet`.
    public var codec: String
    /// Message name within the codec: `countResponse`; the characteristic name for SIG codecs.
    public var message: String
    public var fields: [DecodedField]
    /// False when a checksum, expected constant or size check failed (fields are still filled).
    public var valid: Bool
    public var problems: [String]
    /// Analysis roles found in the message (see ``Role``).
    public var roles: [Role: RoleValue]
    /// For an `ota-result` role: true for a success value, false for a failure value, nil otherwise.
    public var otaSuccess: Bool?

    public init(
        codec: String, message: String, fields: [DecodedField] = [], valid: Bool = true,
        problems: [String] = [], roles: [Role: RoleValue] = [:], otaSuccess: Bool? = nil
    ) {
        self.codec = codec
        self.message = message
        self.fields = fields
        self.valid = valid
        self.problems = problems
        self.roles = roles
        self.otaSuccess = otaSuccess
    }

    /// One line: `bracelet.countResponse total=12 ✓` (✗ and the problems when invalid).
    public var summary: String {
        var s = codec + "." + message
        let shown = fields.filter { !$0.hidden }
        if !shown.isEmpty { s += " " + shown.map(\.description).joined(separator: " ") }
        s += valid ? " ✓" : " ✗ " + problems.joined(separator: "; ")
        return s
    }

    public var description: String { summary }

    /// The first field with this name (dotted paths reach into nested messages: `event.level`).
    public func field(_ path: String) -> DecodedField? {
        var list = fields
        var result: DecodedField?
        for part in path.split(separator: ".") {
            guard let f = list.first(where: { $0.name == part }) else { return nil }
            result = f
            switch f.value {
            case let .nested(inner), let .list(inner): list = inner
            default: list = []
            }
        }
        return result
    }

    /// Integer value of a role, if present.
    public func role(_ role: Role) -> Int64? { roles[role]?.intValue }
}

/// How the value travelled (ATT operation), for codec matching.
public enum AttributeOperation: String, Hashable, Sendable, CaseIterable {
    case write, writeCommand = "write-command", notify, indicate, read, unknown

    /// `write` and `writeCommand` are host → device writes; `notify`/`indicate` device → host.
    public var isWrite: Bool { self == .write || self == .writeCommand }
    public var isServerInitiated: Bool { self == .notify || self == .indicate }
}

/// Where a value was seen: used to pick the codec.
public struct CodecContext: Hashable, Sendable {
    public var service: BluetoothUUID?
    /// The attribute type: characteristic value UUID, or a descriptor / declaration UUID.
    public var characteristic: BluetoothUUID?
    public var handle: UInt16?
    public var direction: Direction
    public var operation: AttributeOperation
    /// Set for the SDU of an L2CAP credit-based channel (LE CoC): the channel's PSM; such a value has no attribute.
    /// Only specs whose `match` names this `psm` decode it.
    public var psm: UInt16?

    public init(
        service: BluetoothUUID? = nil, characteristic: BluetoothUUID? = nil, handle: UInt16? = nil,
        direction: Direction = .unknown, operation: AttributeOperation = .unknown, psm: UInt16? = nil
    ) {
        self.service = service
        self.characteristic = characteristic
        self.handle = handle
        self.direction = direction
        self.operation = operation
        self.psm = psm
    }
}

/// Something that turns attribute bytes into a ``DecodedValue``.
public protocol ValueCodec: Sendable {
    var name: String { get }
    /// Nil when the codec does not apply to this value; a value with `valid == false` when it applies but the bytes are wrong.
    func decode(_ value: UnsafeRawBufferPointer, context: CodecContext) -> DecodedValue?
}

extension ValueCodec {
    public func decode(_ value: [UInt8], context: CodecContext) -> DecodedValue? {
        value.withUnsafeBytes { decode($0, context: context) }
    }
}
