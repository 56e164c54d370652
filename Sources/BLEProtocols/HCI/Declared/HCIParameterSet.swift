import BLECore

/// An HCI parameter set declared once: where it travels, its name and its fields in wire order. Decoding, encoding,
/// the one-line summary, the size rule and the table row all follow from that one declaration (DESIGN §6.12; issue 29
/// point 3), as bumble declares a field once with `field(metadata=hci.metadata(2))`.
///
/// ```swift
/// public struct LEBIGSyncLost: HCIParameterSet {
///     public var bigHandle: UInt8 = 0
///     public var reason = HCIStatus.success
///     public init() {}
///     public static let carrier = HCICarrier.leSubevent(LESubevent(0x1E))
///     public static let name = "LE BIG Sync Lost"
///     public static let fields: [HCIField<Self>] = [.u8("bigHandle", \.bigHandle), .status("reason", \.reason)]
/// }
/// ```
/// and one line in ``HCIDeclaredSets/all``. Nothing else: no case in ``HCIEventParameters`` (it carries every declared
/// set as ``HCIEventParameters/declared(_:)``), no parser, no encoder, no summary, no row in ``HCIEventTable``.
///
/// **Reading one**: the event is `.declared(d)`; `d.as(LEDataLengthChange.self)` gives the typed value (the analyzer
/// switches on `d.value` with `case let x as T`). **Building one** (tests, Samples): `LEDataLengthChange { $0.handle =
/// 0x40 }` sets some fields of a zero value; `HCIEventParameters.declared(x)` wraps it. The round-trip, golden and
/// tshark cross-check tests hold every declared set's bytes and summary.
///
/// A parameter set that fails to parse (short, or bytes left over) is the table's usual `.raw`/`.leMeta` plus a finding,
/// as for every other event.
public protocol HCIParameterSet: HCICarriedParameters, CustomStringConvertible {
    /// The spec name (`LE CIS Established`), which names the command or event in every output.
    static var name: String { get }
    /// The fields in wire order.
    static var fields: [HCIField<Self>] { get }
    /// Every field at its zero value: what decoding starts from.
    init()
}

/// Parameters that name where they travel on their type: every declared set, and the hand-written lists that keep a
/// case of their own in ``HCIEventParameters`` (Number Of Completed Packets, the advertising reports …), so that an
/// event's code and subevent follow from its value without a switch per event.
public protocol HCICarriedParameters: WireCodable, HCISummary {
    /// Where the set travels: command parameters, Command Complete return parameters, an event, an LE subevent.
    static var carrier: HCICarrier { get }
}

/// Where a declared parameter set travels (Core Spec Vol 4, Part E, 5.4.1, 5.4.4, 7.7.14, 7.7.65).
public enum HCICarrier: Hashable, Sendable {
    case command(HCICommand)
    /// The return parameters of this command's Command Complete event.
    case returnParameters(HCICommand)
    case event(HCIEventCode)
    case leSubevent(LESubevent)
}

/// A group of fields repeated in a list (one CIS of LE Set CIG Parameters) or inlined in a larger set (the v1 part of
/// LE CIS Established v2).
public protocol HCIFieldGroup: Hashable, Sendable {
    static var fields: [HCIField<Self>] { get }
    init()
}

extension HCIFieldGroup {
    /// Every field at zero, then `build` sets some.
    public init(_ build: (inout Self) -> Void) {
        self.init()
        build(&self)
    }
}

extension HCIParameterSet {
    /// Every field at zero, then `build` sets some: `LEDataLengthChange { $0.handle = 0x40; $0.maxTxOctets = 251 }`.
    public init(_ build: (inout Self) -> Void) {
        self.init()
        build(&self)
    }

    @_semantics("optimize.sil.specialize.generic.never")
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        self.init()
        for field in Self.fields { try field.read(&self, &input) }
    }

    @_semantics("optimize.sil.specialize.generic.never")
    public func encode(into writer: inout ByteWriter) {
        for field in Self.fields { field.write(self, &writer) }
    }

    /// `name=value` pairs in wire order, as every HCI summary prints them (`handle=0x0060 cigSyncDelay=1416 µs`).
    public var summary: String { HCIFieldText.summary(self, Self.fields) }
    public var description: String { Self.name + " " + summary }

    /// The size rule the dispatcher checks before decoding: fixed when every field is.
    public static var size: HCIParameterSize {
        var total = 0
        for field in fields {
            guard let width = field.width else { return .atLeast(total + field.minimumWidth) }
            total += width
        }
        return .fixed(total)
    }

    /// The first field that is a connection (CIS, BIS or ACL) handle.
    public var connectionHandle: UInt16? { Self.fields.lazy.compactMap { $0.handleOf?(self) }.first }
    /// The first status or reason field.
    public var status: HCIStatus? { Self.fields.lazy.compactMap { $0.statusOf?(self) }.first }
    /// Each field by name, as a number where it has one (JSON and tests); lists as their element count.
    public var numbers: [(String, Int64)] { Self.fields.flatMap { $0.numbers(self) } }
}

