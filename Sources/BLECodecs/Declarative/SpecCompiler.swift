import BLECore
import Yams

/// Why a codec spec was rejected: where (file, line, column, field path) and what is wrong.
public struct CodecSpecError: Error, Hashable, Sendable, CustomStringConvertible {
    public var file: String?
    /// 1-based line and column of the offending YAML node, when known.
    public var line: Int?
    public var column: Int?
    /// Path of the offending element: `messages[2].fields[0].type`.
    public var path: String
    public var message: String

    public init(file: String? = nil, line: Int? = nil, column: Int? = nil, path: String, message: String) {
        self.file = file; self.line = line; self.column = column; self.path = path; self.message = message
    }

    /// `bracelet.yaml:12:9: messages[0].fields[1].type: unknown type 'u9' (expected u8, u16, …)`.
    public var description: String {
        var s = file ?? "<spec>"
        if let line { s += ":\(line)" + (column.map { ":\($0)" } ?? "") }
        s += ": "
        if !path.isEmpty { s += path + ": " }
        return s + message
    }
}

/// What a loaded spec provides, for `blescope codecs list`.
public struct CodecSpecSummary: Hashable, Sendable {
    public var name: String
    public var description: String?
    public var file: String?
    /// Message names, in spec order.
    public var messages: [String]
    /// Roles the spec declares anywhere.
    public var roles: [Role]
    /// Human text of where it applies: `service 0xFFE0, characteristic 0xFFE1|0xFFE2, prefix a5`.
    public var appliesTo: String
}

/// Compiles a YAML codec spec (format: `Declarative/SPEC_FORMAT.md`) into a ``DeclarativeCodec``.
public enum CodecSpecCompiler {
    public static func compile(yaml text: String, file: String? = nil) throws(CodecSpecError) -> DeclarativeCodec {
        let root: Node
        do {
            guard let node = try Yams.compose(yaml: text) else {
                throw CodecSpecError(file: file, path: "", message: "empty spec")
            }
            root = node
        } catch let e as CodecSpecError {
            throw e
        } catch let e as YamlError {
            throw yamlError(e, file: file)
        } catch {
            throw CodecSpecError(file: file, path: "", message: "YAML: \(error)")
        }
        var c = Compiler(file: file)
        return try c.spec(root)
    }

    static func yamlError(_ e: YamlError, file: String?) -> CodecSpecError {
        switch e {
        case let .scanner(_, problem, mark, _), let .parser(_, problem, mark, _), let .composer(_, problem, mark, _):
            return CodecSpecError(file: file, line: mark.line, column: mark.column, path: "", message: "YAML syntax: \(problem)")
        default:
            return CodecSpecError(file: file, path: "", message: "YAML: \(e)")
        }
    }
}

private struct Compiler {
    let file: String?
    var slotCount = 0
    var scope: [String: Int] = [:]
    var messageNames: [String] = []
    var roles: Set<Role> = []
    var defaultBigEndian = false
    var fieldCount = 0

    init(file: String?) { self.file = file }

    func fail(_ node: Node?, _ path: String, _ message: String) -> CodecSpecError {
        CodecSpecError(file: file, line: node?.mark?.line, column: node?.mark?.column, path: path, message: message)
    }

    // MARK: node helpers

    func mapping(_ node: Node, _ path: String, allowed: Set<String>) throws(CodecSpecError) -> [(String, Node, Node)] {
        guard let m = node.mapping else { throw fail(node, path, "expected a mapping (key: value)") }
        var out: [(String, Node, Node)] = []
        var seen: Set<String> = []
        for (k, v) in m {
            guard let key = k.scalar?.string else { throw fail(k, path, "keys must be plain text") }
            guard allowed.contains(key) else {
                throw fail(k, path, "unknown key '\(key)' (allowed: \(allowed.sorted().joined(separator: ", ")))")
            }
            guard seen.insert(key).inserted else { throw fail(k, path, "duplicate key '\(key)'") }
            out.append((key, k, v))
        }
        return out
    }

