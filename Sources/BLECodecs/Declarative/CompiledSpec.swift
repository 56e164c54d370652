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

/// Runs a compiled group over a reader.
struct Interpreter {
    let slots: UnsafeMutableBufferPointer<Int64>
    let context: CodecContext
    let total: Int
    var messageName: String?
    var problems: [String] = []
    var roles: [Role: RoleValue] = [:]
    var otaSuccess: Bool?

    init(slots: UnsafeMutableBufferPointer<Int64>, context: CodecContext, total: Int, messageName: String?) {
        self.slots = slots; self.context = context; self.total = total; self.messageName = messageName
    }

    static let maxDepth = 16
    static let maxArray = 4096

    mutating func verify(_ cs: ChecksumSpec, _ value: UnsafeRawBufferPointer) -> DecodedField? {
        let n = value.count
        let from = cs.from < 0 ? n + cs.from : cs.from
        let to = cs.to <= 0 ? n + cs.to : cs.to
        let at = cs.at < 0 ? n + cs.at : cs.at
        let w = cs.algorithm.width
        guard from >= 0, from <= to, to <= n, at >= 0, at <= n - w else {
            problems.append("too short for the \(cs.algorithm.rawValue) checksum")
            return nil
        }
        let computed = cs.algorithm.compute(UnsafeRawBufferPointer(rebasing: value[from..<to]))
        var stored: UInt32 = 0
        for i in 0..<w {
            let b = UInt32(value[at + (cs.bigEndian ? i : w - 1 - i)])
            stored = stored << 8 | b
        }
        if stored != computed {
            problems.append(
                "bad checksum (\(cs.algorithm.rawValue)): stored \(hex(stored, width: 2 * w)), computed \(hex(computed, width: 2 * w))")
        }
        return DecodedField("checksum", .int(Int64(stored)), offset: at, hidden: true)
    }

    func length(_ source: LengthSource, _ reader: ByteReader) -> Int {
        switch source {
        case let .fixed(n): return n
        case let .slot(s, adjust):
            let v = slots[s]
            let (sum, overflow) = v.addingReportingOverflow(Int64(adjust))
            return overflow || sum < 0 || sum > Int64(Int32.max) ? -1 : Int(sum)
        case .rest: return reader.remaining
        }
    }