/// One field of a declared parameter set: how to read, write and print it (Core Spec widths, little-endian).
public struct HCIField<Root>: Sendable {
    public let name: String
    /// Bytes on the wire; nil for variable fields (lists, length-prefixed bytes).
    public let width: Int?
    /// The fewest bytes a variable field takes (its count or length byte).
    let minimumWidth: Int
    let read: @Sendable (inout Root, inout ByteReader) throws(DecodeError) -> Void
    let write: @Sendable (Root, inout ByteWriter) -> Void
    let text: @Sendable (Root) -> String
    let numbers: @Sendable (Root) -> [(String, Int64)]
    var handleOf: (@Sendable (Root) -> UInt16)? = nil
    var statusOf: (@Sendable (Root) -> HCIStatus)? = nil

    init(
        name: String, width: Int?, minimumWidth: Int = 0,
        read: @escaping @Sendable (inout Root, inout ByteReader) throws(DecodeError) -> Void,
        write: @escaping @Sendable (Root, inout ByteWriter) -> Void, text: @escaping @Sendable (Root) -> String,
        numbers: @escaping @Sendable (Root) -> [(String, Int64)]
    ) {
        self.name = name; self.width = width; self.minimumWidth = minimumWidth
        self.read = read; self.write = write; self.text = text; self.numbers = numbers
    }
}

/// How a number prints in a summary.
public enum HCINumberFormat: Sendable {
    case decimal
    case hex
    /// `1416 µs`.
    case microseconds
    /// `20 ms`.
    case milliseconds
    /// Units of 1.25 ms (ISO interval): `10.00 ms`.
    case interval1250
    /// Units of 0.625 ms (advertising and scan intervals): `100.000 ms`.
    case interval625
    /// Units of 10 ms (BIG sync timeout): `1000 ms`.
    case timeout10
    /// An LE PHY, HCI encoding (1 1M, 2 2M, 3 Coded).
    case phy
    /// An LE PHY bit field (bit 0 1M, bit 1 2M, bit 2 Coded), as LE Set CIG Parameters and LE Create BIG carry it.
    case phyBits
    /// Enumerated: the value's name from the table, else hex.
    case named([UInt32: String])
    /// An enable byte: `true` (1), `false` (0), else hex (the byte is kept as it was, so it encodes back unchanged).
    public static let enable = HCINumberFormat.named([0: "false", 1: "true"])
    /// Not printed: a field the summary leaves out (the central's clock accuracy), still decoded and encoded.
    case hidden

    /// `v` as this format prints it; `bytes` is the field's width (hex prints two digits per byte: `0x0060`).
    func text(_ v: UInt64, bytes: Int = 1) -> String {
        switch self {
        case .decimal: String(v)
        case .hex: BLECore.hex(v, width: bytes * 2)
        case .microseconds: "\(v) µs"
        case .milliseconds: "\(v) ms"
        case .interval1250: String(fractionDigits: 2, Double(v) * 1.25) + " ms"
        case .interval625: String(fractionDigits: 3, Double(v) * 0.625) + " ms"
        case .timeout10: "\(v * 10) ms"
        case .phy: LEPHY(rawValue: UInt8(truncatingIfNeeded: v)).description
        case .phyBits:
            v == 0 ? "none" : [(1, "1M"), (2, "2M"), (4, "Coded")].filter { v & $0.0 != 0 }.map(\.1).joined(separator: "|")
        case .named(let names): names[UInt32(truncatingIfNeeded: v)] ?? BLECore.hex(v, width: 2)
        case .hidden: ""
        }
    }
}

enum HCIFieldText {
    @_semantics("optimize.sil.specialize.generic.never")
    static func summary<Root>(_ value: Root, _ fields: [HCIField<Root>]) -> String {
        var parts: [String] = []
        for field in fields {
            let t = field.text(value)
            if !t.isEmpty { parts.append(t) }
        }
        return parts.joined(separator: " ")
    }
}
