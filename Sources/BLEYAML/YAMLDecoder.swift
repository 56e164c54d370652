/// Decodes `Decodable` types from a composed ``Node``, with the rules and errors Yams' decoder had, which the
/// expectation files' messages are written against: text from any scalar; numbers only from plain scalars (`0x1F`,
/// `1_000`, `0o17`, `.inf`); true/false also as yes/no/on/off; null as empty, `~` or `null`; `<<` merges mappings; a
/// key written twice reads as its last value.
public struct YAMLDecoder {
    public init() {}

    public func decode<T: Decodable>(_ type: T.Type, from node: Node) throws -> T {
        try NodeDecoder(node: node, codingPath: []).decode(type)
    }
}

/// A list index as a coding key.
struct IndexKey: CodingKey {
    var intValue: Int?
    var stringValue: String
    init(_ index: Int) {
        intValue = index
        stringValue = "\(index)"
    }
    init?(intValue: Int) { self.init(intValue) }
    init?(stringValue: String) { nil }
}

struct NodeDecoder: Decoder, SingleValueDecodingContainer {
    let node: Node
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard let mapping = node.mapping?.flattened() else {
            throw mismatch(Node.Mapping.self)
        }
        return KeyedDecodingContainer(KeyedNodeContainer<Key>(decoder: self, mapping: mapping))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard let sequence = node.sequence else { throw mismatch(Node.Sequence.self) }
        return UnkeyedNodeContainer(decoder: self, sequence: sequence)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

    func child(_ node: Node, _ key: any CodingKey) -> NodeDecoder {
        NodeDecoder(node: node, codingPath: codingPath + [key])
    }

    func mismatch(_ expected: Any.Type) -> DecodingError {
        let found: Any.Type =
            switch node {
            case .scalar: Node.Scalar.self
            case .mapping: Node.Mapping.self
            case .sequence: Node.Sequence.self
            }
        return .typeMismatch(
            expected, .init(codingPath: codingPath, debugDescription: "Expected to decode \(expected) but found \(found) instead."))
    }

    private func scalar() throws -> Node.Scalar {
        guard case .scalar(let s) = node else { throw mismatch(Node.Scalar.self) }
        return s
    }

    private func number<T>(_ type: T.Type, _ make: (Node.Scalar) -> T?) throws -> T {
        guard let value = make(try scalar()) else { throw mismatch(type) }
        return value
    }

    func decodeNil() -> Bool { node.isNull }
    func decode(_ type: Bool.Type) throws -> Bool { try number(type, ScalarValue.bool) }
    func decode(_ type: String.Type) throws -> String { try scalar().string }
    func decode(_ type: Double.Type) throws -> Double { try number(type, ScalarValue.double) }
    func decode(_ type: Float.Type) throws -> Float { try number(type) { ScalarValue.double($0).map(Float.init) } }
    func decode(_ type: Int.Type) throws -> Int { try number(type, ScalarValue.integer) }
    func decode(_ type: Int8.Type) throws -> Int8 { try number(type, ScalarValue.integer) }
    func decode(_ type: Int16.Type) throws -> Int16 { try number(type, ScalarValue.integer) }
    func decode(_ type: Int32.Type) throws -> Int32 { try number(type, ScalarValue.integer) }
    func decode(_ type: Int64.Type) throws -> Int64 { try number(type, ScalarValue.integer) }
    func decode(_ type: UInt.Type) throws -> UInt { try number(type, ScalarValue.integer) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try number(type, ScalarValue.integer) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try number(type, ScalarValue.integer) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try number(type, ScalarValue.integer) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try number(type, ScalarValue.integer) }

    func decode<T: Decodable>(_ type: T.Type) throws -> T {
        switch type {
        case is String.Type: return try decode(String.self) as! T
        case is Bool.Type: return try decode(Bool.self) as! T
        case is Int.Type: return try decode(Int.self) as! T
        case is Int64.Type: return try decode(Int64.self) as! T
        case is Double.Type: return try decode(Double.self) as! T
        default: return try T(from: self)
        }
    }
}

