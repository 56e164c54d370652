import BLECore
import BLEYAML

/// Groups, messages and fields: the part of a spec that says how bytes decode.
extension SpecNodeCompiler {
    mutating func group(_ keys: [(String, Node, Node)], _ node: Node, _ path: String, fieldsKey: String) throws(CodecSpecError)
        -> CompiledGroup
    {
        var fields: [CompiledField] = []
        if let f = keys.first(where: { $0.0 == fieldsKey }) {
            guard let seq = f.2.sequence else { throw fail(f.2, path + fieldsKey, "expected a list of fields") }
            for (i, n) in seq.enumerated() { fields.append(try field(n, "\(path)\(fieldsKey)[\(i)]")) }
        }
        var selectSlot: Int?
        var selectName: String?
        let sel = keys.first(where: { $0.0 == "select" })
        let msgs = keys.first(where: { $0.0 == "messages" })
        if let sel {
            let n = try string(sel.2, path + "select")
            guard let slot = scope[n] else { throw fail(sel.2, path + "select", "no earlier integer field named '\(n)'") }
            selectSlot = slot
            selectName = n
        }
        var messages: [CompiledMessage] = []
        if let msgs {
            guard sel != nil else { throw fail(msgs.1, path + "messages", "'messages' needs 'select: <field>' to choose one") }
            guard let seq = msgs.2.sequence else { throw fail(msgs.2, path + "messages", "expected a list of messages") }
            for (i, n) in seq.enumerated() { messages.append(try message(n, "\(path)messages[\(i)]")) }
        } else if let sel {
            throw fail(sel.1, path + "select", "'select' needs a 'messages' list")
        }
        return CompiledGroup(fields: fields, selectSlot: selectSlot, selectName: selectName, messages: messages)
    }

    mutating func message(_ node: Node, _ path: String) throws(CodecSpecError) -> CompiledMessage {
        let keys = try mapping(node, path, allowed: ["id", "name", "direction", "role", "fields", "select", "messages", "description"])
        guard let idNode = keys.first(where: { $0.0 == "id" })?.2 else { throw fail(node, path, "missing 'id' (the selector value)") }
        guard let nameNode = keys.first(where: { $0.0 == "name" })?.2 else { throw fail(node, path, "missing 'name'") }
        let id = try integer(idNode, path + ".id")
        fieldCount += 1
        guard fieldCount <= 10_000 else { throw fail(node, path, "more than 10000 fields and messages (YAML aliases expanding?)") }
        let name = try string(nameNode, path + ".name")
        messageNames.append(name)
        var filter = DirectionFilter()
        var role: Role?
        for (key, _, value) in keys {
            if key == "direction" { filter = try direction(value, path + ".direction") }
            if key == "role" { role = try self.role(value, path + ".role"); roles.insert(role!) }
        }
        let saved = scope
        defer { scope = saved }
        let g = try group(keys, node, path + ".", fieldsKey: "fields")
        return CompiledMessage(id: id, name: name, filter: filter, role: role, group: g)
    }

    /// A value slot for a field; only numeric fields can be referenced by later `length`, `count`, `if` and `select`.
    mutating func newSlot(_ name: String, numeric: Bool = true) -> Int {
        let s = slotCount
        slotCount += 1
        if numeric { scope[name] = s } else { scope[name] = nil }
        return s
    }

    func lengthSource(_ node: Node, _ path: String, adjust: Int) throws(CodecSpecError) -> LengthSource {
        let s = try string(node, path)
        if s == "rest" { return .rest }
        if let v = parseInteger(s) {
            guard (0...65536).contains(v) else { throw fail(node, path, "length must be 0…65536") }
            return .fixed(Int(v))
        }
        guard let slot = scope[s] else { throw fail(node, path, "'\(s)' is neither a number, 'rest', nor an earlier numeric field") }
        return .slot(slot, adjust: adjust)
    }

    static let fieldKeys: Set<String> = [
        "name", "type", "endian", "length", "count", "adjust", "fields", "unit", "scale", "offset",
        "expect", "role", "success", "failure", "enum", "flags", "bits", "if", "optional",
        "hidden", "encoding", "description",
    ]

