import BLECore
import Synchronization

/// Where a length or count comes from.
enum LengthSource: Sendable {
    case fixed(Int)
    /// An earlier integer field (its slot), plus a constant adjustment.
    case slot(Int, adjust: Int)
    /// Everything left in the current window.
    case rest
}

/// A presence condition: `slot & mask != 0`, `slot == value`, or `slot != value`.
struct Condition: Sendable {
    enum Op: Sendable { case mask, equals, notEquals }
    var slot: Int
    var op: Op
    var value: Int64
    func holds(_ slots: UnsafeMutableBufferPointer<Int64>) -> Bool {
        let v = slots[slot]
        switch op {
        case .mask: return v & value != 0
        case .equals: return v == value
        case .notEquals: return v != value
        }
    }
}

/// Which operations or directions a spec or message is limited to (bit sets: no hashing per value).
struct DirectionFilter: Sendable {
    /// Bit `1 << op.bit` per allowed operation.
    var operations: UInt8 = 0
    /// Bit `1 << direction.rawValue` per allowed direction.
    var directions: UInt8 = 0
    var isAny: Bool { operations == 0 && directions == 0 }

    static func bit(_ op: AttributeOperation) -> UInt8 {
        switch op {
        case .write: 1
        case .writeCommand: 2
        case .notify: 4
        case .indicate: 8
        case .read: 16
        case .unknown: 0
        }
    }

    mutating func insert(_ op: AttributeOperation) { operations |= DirectionFilter.bit(op) }
    mutating func insert(_ d: Direction) { directions |= 1 << d.rawValue }

    /// Lenient when the context knows nothing about the direction.
    func matches(_ c: CodecContext) -> Bool {
        if isAny { return true }
        if c.operation == .unknown && c.direction == .unknown { return true }
        if operations != 0, c.operation != .unknown, operations & DirectionFilter.bit(c.operation) != 0 { return true }
        if directions != 0, c.direction != .unknown, directions & (1 << c.direction.rawValue) != 0 { return true }
        if c.operation == .unknown, operations != 0, directions == 0 {
            // Only a direction is known: writes are tx, everything else rx.
            let implied: Direction = operations & 3 != 0 ? .tx : .rx
            return c.direction == implied
        }
        return false
    }
}

/// A sub-field of an integer field that occupies some of its bits.
struct BitField: Sendable {
    var name: String
    var shift: Int
    var mask: UInt64
    var slot: Int
    var names: [(Int64, String)]
    var role: Role?
}

final class CompiledField: Sendable {
    enum Kind: Sendable {
        case int(width: Int, signed: Bool, bigEndian: Bool)
        case sfloat(bigEndian: Bool)
        case float(bigEndian: Bool)
        case bytes(LengthSource)
        case string(LengthSource, ascii: Bool)
        case array(LengthSource, CompiledGroup)
        case group(LengthSource?, CompiledGroup)
    }
    enum Expect: Sendable { case value(Int64), frameLength, bytes([UInt8]) }

    let name: String
    let kind: Kind
    let slot: Int
    let unit: String?
    let scale: Double?
    let offset: Double?
    let expect: Expect?
    let role: Role?
    let success: [Int64]
    let failure: [Int64]
    /// Sorted by value.
    let names: [(Int64, String)]
    let flags: [(Int, String)]
    let bits: [BitField]
    let condition: Condition?
    let optional: Bool
    let hidden: Bool

    init(
        name: String, kind: Kind, slot: Int, unit: String?, scale: Double?, offset: Double?, expect: Expect?, role: Role?,
        success: [Int64], failure: [Int64], names: [(Int64, String)], flags: [(Int, String)], bits: [BitField],
        condition: Condition?, optional: Bool, hidden: Bool
    ) {
        self.name = name; self.kind = kind; self.slot = slot; self.unit = unit; self.scale = scale; self.offset = offset
        self.expect = expect; self.role = role; self.success = success; self.failure = failure
        self.names = names.sorted { $0.0 < $1.0 }; self.flags = flags; self.bits = bits; self.condition = condition
        self.optional = optional; self.hidden = hidden
        presentation =
            !bits.isEmpty
            ? .bits
            : !flags.isEmpty
                ? .flags
                : !names.isEmpty
                    ? .named
                    : (scale != nil || offset != nil) ? .scaled : .plain
        checks = expect != nil || role != nil
    }