struct KeyedNodeContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: NodeDecoder
    let mapping: Node.Mapping

    var codingPath: [any CodingKey] { decoder.codingPath }
    var allKeys: [Key] { mapping.pairs.compactMap { $0.key.string.flatMap(Key.init(stringValue:)) } }
    func contains(_ key: Key) -> Bool { value(key) != nil }

    private func value(_ key: Key) -> Node? { mapping.pairs.last { $0.key.string == key.stringValue }?.value }

    private func child(_ key: Key) throws -> NodeDecoder {
        guard let node = value(key) else {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: codingPath, debugDescription: "No value associated with key \(key) (\"\(key.stringValue)\")."))
        }
        return decoder.child(node, key)
    }

    func decodeNil(forKey key: Key) throws -> Bool { try child(key).decodeNil() }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try child(key).decode(type) }
    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws
        -> KeyedDecodingContainer<NestedKey>
    {
        try child(key).container(keyedBy: type)
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { try child(key).unkeyedContainer() }
    func superDecoder() throws -> any Decoder { decoder }
    func superDecoder(forKey key: Key) throws -> any Decoder { try child(key) }
}

struct UnkeyedNodeContainer: UnkeyedDecodingContainer {
    let decoder: NodeDecoder
    let sequence: Node.Sequence
    var currentIndex = 0

    init(decoder: NodeDecoder, sequence: Node.Sequence) {
        self.decoder = decoder
        self.sequence = sequence
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { sequence.count }
    var isAtEnd: Bool { currentIndex >= sequence.count }

    private mutating func next<T>(_ type: T.Type, _ body: (NodeDecoder) throws -> T) throws -> T {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(
                type, .init(codingPath: codingPath + [IndexKey(currentIndex)], debugDescription: "Unkeyed container is at end."))
        }
        let value = try body(decoder.child(sequence[currentIndex], IndexKey(currentIndex)))
        currentIndex += 1
        return value
    }

    mutating func decodeNil() throws -> Bool { try next(Bool.self) { $0.decodeNil() } }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next(type) { try $0.decode(type) } }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next(KeyedDecodingContainer<NestedKey>.self) { try $0.container(keyedBy: type) }
    }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next((any UnkeyedDecodingContainer).self) { try $0.unkeyedContainer() }
    }
    mutating func superDecoder() throws -> any Decoder { try next((any Decoder).self) { $0 } }
}

/// Scalars read as numbers and truth values the way YAML 1.1 writes them.
enum ScalarValue {
    static func bool(_ s: Node.Scalar) -> Bool? {
        switch s.string.lowercased() {
        case "true", "yes", "on": true
        case "false", "no", "off": false
        default: nil
        }
    }

    /// Plain scalars only: `0x`, `0b`, `0o` and a leading `0` (octal) give the radix, `_` is ignored, `1:30` is
    /// base 60.
    static func integer<T: FixedWidthInteger>(_ s: Node.Scalar) -> T? {
        guard s.style == .plain || s.style == .any else { return nil }
        let text = s.string.filter { $0 != "_" }
        if text == "0" { return 0 }
        let negative = text.hasPrefix("-")
        guard T.isSigned || !negative else { return nil }
        let body = text.dropFirst(negative || text.hasPrefix("+") ? 1 : 0)
        let sign = negative ? "-" : ""
        for (prefix, radix) in [("0x", 16), ("0b", 2), ("0o", 8), ("0", 8)] where body.hasPrefix(prefix) {
            return T(sign + body.dropFirst(prefix.count), radix: radix)
        }
        if body.contains(":") {
            var value: T = 0
            for part in body.split(separator: ":") {
                guard let digit = T(part) else { return nil }
                let (m, o1) = value.multipliedReportingOverflow(by: 60)
                let (a, o2) = m.addingReportingOverflow(digit)
                guard !o1, !o2 else { return nil }
                value = a
            }
            return negative ? 0 - value : value
        }
        return T(text)
    }

    static func double(_ s: Node.Scalar) -> Double? {
        guard s.style == .plain || s.style == .any else { return nil }
        switch s.string {
        case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF": return .infinity
        case "-.inf", "-.Inf", "-.INF": return -.infinity
        case ".nan", ".NaN", ".NAN": return .nan
        default: break
        }
        let text = s.string.filter { $0 != "_" }
        guard text.contains(":") else { return Double(text) }
        let negative = text.hasPrefix("-")
        var value = 0.0
        for part in text.drop(while: { $0 == "-" || $0 == "+" }).split(separator: ":") {
            guard let d = Double(part) else { return nil }
            value = value * 60 + d
        }
        return negative ? -value : value
    }
}