    mutating func field(_ node: Node, _ path: String) throws(CodecSpecError) -> CompiledField {
        let keys = try mapping(node, path, allowed: SpecNodeCompiler.fieldKeys)
        func value(_ k: String) -> Node? { keys.first(where: { $0.0 == k })?.2 }
        guard let nameNode = value("name") else { throw fail(node, path, "missing 'name'") }
        let name = try string(nameNode, path + ".name")
        guard let typeNode = value("type") else { throw fail(node, path, "missing 'type'") }
        let typeText = try string(typeNode, path + ".type").lowercased()
        var big = defaultBigEndian
        if let e = value("endian") { big = try endian(e, path + ".endian") }
        let adjust64 = try value("adjust").map { n throws(CodecSpecError) in try integer(n, path + ".adjust") } ?? 0
        guard (-65536...65536).contains(adjust64) else { throw fail(value("adjust"), path + ".adjust", "adjust must be within ±65536") }
        let adjust = Int(adjust64)
        fieldCount += 1
        guard fieldCount <= 10_000 else { throw fail(node, path, "more than 10000 fields (YAML aliases expanding?)") }

        var condition: Condition?
        if let c = value("if") { condition = try self.condition(c, path + ".if") }

        let kind: CompiledField.Kind
        var base = typeText
        if base.hasSuffix("le") && base.count > 2 && base.first != "b" {
            base.removeLast(2); big = false
        } else if base.hasSuffix("be") && base.count > 2 && base != "be" {
            base.removeLast(2); big = true
        }
        let intTypes: [String: (Int, Bool)] = [
            "u8": (1, false), "u16": (2, false), "u24": (3, false), "u32": (4, false), "u64": (8, false),
            "i8": (1, true), "i16": (2, true), "i24": (3, true), "i32": (4, true), "i64": (8, true),
        ]
        var isInt = false
        if let (w, signed) = intTypes[base] {
            kind = .int(width: w, signed: signed, bigEndian: big)
            isInt = true
        } else {
            switch typeText {
            case "sfloat": kind = .sfloat(bigEndian: big)
            case "float": kind = .float(bigEndian: big)
            case "bytes":
                kind = .bytes(
                    try value("length").map { n throws(CodecSpecError) in try lengthSource(n, path + ".length", adjust: adjust) } ?? .rest)
            case "string":
                var ascii = false
                if let e = value("encoding") {
                    switch try string(e, path + ".encoding").lowercased() {
                    case "ascii": ascii = true
                    case "utf8", "utf-8": ascii = false
                    case let s: throw fail(e, path + ".encoding", "encoding is ascii or utf8, got '\(s)'")
                    }
                }
                kind = .string(
                    try value("length").map { n throws(CodecSpecError) in try lengthSource(n, path + ".length", adjust: adjust) } ?? .rest,
                    ascii: ascii)
            case "array", "group":
                guard let fieldsNode = value("fields"), let seq = fieldsNode.sequence else {
                    throw fail(node, path, "\(typeText) needs 'fields: [...]'")
                }
                let saved = scope
                var inner: [CompiledField] = []
                for (i, n) in seq.enumerated() { inner.append(try field(n, "\(path).fields[\(i)]")) }
                scope = saved
                let g = CompiledGroup(fields: inner, selectSlot: nil, selectName: nil, messages: [])
                if typeText == "array" {
                    let src =
                        try value("count").map { n throws(CodecSpecError) in try lengthSource(n, path + ".count", adjust: adjust) } ?? .rest
                    kind = .array(src, g)
                } else {
                    kind = .group(
                        try value("length").map { n throws(CodecSpecError) in try lengthSource(n, path + ".length", adjust: adjust) }, g)
                }
            default:
                throw fail(
                    typeNode, path + ".type",
                    "unknown type '\(typeText)' (u8 u16 u24 u32 u64 i8 … i64 with optional le/be suffix, sfloat, float, bytes, string, array, group)"
                )
            }
        }
        for k in ["enum", "flags", "bits", "scale", "offset", "success", "failure"] where value(k) != nil && !isInt {
            if k == "scale" || k == "offset", case .sfloat = kind { continue }
            if k == "scale" || k == "offset", case .float = kind { continue }
            throw fail(value(k), path + "." + k, "'\(k)' applies to integer fields only")
        }
        if value("count") != nil, case .array = kind {
        } else if value("count") != nil {
            throw fail(value("count"), path + ".count", "'count' applies to arrays; use 'length' for bytes and strings")
        }
        if value("length") != nil, isInt { throw fail(value("length"), path + ".length", "integer fields have a fixed size") }

        var names: [(Int64, String)] = []
        if let e = value("enum") {
            for (k, kn, v) in try mapping(e, path + ".enum", allowed: anyKeys(e)) {
                guard let n = parseInteger(k) else { throw fail(kn, path + ".enum", "enum keys are numbers, got '\(k)'") }
                names.append((n, try string(v, path + ".enum.\(k)")))
            }
        }
        var flags: [(Int, String)] = []
        if let e = value("flags") {
            for (k, kn, v) in try mapping(e, path + ".flags", allowed: anyKeys(e)) {
                guard let n = parseInteger(k), (0..<64).contains(n) else {
                    throw fail(kn, path + ".flags", "flag keys are bit numbers 0…63, got '\(k)'")
                }
                flags.append((Int(n), try string(v, path + ".flags.\(k)")))
            }
        }
        var expect: CompiledField.Expect?
        if let e = value("expect") {
            let s = try string(e, path + ".expect")
            if s == "frame-length" {
                expect = .frameLength
            } else if isInt {
                expect = .value(try integer(e, path + ".expect"))
            } else if case .bytes = kind {
                expect = .bytes(try hexBytes(e, path + ".expect"))
            } else {
                throw fail(e, path + ".expect", "'expect' applies to integers and bytes")
            }
        }
        var role: Role?
        if let r = value("role") { role = try self.role(r, path + ".role"); roles.insert(role!) }
        var success: [Int64] = [], failure: [Int64] = []
        if let s = value("success") { for (n, p) in list(s, path + ".success") { success.append(try integer(n, p)) } }
        if let s = value("failure") { for (n, p) in list(s, path + ".failure") { failure.append(try integer(n, p)) } }
        var numeric = isInt
        if case .sfloat = kind { numeric = true }
        if case .float = kind { numeric = true }
        let slot = newSlot(name, numeric: numeric)
        var bits: [BitField] = []
        if let b = value("bits") {
            guard case let .int(width, _, _) = kind, let seq = b.sequence else {
                throw fail(b, path + ".bits", "expected a list of bit fields")
            }
            for (i, bn) in seq.enumerated() { bits.append(try bitField(bn, "\(path).bits[\(i)]", width: width)) }
        }
        return CompiledField(
            name: name, kind: kind, slot: slot, unit: try value("unit").map { n throws(CodecSpecError) in try string(n, path + ".unit") },
            scale: try value("scale").map { n throws(CodecSpecError) in try double(n, path + ".scale") },
            offset: try value("offset").map { n throws(CodecSpecError) in try double(n, path + ".offset") },
            expect: expect, role: role, success: success, failure: failure, names: names, flags: flags, bits: bits,
            condition: condition,
            optional: try value("optional").map { n throws(CodecSpecError) in try bool(n, path + ".optional") } ?? false,
            hidden: try value("hidden").map { n throws(CodecSpecError) in try bool(n, path + ".hidden") } ?? false)
    }

