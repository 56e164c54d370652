/// A YAML document as a tree: what the codec specs, GATT maps, key files and expectation files are read into.
///
/// Composed by libyaml's parser (``YAML/compose(yaml:)``), with no Foundation: the library it replaces (Yams) needed
/// Foundation and so ICU, 34 MB of the static binary (docs/performance.md#size-of-the-installed-binary). It keeps
/// that library's shapes and numbers: marks count lines and columns from 1 (columns in Unicode scalars), a mapping
/// keeps its pairs in order and duplicates, and a scalar keeps its text, style and tag.
public indirect enum Node: Sendable {
    case scalar(Scalar)
    case mapping(Mapping)
    case sequence(Sequence)

    /// A position in the text: line and column from 1.
    public struct Mark: Sendable, Equatable, CustomStringConvertible {
        public let line: Int
        public let column: Int
        public init(line: Int, column: Int) {
            self.line = line
            self.column = column
        }
        public var description: String { "\(line):\(column)" }
    }

    /// How a scalar was written: its quotes decide whether it can be a number or null (only a plain one can).
    public enum Style: Sendable, Equatable { case any, plain, singleQuoted, doubleQuoted, literal, folded }

    public struct Scalar: Sendable {
        public var string: String
        public var style: Style
        /// The explicit tag (`!!str` as `tag:yaml.org,2002:str`), nil when none was written.
        public var tag: String?
        public var mark: Mark?
        public init(_ string: String, style: Style = .any, tag: String? = nil, mark: Mark? = nil) {
            self.string = string
            self.style = style
            self.tag = tag
            self.mark = mark
        }
    }

    /// A mapping's pairs in the order written (YAML allows a key twice; lookups take the last, as Yams did).
    public struct Mapping: Sendable, RandomAccessCollection {
        public typealias Element = (key: Node, value: Node)
        public var pairs: [Element]
        public var tag: String?
        public var mark: Mark?
        public init(_ pairs: [Element], tag: String? = nil, mark: Mark? = nil) {
            self.pairs = pairs
            self.tag = tag
            self.mark = mark
        }
        public var startIndex: Int { pairs.startIndex }
        public var endIndex: Int { pairs.endIndex }
        public subscript(position: Int) -> Element { pairs[position] }
        public var keys: [Node] { pairs.map(\.key) }
        public var values: [Node] { pairs.map(\.value) }

        /// The value of the last key that is this text and resolves as plain text of it would (so `1` does not
        /// find a key written `'1'`).
        public subscript(key: String) -> Node? {
            let kind = YAMLResolver.kind(ofPlain: key)
            return pairs.last { pair in
                guard case .scalar(let s) = pair.key else { return false }
                return s.string == key && YAMLResolver.kind(of: s) == kind
            }?.value
        }

        /// `<<` keys merged in (their mappings' pairs first), as the decoder reads a mapping.
        func flattened() -> Mapping {
            var merged: [Element] = []
            var own: [Element] = []
            for pair in pairs {
                guard case .scalar(let s) = pair.key, YAMLResolver.kind(of: s) == .merge else {
                    own.append(pair)
                    continue
                }
                switch pair.value {
                case .mapping(let m): merged += m.flattened().pairs
                case .sequence(let seq):
                    for case .mapping(let m) in seq.nodes.reversed() { merged += m.flattened().pairs }
                case .scalar: break
                }
            }
            return Mapping(merged + own, tag: tag, mark: mark)
        }
    }

    public struct Sequence: Sendable, RandomAccessCollection {
        public var nodes: [Node]
        public var tag: String?
        public var mark: Mark?
        public init(_ nodes: [Node], tag: String? = nil, mark: Mark? = nil) {
            self.nodes = nodes
            self.tag = tag
            self.mark = mark
        }
        public var startIndex: Int { nodes.startIndex }
        public var endIndex: Int { nodes.endIndex }
        public subscript(position: Int) -> Node { nodes[position] }
    }

    public var scalar: Scalar? {
        if case .scalar(let s) = self { return s }
        return nil
    }
    public var mapping: Mapping? {
        if case .mapping(let m) = self { return m }
        return nil
    }
    public var sequence: Sequence? {
        if case .sequence(let s) = self { return s }
        return nil
    }
    /// A scalar's text.
    public var string: String? { scalar?.string }
    public var mark: Mark? {
        switch self {
        case .scalar(let s): s.mark
        case .mapping(let m): m.mark
        case .sequence(let s): s.mark
        }
    }
    /// Null as YAML 1.1 writes it: empty, `~`, `null` (in any quotes, as Yams read it).
    public var isNull: Bool {
        guard case .scalar(let s) = self else { return false }
        return ["", "~", "null", "Null", "NULL"].contains(s.string)
    }
}

/// What a scalar stands for under YAML 1.1's implicit rules (the core schema libyaml's users apply): only its
/// lookups of keys and the merge key `<<` depend on it here.
enum YAMLResolver {
    enum Kind: Equatable { case str, null, bool, int, float, merge, value, timestamp, other(String) }

    static func kind(of scalar: Node.Scalar) -> Kind {
        if let tag = scalar.tag, tag != "!" { return named(tag) }
        guard scalar.style == .plain || scalar.style == .any else { return .str }
        return kind(ofPlain: scalar.string)
    }

    static func named(_ tag: String) -> Kind {
        let prefix = "tag:yaml.org,2002:"
        guard tag.hasPrefix(prefix) else { return .other(tag) }
        switch tag.dropFirst(prefix.count) {
        case "str": return .str
        case "null": return .null
        case "bool": return .bool
        case "int": return .int
        case "float": return .float
        case "merge": return .merge
        case "value": return .value
        case "timestamp": return .timestamp
        default: return .other(tag)
        }
    }

