import BLECore
import BLEYAML

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
            guard let node = try YAML.compose(yaml: text) else {
                throw CodecSpecError(file: file, path: "", message: "empty spec")
            }
            root = node
        } catch let e as CodecSpecError {
            throw e
        } catch let e as YAMLError {
            throw yamlError(e, file: file)
        } catch {
            throw CodecSpecError(file: file, path: "", message: "YAML: \(error)")
        }
        var c = SpecNodeCompiler(file: file)
        return try c.spec(root)
    }

    static func yamlError(_ e: YAMLError, file: String?) -> CodecSpecError {
        guard let mark = e.mark, let problem = e.problem else { return CodecSpecError(file: file, path: "", message: "YAML: \(e)") }
        return CodecSpecError(file: file, line: mark.line, column: mark.column, path: "", message: "YAML syntax: \(problem)")
    }
}

/// One spec's compilation: the YAML nodes walked into a ``DeclarativeCodec``, with the scope of named fields (slots)
/// built on the way. Its members for groups, messages and fields are in SpecCompiler+Fields.swift.
struct SpecNodeCompiler {
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
}

extension String {
    func replacingOccurrences(_ target: Character, _ replacement: String) -> String {
        var out = ""
        for c in self { if c == target { out += replacement } else { out.append(c) } }
        return out
    }
}