    /// How an integer is shown, decided once so decoding touches only the table it needs.
    enum Presentation: UInt8, Sendable { case plain, scaled, named, flags, bits }
    let presentation: Presentation
    /// Whether `expect` or `role` need looking at.
    let checks: Bool
}

final class CompiledMessage: Sendable {
    let id: Int64
    let name: String
    let filter: DirectionFilter
    let role: Role?
    let group: CompiledGroup
    init(id: Int64, name: String, filter: DirectionFilter, role: Role?, group: CompiledGroup) {
        self.id = id; self.name = name; self.filter = filter; self.role = role; self.group = group
    }
}

final class CompiledGroup: Sendable {
    let fields: [CompiledField]
    let selectSlot: Int?
    let selectName: String?
    /// Sorted by id.
    let messages: [CompiledMessage]
    init(fields: [CompiledField], selectSlot: Int?, selectName: String?, messages: [CompiledMessage]) {
        self.fields = fields; self.selectSlot = selectSlot; self.selectName = selectName
        self.messages = messages.sorted { $0.id < $1.id }
    }
}

struct ChecksumSpec: Sendable {
    var algorithm: ChecksumAlgorithm
    var from: Int
    var to: Int
    var at: Int
    var bigEndian: Bool
}

struct Matcher: Sendable {
    var services: [BluetoothUUID] = []
    var characteristics: [BluetoothUUID] = []
    var handles: [UInt16] = []
    /// `psm`: the SDUs of L2CAP credit-based channels to these PSMs (never attribute values).
    var psms: [UInt16] = []
    var filter = DirectionFilter()
    var prefix: [UInt8] = []

    func matches(_ value: UnsafeRawBufferPointer, _ c: CodecContext) -> Bool {
        if !mayMatch(c) || !filter.matches(c) { return false }
        if !prefix.isEmpty {
            guard value.count >= prefix.count else { return false }
            for i in 0..<prefix.count where value[i] != prefix[i] { return false }
        }
        return true
    }

    /// Whether values of this attribute could ever match (the parts of the match that do not
    /// depend on the value or its direction).
    func mayMatch(_ c: CodecContext) -> Bool {
        if !psms.isEmpty {
            guard let psm = c.psm, psms.contains(psm) else { return false }
        }
        var charOK = false
        if !characteristics.isEmpty {
            guard let ch = c.characteristic, characteristics.contains(ch) else { return false }
            charOK = true
        }
        if !services.isEmpty {
            if let s = c.service {
                if !services.contains(s) { return false }
            } else if !charOK {
                return false
            }
        }
        if !handles.isEmpty {
            guard let h = c.handle, handles.contains(h) else { return false }
        }
        return true
    }
}

/// A codec spec compiled once into a tree of fields with resolved references (slots), so that
/// decoding does no YAML or dictionary lookups.
public final class DeclarativeCodec: ValueCodec {
    public let name: String
    public let summary: CodecSpecSummary
    let matchers: [Matcher]
    /// One layout per part (`parts:` in the spec); a spec without `parts` is one part that always matches.
    let parts: [Part]
    let slotCount: Int

    /// One layout of a spec: where it applies within the spec's match, its checksum and its fields.
    struct Part: Sendable {
        var name: String?
        /// Empty: every value the spec's own match accepts.
        var matchers: [Matcher] = []
        var checksum: ChecksumSpec?
        var root = CompiledGroup(fields: [], selectSlot: nil, selectName: nil, messages: [])

        func mayApply(_ context: CodecContext) -> Bool {
            matchers.isEmpty || matchers.contains { $0.mayMatch(context) }
        }

        func applies(_ value: UnsafeRawBufferPointer, _ context: CodecContext) -> Bool {
            if matchers.isEmpty { return true }
            return matchers.withUnsafeBufferPointer { ms in
                for i in 0..<ms.count where ms[i].matches(value, context) { return true }
                return false
            }
        }
    }

    /// Whether the registry has decoded a value with this spec (a spec that matched nothing is said: `--codec`).
    private let used = Atomic<Bool>(false)