    func anyKeys(_ node: Node) -> Set<String> {
        Set(node.mapping?.keys.compactMap { $0.scalar?.string } ?? [])
    }

    mutating func bitField(_ node: Node, _ path: String, width: Int) throws(CodecSpecError) -> BitField {
        let keys = try mapping(node, path, allowed: ["name", "bit", "bits", "enum", "role", "description"])
        func value(_ k: String) -> Node? { keys.first(where: { $0.0 == k })?.2 }
        guard let nameNode = value("name") else { throw fail(node, path, "missing 'name'") }
        let name = try string(nameNode, path + ".name")
        var lo: Int64, hi: Int64
        if let b = value("bit") {
            lo = try integer(b, path + ".bit"); hi = lo
        } else if let b = value("bits") {
            let s = try string(b, path + ".bits")
            let parts = s.split(separator: "-").map { parseInteger(String($0)) }
            guard parts.count == 2, let a = parts[0], let z = parts[1] else {
                throw fail(b, path + ".bits", "bit range is 'low-high', e.g. '0-3'")
            }
            lo = min(a, z); hi = max(a, z)
        } else {
            throw fail(node, path, "needs 'bit: n' or 'bits: low-high'")
        }
        guard lo >= 0, hi < Int64(width * 8) else { throw fail(node, path, "bits \(lo)-\(hi) do not fit in \(width * 8) bits") }
        var names: [(Int64, String)] = []
        if let e = value("enum") {
            for (k, kn, v) in try mapping(e, path + ".enum", allowed: anyKeys(e)) {
                guard let n = parseInteger(k) else { throw fail(kn, path + ".enum", "enum keys are numbers, got '\(k)'") }
                names.append((n, try string(v, path + ".enum.\(k)")))
            }
        }
        var role: Role?
        if let r = value("role") { role = try self.role(r, path + ".role"); roles.insert(role!) }
        let count = hi - lo + 1
        let mask: UInt64 = count >= 64 ? .max : (1 << UInt64(count)) - 1
        return BitField(name: name, shift: Int(lo), mask: mask, slot: newSlot(name), names: names.sorted { $0.0 < $1.0 }, role: role)
    }

    func condition(_ node: Node, _ path: String) throws(CodecSpecError) -> Condition {
        let keys = try mapping(node, path, allowed: ["field", "mask", "equals", "not-equals"])
        guard let f = keys.first(where: { $0.0 == "field" }) else { throw fail(node, path, "needs 'field: <earlier field>'") }
        let name = try string(f.2, path + ".field")
        guard let slot = scope[name] else { throw fail(f.2, path + ".field", "no earlier numeric field named '\(name)'") }
        for (key, _, v) in keys where key != "field" {
            let x = try integer(v, path + "." + key)
            return Condition(slot: slot, op: key == "mask" ? .mask : key == "equals" ? .equals : .notEquals, value: x)
        }
        throw fail(node, path, "needs one of 'mask', 'equals', 'not-equals'")
    }
}