    func string(_ node: Node, _ path: String) throws(CodecSpecError) -> String {
        guard let s = node.scalar?.string else { throw fail(node, path, "expected text") }
        return s
    }

    func integer(_ node: Node, _ path: String) throws(CodecSpecError) -> Int64 {
        let s = try string(node, path)
        guard let v = parseInteger(s) else { throw fail(node, path, "expected an integer (decimal, 0x… or 0b…), got '\(s)'") }
        return v
    }

    func parseInteger(_ text: String) -> Int64? {
        var t = Substring(text.trimmingWhitespace().replacingOccurrences("_", ""))
        var negative = false
        if t.hasPrefix("-") { negative = true; t = t.dropFirst() } else if t.hasPrefix("+") { t = t.dropFirst() }
        var v: Int64?
        if t.hasPrefix("0x") || t.hasPrefix("0X") {
            v = UInt64(t.dropFirst(2), radix: 16).map { Int64(bitPattern: $0) }
        } else if t.hasPrefix("0b") || t.hasPrefix("0B") {
            v = UInt64(t.dropFirst(2), radix: 2).map { Int64(bitPattern: $0) }
        } else {
            v = Int64(t)
        }
        guard let x = v else { return nil }
        return negative ? 0 &- x : x
    }

    func double(_ node: Node, _ path: String) throws(CodecSpecError) -> Double {
        let s = try string(node, path)
        if let i = parseInteger(s) { return Double(i) }
        guard let d = Double(s.trimmingWhitespace()), d.isFinite else { throw fail(node, path, "expected a number, got '\(s)'") }
        return d
    }

    func bool(_ node: Node, _ path: String) throws(CodecSpecError) -> Bool {
        switch try string(node, path).lowercased() {
        case "true", "yes", "on": return true
        case "false", "no", "off": return false
        case let s: throw fail(node, path, "expected true or false, got '\(s)'")
        }
    }

    /// A scalar or a sequence of scalars.
    func list(_ node: Node, _ path: String) -> [(Node, String)] {
        if let seq = node.sequence { return seq.enumerated().map { ($0.element, "\(path)[\($0.offset)]") } }
        return [(node, path)]
    }

    func hexBytes(_ node: Node, _ path: String) throws(CodecSpecError) -> [UInt8] {
        let s = try string(node, path)
        guard let b = bytes(fromHex: s) else { throw fail(node, path, "expected hex bytes like 'A5 06', got '\(s)'") }
        return b
    }

    func uuid(_ node: Node, _ path: String) throws(CodecSpecError) -> BluetoothUUID {
        let s = try string(node, path)
        guard let u = BluetoothUUID(s) else { throw fail(node, path, "not a UUID: '\(s)' (use 180F, 0x180F or the 36-character form)") }
        return u
    }