    /// Returns false when decoding had to stop (truncated input).
    mutating func group(_ g: CompiledGroup, _ reader: inout ByteReader, _ out: inout [DecodedField], depth: Int) -> Bool {
        guard depth < Interpreter.maxDepth else { problems.append("nesting too deep"); return false }
        for f in g.fields {
            if let c = f.condition, !c.holds(slots) { continue }
            if f.optional && reader.isAtEnd { continue }
            if !field(f, &reader, &out, depth: depth) { return false }
        }
        guard let sel = g.selectSlot else { return true }
        let id = slots[sel]
        var chosen: CompiledMessage?
        var lo = 0, hi = g.messages.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if g.messages[mid].id < id { lo = mid + 1 } else { hi = mid }
        }
        var i = lo
        while i < g.messages.count, g.messages[i].id == id {
            if g.messages[i].filter.matches(context) { chosen = g.messages[i]; break }
            i += 1
        }
        guard let m = chosen else {
            problems.append("no message for \(g.selectName ?? "selector")=\(hex(UInt64(truncatingIfNeeded: id), width: 2))")
            messageName = "unknown(\(hex(UInt64(truncatingIfNeeded: id), width: 2)))"
            out.append(DecodedField("payload", .bytes(reader.readRemaining()), offset: reader.absoluteOffset))
            return true
        }
        messageName = messageName.map { $0 + "." + m.name } ?? m.name
        if let r = m.role, roles[r] == nil { roles[r] = .present }
        return group(m.group, &reader, &out, depth: depth + 1)
    }

    mutating func truncated(_ f: CompiledField, _ need: Int, _ reader: ByteReader) -> Bool {
        problems.append("truncated at \(f.name): needs \(need) byte(s) at offset \(reader.absoluteOffset), \(reader.remaining) left")
        return false
    }

    mutating func field(_ f: CompiledField, _ reader: inout ByteReader, _ out: inout [DecodedField], depth: Int) -> Bool {
        let at = reader.absoluteOffset
        switch f.kind {
        case let .int(width, signed, bigEndian):
            guard reader.remaining >= width, let raw = try? reader.readBytes(width) else { return truncated(f, width, reader) }
            var u: UInt64 = 0
            for i in 0..<width { u = u << 8 | UInt64(raw[bigEndian ? i : width - 1 - i]) }
            var v = Int64(bitPattern: u)
            if signed, width < 8 {
                let shift = UInt64(64 - 8 * width)
                v = Int64(bitPattern: u << shift) >> Int64(shift)
            }
            integer(f, v, at: at, &out)
        case let .sfloat(be):
            guard let raw = try? reader.readInteger(UInt16.self, bigEndian: be) else { return truncated(f, 2, reader) }
            slots[f.slot] = Int64(raw)
            number(f, IEEE11073.sfloat(raw), raw: Int64(raw), at: at, &out)
        case let .float(be):
            guard let raw = try? reader.readInteger(UInt32.self, bigEndian: be) else { return truncated(f, 4, reader) }
            slots[f.slot] = Int64(raw)
            number(f, IEEE11073.float(raw), raw: Int64(raw), at: at, &out)
        case let .bytes(src):
            let n = length(src, reader)
            guard n >= 0, n <= reader.remaining, let raw = try? reader.readArray(n) else { return truncated(f, n, reader) }
            if case let .bytes(want)? = f.expect, want != raw {
                problems.append("\(f.name) is \(hexString(raw, separator: " ")), expected \(hexString(want, separator: " "))")
            }
            if let r = f.role { roles[r] = .bytes(raw) }
            out.append(DecodedField(f.name, .bytes(raw), unit: f.unit, offset: at, hidden: f.hidden))
        case let .string(src, ascii):
            let n = length(src, reader)
            guard n >= 0, n <= reader.remaining, let raw = try? reader.readBytes(n) else { return truncated(f, n, reader) }
            var end = raw.count
            while end > 0, raw[end - 1] == 0 { end -= 1 }
            let body = UnsafeRawBufferPointer(rebasing: raw[0..<end])
            let text =
                ascii
                ? String(decoding: body.map { $0 < 0x80 ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
                : String(decoding: body, as: UTF8.self)
            out.append(DecodedField(f.name, .string(text), unit: f.unit, offset: at, hidden: f.hidden))
        case let .array(src, element):
            let count = length(src, reader)
            guard count >= 0 else { return truncated(f, 0, reader) }
            var items: [DecodedField] = []
            var i = 0
            let isRest: Bool = if case .rest = src { true } else { false }
            var ok = true
            while isRest ? !reader.isAtEnd : i < count {
                if i >= Interpreter.maxArray { problems.append("\(f.name): more than \(Interpreter.maxArray) elements"); break }
                let before = reader.offset
                var inner: [DecodedField] = []
                if !group(element, &reader, &inner, depth: depth + 1) { ok = false }
                items.append(DecodedField("\(i)", .nested(inner), offset: reader.origin + before))
                i += 1
                if !ok || reader.offset == before { break }
            }
            out.append(DecodedField(f.name, .list(items), unit: f.unit, offset: at, hidden: f.hidden))
            return ok
        case let .group(src, inner):
            var inside: [DecodedField] = []
            if let src {
                let n = length(src, reader)
                guard n >= 0, n <= reader.remaining, var sub = try? reader.slice(n) else { return truncated(f, n, reader) }
                let ok = group(inner, &sub, &inside, depth: depth + 1)
                if ok, !sub.isAtEnd { problems.append("\(f.name): \(sub.remaining) byte(s) left over") }
                out.append(DecodedField(f.name, .nested(inside), offset: at, hidden: f.hidden))
                return true
            }
            let ok = group(inner, &reader, &inside, depth: depth + 1)
            out.append(DecodedField(f.name, .nested(inside), offset: at, hidden: f.hidden))
            return ok
        }
        return true
    }

    mutating func integer(_ f: CompiledField, _ v: Int64, at: Int, _ out: inout [DecodedField]) {
        slots[f.slot] = v
        if f.checks {
            switch f.expect {
            case let .value(want)? where want != v:
                problems.append("\(f.name) is \(v), expected \(want)")
            case .frameLength? where v != Int64(total):
                problems.append("\(f.name) is \(v), but the value has \(total) byte(s)")
            default: break
            }
            if let r = f.role {
                roles[r] = .int(v)
                if r == .otaResult {
                    if f.success.contains(v) {
                        otaSuccess = true
                    } else if f.failure.contains(v) || !f.success.isEmpty {
                        otaSuccess = false
                    }
                }
            }
        }
        let value: FieldValue
        switch f.presentation {
        case .plain: value = .int(v)
        case .scaled: value = .double(Double(v) * (f.scale ?? 1) + (f.offset ?? 0))
        case .named: value = .named(v, lookup(f.names, v))
        case .flags:
            var set: [String] = []
            for (bit, n) in f.flags where bit < 64 && (UInt64(bitPattern: v) >> UInt64(bit)) & 1 != 0 { set.append(n) }
            value = .flags(v, set)
        case .bits:
            var sub: [DecodedField] = []
            for b in f.bits {
                let x = Int64(bitPattern: (UInt64(bitPattern: v) >> UInt64(b.shift)) & b.mask)
                slots[b.slot] = x
                if let r = b.role { roles[r] = .int(x) }
                sub.append(
                    DecodedField(
                        b.name, b.names.isEmpty ? (b.mask == 1 ? .bool(x != 0) : .int(x)) : .named(x, lookup(b.names, x)), offset: at))
            }
            value = .nested(sub)
        }
        out.append(DecodedField(f.name, value, unit: f.unit, offset: at, hidden: f.hidden))
    }

    mutating func number(_ f: CompiledField, _ d: Double, raw: Int64, at: Int, _ out: inout [DecodedField]) {
        if let r = f.role { roles[r] = .int(raw) }
        out.append(DecodedField(f.name, .double(d * (f.scale ?? 1) + (f.offset ?? 0)), unit: f.unit, offset: at, hidden: f.hidden))
    }

    func lookup(_ names: [(Int64, String)], _ v: Int64) -> String? {
        var lo = 0, hi = names.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if names[mid].0 < v { lo = mid + 1 } else { hi = mid }
        }
        return lo < names.count && names[lo].0 == v ? names[lo].1 : nil
    }
}