    init(name: String, summary: CodecSpecSummary, matchers: [Matcher], parts: [Part], slotCount: Int) {
        self.name = name; self.summary = summary; self.matchers = matchers; self.parts = parts
        self.slotCount = slotCount
    }

    /// True once ``CodecRegistry`` decoded a value with this spec.
    public var hasDecoded: Bool { used.load(ordering: .relaxed) }

    /// Notes a decode: one relaxed load per value, a store only the first time.
    func markUsed() {
        if !used.load(ordering: .relaxed) { used.store(true, ordering: .relaxed) }
    }

    /// Whether any value of the attribute in `context` could match (service, characteristic, handle; or PSM).
    public func mayApply(_ context: CodecContext) -> Bool {
        (matchers.isEmpty ? context.psm == nil : matchers.contains { Self.admits($0, context) && $0.mayMatch(context) })
            && parts.contains { $0.mayApply(context) }
    }

    /// An L2CAP SDU (a context with a PSM) is only for a top-level mapping that names `psm`: specs written for
    /// attribute values (a `prefix` or `direction` alone, or no `match`) never see channel data.
    static func admits(_ m: Matcher, _ context: CodecContext) -> Bool { context.psm == nil || !m.psms.isEmpty }

    public func applies(_ value: UnsafeRawBufferPointer, context: CodecContext) -> Bool {
        part(for: value, context: context) != nil
    }

    /// The first part whose match holds, when the spec's own match holds.
    func part(for value: UnsafeRawBufferPointer, context: CodecContext) -> Int? {
        if matchers.isEmpty {
            if context.psm != nil { return nil }
        } else {
            let any = matchers.withUnsafeBufferPointer { ms in
                for i in 0..<ms.count where Self.admits(ms[i], context) && ms[i].matches(value, context) { return true }
                return false
            }
            if !any { return nil }
        }
        for i in parts.indices where parts[i].applies(value, context) { return i }
        return nil
    }

    public func decode(_ value: UnsafeRawBufferPointer, context: CodecContext) -> DecodedValue? {
        guard let p = part(for: value, context: context) else { return nil }
        return decode(value, part: parts[p], context: context)
    }

    /// Decodes without checking where the value was seen (for `blescope codecs decode --codec`).
    ///
    /// With several parts, the first part whose own match holds in `context` decodes the value (the
    /// last part when none does).
    public func decodeUnconditionally(_ value: UnsafeRawBufferPointer, context: CodecContext = CodecContext()) -> DecodedValue {
        let p = parts.firstIndex { $0.applies(value, context) } ?? parts.count - 1
        return decode(value, part: parts[p], context: context)
    }

    func decode(_ value: UnsafeRawBufferPointer, part: Part, context: CodecContext) -> DecodedValue {
        let checksum = part.checksum, root = part.root
        return withUnsafeTemporaryAllocation(of: Int64.self, capacity: max(1, slotCount)) { slots in
            slots.initialize(repeating: 0)
            var run = Interpreter(slots: slots, context: context, total: value.count, messageName: nil)
            var window = value
            var checksumField: DecodedField?
            if let cs = checksum {
                checksumField = run.verify(cs, value)
                if cs.at < 0 {
                    let keep = max(0, value.count + cs.at)
                    window = UnsafeRawBufferPointer(rebasing: value[0..<min(keep, value.count)])
                }
            }
            var reader = ByteReader(window)
            var fields: [DecodedField] = []
            fields.reserveCapacity(16)
            if run.group(root, &reader, &fields, depth: 0), !reader.isAtEnd {
                run.problems.append("\(reader.remaining) trailing byte(s) not described by the spec")
            }
            if let checksumField { fields.append(checksumField) }
            return DecodedValue(
                codec: name, message: run.messageName ?? name, fields: fields, valid: run.problems.isEmpty,
                problems: run.problems, roles: run.roles, otaSuccess: run.otaSuccess)
        }
    }

    public func decodeUnconditionally(_ value: [UInt8], context: CodecContext = CodecContext()) -> DecodedValue {
        value.withUnsafeBytes { decodeUnconditionally($0, context: context) }
    }
}