    static func kind(ofPlain s: String) -> Kind {
        switch s {
        case "", "~", "null", "Null", "NULL": return .null
        case "yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON",
            "off", "Off", "OFF":
            return .bool
        case "<<": return .merge
        case "=": return .value
        case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF", ".nan", ".NaN", ".NAN":
            return .float
        default: break
        }
        let u = Array(s.utf8)
        if isInt(u) { return .int }
        if isFloat(u) { return .float }
        if isTimestamp(u) { return .timestamp }
        return .str
    }

    private static func isDigit(_ c: UInt8) -> Bool { c >= 0x30 && c <= 0x39 }
    private static func isHex(_ c: UInt8) -> Bool { isDigit(c) || (c | 0x20 >= 0x61 && c | 0x20 <= 0x66) }

    /// `[-+]?(0b[01_]+ | 0[0-7_]+ | 0 | [1-9][0-9_]* | 0x[0-9a-fA-F_]+ | [1-9][0-9_]*(:[0-5]?[0-9])+)`
    static func isInt(_ u: [UInt8]) -> Bool {
        var b = u[...]
        if let f = b.first, f == 0x2B || f == 0x2D { b = b.dropFirst() }
        guard let first = b.first else { return false }
        if b.count > 2, first == 0x30, b[b.startIndex + 1] == 0x62 {
            return b.dropFirst(2).allSatisfy { $0 == 0x30 || $0 == 0x31 || $0 == 0x5F }
        }
        if b.count > 2, first == 0x30, b[b.startIndex + 1] == 0x78 {
            return b.dropFirst(2).allSatisfy { isHex($0) || $0 == 0x5F }
        }
        if first == 0x30 { return b.dropFirst().allSatisfy { ($0 >= 0x30 && $0 <= 0x37) || $0 == 0x5F } }
        guard first >= 0x31 && first <= 0x39 else { return false }
        let parts = b.split(separator: 0x3A, omittingEmptySubsequences: false)
        guard parts[0].allSatisfy({ isDigit($0) || $0 == 0x5F }) else { return false }
        return parts.dropFirst().allSatisfy { p in
            (p.count == 1 && isDigit(p[p.startIndex]))
                || (p.count == 2 && p[p.startIndex] >= 0x30 && p[p.startIndex] <= 0x35 && isDigit(p[p.startIndex + 1]))
        }
    }

    /// `[-+]?([0-9][0-9_]*)(\.[0-9_]*)?([eE][-+][0-9]+)? | \.[0-9_]+([eE][-+][0-9]+)? | [-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*`
    static func isFloat(_ u: [UInt8]) -> Bool {
        var b = u[...]
        if let f = b.first, f == 0x2B || f == 0x2D { b = b.dropFirst() }
        guard let first = b.first else { return false }
        var i = b.startIndex
        func digits(_ underscore: Bool) -> Int {
            let start = i
            while i < b.endIndex, isDigit(b[i]) || (underscore && b[i] == 0x5F) { i += 1 }
            return i - start
        }
        if first == 0x2E {
            i += 1
            guard digits(true) > 0 else { return false }
        } else {
            guard isDigit(first) else { return false }
            _ = digits(true)
            if i < b.endIndex, b[i] == 0x3A {
                while i < b.endIndex, b[i] == 0x3A {
                    i += 1
                    let n = digits(false)
                    guard n == 1 || n == 2 else { return false }
                }
                guard i < b.endIndex, b[i] == 0x2E else { return false }
                i += 1
                _ = digits(true)
                return i == b.endIndex
            }
            if i < b.endIndex, b[i] == 0x2E {
                i += 1
                _ = digits(true)
            }
        }
        if i < b.endIndex, b[i] | 0x20 == 0x65 {
            i += 1
            guard i < b.endIndex, b[i] == 0x2B || b[i] == 0x2D else { return false }
            i += 1
            guard digits(false) > 0 else { return false }
        }
        return i == b.endIndex
    }

    /// `YYYY-MM-DD`, or that with a time (`[Tt ]` or spaces, then `H:MM:SS`, fraction and zone): a key that looks
    /// like a date is not the text of it.
    static func isTimestamp(_ u: [UInt8]) -> Bool {
        guard u.count >= 10, u[4] == 0x2D, u[0..<4].allSatisfy(isDigit) else { return false }
        var i = 5
        func num(_ max: Int) -> Bool {
            let start = i
            while i < u.count, i - start < max, isDigit(u[i]) { i += 1 }
            return i > start
        }
        guard num(2), i < u.count, u[i] == 0x2D else { return false }
        i += 1
        guard num(2) else { return false }
        if i == u.count { return u.count == 10 }
        guard u[i] == 0x54 || u[i] == 0x74 || u[i] == 0x20 || u[i] == 0x09 else { return false }
        while i < u.count, u[i] == 0x20 || u[i] == 0x09 || u[i] == 0x54 || u[i] == 0x74 { i += 1 }
        guard num(2), i < u.count, u[i] == 0x3A else { return false }
        i += 1
        guard num(2), i < u.count, u[i] == 0x3A else { return false }
        i += 1
        guard num(2) else { return false }
        if i < u.count, u[i] == 0x2E {
            i += 1
            while i < u.count, isDigit(u[i]) { i += 1 }
        }
        while i < u.count, u[i] == 0x20 || u[i] == 0x09 { i += 1 }
        if i == u.count { return true }
        if u[i] == 0x5A { return i + 1 == u.count }
        guard u[i] == 0x2B || u[i] == 0x2D else { return false }
        i += 1
        guard num(2) else { return false }
        if i < u.count, u[i] == 0x3A {
            i += 1
            guard num(2) else { return false }
        }
        return i == u.count
    }
}
