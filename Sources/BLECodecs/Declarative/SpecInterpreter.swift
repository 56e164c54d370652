import BLECore

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