    func role(_ node: Node, _ path: String) throws(CodecSpecError) -> Role {
        let s = try string(node, path)
        guard !s.isEmpty, s.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" }) else {
            throw fail(node, path, "role names are words joined by '-', e.g. sequence, total-count, resend-request")
        }
        return Role(s)
    }

    func direction(_ node: Node, _ path: String) throws(CodecSpecError) -> DirectionFilter {
        var f = DirectionFilter()
        for (n, p) in list(node, path) {
            switch try string(n, p).lowercased() {
            case "write": f.insert(.write); f.insert(.writeCommand)
            case "write-request": f.insert(.write)
            case "write-command", "write-without-response": f.insert(.writeCommand)
            case "notify", "notification": f.insert(.notify)
            case "indicate", "indication": f.insert(.indicate)
            case "read": f.insert(.read)
            case "tx": f.insert(Direction.tx)
            case "rx": f.insert(Direction.rx)
            case let s: throw fail(n, p, "unknown direction '\(s)' (write, write-request, write-command, notify, indicate, read, tx, rx)")
            }
        }
        return f
    }

    // MARK: spec

    mutating func spec(_ node: Node) throws(CodecSpecError) -> DeclarativeCodec {
        let keys = try mapping(
            node, "",
            allowed: [
                "codec", "description", "endian", "match", "checksum", "fields", "select",
                "messages", "parts",
            ])
        var name: String?
        var description: String?
        var matchers: [Matcher] = []
        var appliesTo: [String] = []
        for (key, _, value) in keys {
            switch key {
            case "codec":
                let n = try string(value, "codec")
                guard !n.isEmpty, n.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" || $0 == "." }) else {
                    throw fail(value, "codec", "codec names use letters, digits, '-', '_' and '.'")
                }
                name = n
            case "description": description = try string(value, "description")
            case "match":
                for (n, p) in list(value, "match") {
                    let (m, text) = try matcher(n, p)
                    matchers.append(m)
                    appliesTo.append(text)
                }
            default: break
            }
        }
        guard let name else { throw fail(node, "", "missing 'codec: <name>'") }
        var parts: [DeclarativeCodec.Part] = []
        var partsText: String?
        if let partsKey = keys.first(where: { $0.0 == "parts" }) {
            // Several layouts in one spec, one per characteristic (or direction, or prefix).
            for body in ["fields", "select", "messages", "checksum"] {
                if let k = keys.first(where: { $0.0 == body }) {
                    throw fail(k.1, body, "'\(body)' goes inside each of 'parts' when the spec has parts")
                }
            }
            guard let seq = partsKey.2.sequence, !seq.isEmpty else {
                throw fail(partsKey.2, "parts", "expected a non-empty list of parts (match + fields/select/messages)")
            }
            var outerEndian = false
            if let e = keys.first(where: { $0.0 == "endian" }) { outerEndian = try endian(e.2, "endian") }
            var partTexts: [String] = []
            for (i, partNode) in seq.enumerated() {
                let path = "parts[\(i)]"
                let pk = try mapping(
                    partNode, path,
                    allowed: [
                        "name", "match", "endian", "checksum", "fields", "select", "messages",
                        "description",
                    ])
                var part = DeclarativeCodec.Part()
                var texts: [String] = []
                defaultBigEndian = outerEndian
                if let e = pk.first(where: { $0.0 == "endian" }) { defaultBigEndian = try endian(e.2, path + ".endian") }
                for (key, _, value) in pk {
                    switch key {
                    case "name": part.name = try string(value, path + ".name")
                    case "match":
                        for (n, p) in list(value, path + ".match") {
                            let (m, text) = try matcher(n, p)
                            part.matchers.append(m)
                            texts.append(text)
                        }
                    case "checksum": part.checksum = try checksumSpec(value, path + ".checksum")
                    default: break
                    }
                }
                if part.matchers.isEmpty, i < seq.count - 1 {
                    throw fail(partNode, path, "only the last part may leave out 'match' (it would hide the parts after it)")
                }
                let saved = scope
                part.root = try group(pk, partNode, path + ".", fieldsKey: "fields")
                scope = saved
                parts.append(part)
                partTexts.append("\(part.name ?? path): " + (texts.isEmpty ? "the rest" : texts.joined(separator: "; or ")))
            }
            partsText = "parts: " + partTexts.joined(separator: " | ")
        } else {
            if let e = keys.first(where: { $0.0 == "endian" }) { defaultBigEndian = try endian(e.2, "endian") }
            var part = DeclarativeCodec.Part()
            if let c = keys.first(where: { $0.0 == "checksum" }) { part.checksum = try checksumSpec(c.2, "checksum") }
            part.root = try group(keys, node, "", fieldsKey: "fields")
            parts.append(part)
        }
        let summary = CodecSpecSummary(
            name: name, description: description, file: file, messages: messageNames,
            roles: roles.sorted(),
            appliesTo: (appliesTo.isEmpty ? "anything (no match)" : appliesTo.joined(separator: "; or "))
                + (partsText.map { "; " + $0 } ?? ""))
        return DeclarativeCodec(name: name, summary: summary, matchers: matchers, parts: parts, slotCount: slotCount)
    }

    func endian(_ node: Node, _ path: String) throws(CodecSpecError) -> Bool {
        switch try string(node, path).lowercased() {
        case "little", "le": return false
        case "big", "be": return true
        case let s: throw fail(node, path, "endian is 'little' or 'big', got '\(s)'")
        }
    }

    func matcher(_ node: Node, _ path: String) throws(CodecSpecError) -> (Matcher, String) {
        var m = Matcher()
        var text: [String] = []
        for (key, _, value) in try mapping(node, path, allowed: ["service", "characteristic", "handle", "direction", "prefix", "psm"]) {
            let p = path + "." + key
            switch key {
            case "psm":
                for (n, q) in list(value, p) {
                    let psm = try integer(n, q)
                    // LE credit-based channels (Core Spec Vol 3, Part A, 4.22: SPSM 0x0001–0x00FF) and BR/EDR/enhanced
                    // credit-based PSMs up to 0xFFFF: any 16-bit value but 0.
                    guard (1...0xFFFF).contains(psm) else { throw fail(n, q, "a PSM is 0x0001–0xFFFF") }
                    m.psms.append(UInt16(psm))
                }
                text.append("psm " + m.psms.map { hex($0, width: 4) }.joined(separator: "|"))
            case "service":
                for (n, q) in list(value, p) { m.services.append(try uuid(n, q)) }
                text.append("service " + m.services.map(\.description).joined(separator: "|"))
            case "characteristic":
                for (n, q) in list(value, p) { m.characteristics.append(try uuid(n, q)) }
                text.append("characteristic " + m.characteristics.map(\.description).joined(separator: "|"))
            case "handle":
                for (n, q) in list(value, p) {
                    let h = try integer(n, q)
                    guard (0...0xFFFF).contains(h) else { throw fail(n, q, "handles are 0x0000–0xFFFF") }
                    m.handles.append(UInt16(h))
                }
                text.append("handle " + m.handles.map { hex($0) }.joined(separator: "|"))
            case "direction": m.filter = try direction(value, p); text.append("direction \(try string(value.sequence?.first ?? value, p))")
            case "prefix": m.prefix = try hexBytes(value, p); text.append("prefix " + hexString(m.prefix, separator: " "))
            default: break
            }
        }
        if !m.psms.isEmpty, !m.services.isEmpty || !m.characteristics.isEmpty || !m.handles.isEmpty {
            // An L2CAP SDU has no attribute: such a mapping could never match.
            throw fail(
                node, path,
                "psm matches the SDUs of an L2CAP credit-based channel, which have no service, characteristic or handle: use psm with direction and prefix only"
            )
        }
        return (m, text.joined(separator: ", "))
    }

    func checksumSpec(_ node: Node, _ path: String) throws(CodecSpecError) -> ChecksumSpec? {
        if let s = node.scalar?.string, s == "none" { return nil }
        var algorithm: ChecksumAlgorithm?
        var from = 0, to = -1, at = -1
        var big = false
        for (key, _, value) in try mapping(node, path, allowed: ["algorithm", "from", "to", "at", "endian"]) {
            let p = path + "." + key
            switch key {
            case "algorithm":
                let s = try string(value, p).lowercased()
                guard let a = ChecksumAlgorithm(rawValue: s) else {
                    throw fail(value, p, "unknown checksum '\(s)' (\(ChecksumAlgorithm.allCases.map(\.rawValue).joined(separator: ", ")))")
                }
                algorithm = a
            case "from", "to", "at":
                let v = try integer(value, p)
                guard (-65536...65536).contains(v) else { throw fail(value, p, "offset out of range") }
                if key == "from" { from = Int(v) } else if key == "to" { to = Int(v) } else { at = Int(v) }
            case "endian": big = try endian(value, p)
            default: break
            }
        }
        guard let algorithm else { throw fail(node, path, "missing 'algorithm'") }
        if to == -1, at == -1 { to = -algorithm.width; at = -algorithm.width }
        return ChecksumSpec(algorithm: algorithm, from: from, to: to, at: at, bigEndian: big)
    }

    // MARK: groups, messages, fields

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
        let keys = try mapping(node, path, allowed: Compiler.fieldKeys)
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

extension String {
    func replacingOccurrences(_ target: Character, _ replacement: String) -> String {
        var out = ""
        for c in self { if c == target { out += replacement } else { out.append(c) } }
        return out
    }
}
