import CYAML

/// Why a text is not a YAML document: libyaml's stage, problem and position (line and column from 1), described as
/// `3:5: error: scanner: mapping values are not allowed in this context:` and the line with a caret under the column
/// (the shape Yams gave, so messages users saw stay the same).
public enum YAMLError: Error, CustomStringConvertible, Sendable {
    case reader(problem: String, offset: Int, value: Int32, yaml: String)
    case scanner(context: Context?, problem: String, Node.Mark, yaml: String)
    case parser(context: Context?, problem: String, Node.Mark, yaml: String)
    case composer(context: Context?, problem: String, Node.Mark, yaml: String)
    case memory

    public struct Context: Sendable, CustomStringConvertible {
        public let text: String
        public let mark: Node.Mark
        public var description: String { text + " in line \(mark.line), column \(mark.column)\n" }
    }

    public var description: String {
        switch self {
        case .memory: return "Memory error"
        case let .reader(problem, offset, value, yaml):
            guard let (line, column) = Self.lineAndColumn(ofUTF8Offset: offset, in: yaml) else {
                return "\(problem) at offset: \(offset), value: \(value)"
            }
            return "\(line + 1):\(column + 1): error: reader: \(problem):\n" + Self.snippet(line: line, column: column, yaml)
        case let .scanner(context, problem, mark, yaml):
            return "\(mark): error: scanner: \(context?.description ?? "")\(problem):\n"
                + Self.snippet(line: mark.line - 1, column: mark.column - 1, yaml)
        case let .parser(context, problem, mark, yaml):
            return "\(mark): error: parser: \(context?.description ?? "")\(problem):\n"
                + Self.snippet(line: mark.line - 1, column: mark.column - 1, yaml)
        case let .composer(context, problem, mark, yaml):
            return "\(mark): error: composer: \(context?.description ?? "")\(problem):\n"
                + Self.snippet(line: mark.line - 1, column: mark.column - 1, yaml)
        }
    }

    /// The problem alone, for messages that give the position themselves.
    public var problem: String? {
        switch self {
        case let .scanner(_, p, _, _), let .parser(_, p, _, _), let .composer(_, p, _, _): p
        case let .reader(p, _, _, _): p
        case .memory: nil
        }
    }

    public var mark: Node.Mark? {
        switch self {
        case let .scanner(_, _, m, _), let .parser(_, _, m, _), let .composer(_, _, m, _): m
        case .reader, .memory: nil
        }
    }

    /// Line `line` (from 0) ending in a newline, then spaces to `column` (scalars, from 0) counted in UTF-16 units
    /// and a caret.
    static func snippet(line: Int, column: Int, _ yaml: String) -> String {
        let lines = yaml.split(separator: "\n", omittingEmptySubsequences: false)
        var text = line >= 0 && line < lines.count ? String(lines[line]) : ""
        let scalars = text.unicodeScalars.prefix(max(0, column))
        let width = scalars.reduce(0) { $0 + ($1.value > 0xFFFF ? 2 : 1) }
        if line + 1 < lines.count { text += "\n" }
        if !text.hasSuffix("\n") { text += "\n" }
        return text + String(repeating: " ", count: width) + "^"
    }

    static func lineAndColumn(ofUTF8Offset offset: Int, in yaml: String) -> (Int, Int)? {
        let bytes = Array(yaml.utf8)
        guard offset >= 0, offset < bytes.count else { return nil }
        var line = 0
        var lineStart = 0
        for i in 0..<offset where bytes[i] == 0x0A {
            line += 1
            lineStart = i + 1
        }
        let column = String(decoding: bytes[lineStart..<offset], as: UTF8.self).utf16.count
        return (line, column)
    }
}

/// Reads YAML text into ``Node``s with libyaml's event parser.
public enum YAML {
    /// The text's one document as a tree, nil when the text holds none. Aliases are replaced by the node their
    /// anchor names. - Throws: ``YAMLError`` for text that is not YAML, or that holds more than one document.
    public static func compose(yaml text: String) throws(YAMLError) -> Node? {
        var parser = yaml_parser_t()
        guard yaml_parser_initialize(&parser) == 1 else { throw .memory }
        defer { yaml_parser_delete(&parser) }
        let bytes = Array(text.utf8)
        return try bytes.withUnsafeBufferPointer { (buffer) throws(YAMLError) -> Node? in
            yaml_parser_set_input_string(&parser, buffer.baseAddress ?? UnsafePointer(bitPattern: 1)!, buffer.count)
            yaml_parser_set_encoding(&parser, YAML_UTF8_ENCODING)
            var composer = Composer(text: text)
            return try composer.document(&parser)
        }
    }
}

/// One pass over the parser's events: a stack of open collections, anchors by name.
struct Composer {
    let text: String
    var anchors: [String: Node] = [:]

    init(text: String) { self.text = text }

    private enum Open {
        case sequence([Node], tag: String?, anchor: String?, mark: Node.Mark)
        case mapping([(key: Node, value: Node)], pendingKey: Node?, tag: String?, anchor: String?, mark: Node.Mark)
    }

    mutating func document(_ parser: inout yaml_parser_t) throws(YAMLError) -> Node? {
        var root: Node? = nil
        var documents = 0
        var stack: [Open] = []
        while true {
            var event = yaml_event_t()
            guard yaml_parser_parse(&parser, &event) == 1 else { throw error(parser) }
            defer { yaml_event_delete(&event) }
            let mark = Node.Mark(line: Int(event.start_mark.line) + 1, column: Int(event.start_mark.column) + 1)
            var finished: Node? = nil
            switch event.type {
            case YAML_STREAM_END_EVENT:
                return root
            case YAML_DOCUMENT_START_EVENT:
                documents += 1
                if documents > 1 {
                    throw .composer(
                        context: .init(text: "expected a single document in the stream", mark: root?.mark ?? mark),
                        problem: "but found another document", mark, yaml: text)
                }
            case YAML_ALIAS_EVENT:
                let name = Self.string(event.data.alias.anchor)
                guard let node = anchors[name] else {
                    throw .composer(context: nil, problem: "found undefined alias", mark, yaml: text)
                }
                finished = node
            case YAML_SCALAR_EVENT:
                let s = event.data.scalar
                let value = String(decoding: UnsafeBufferPointer(start: s.value, count: s.length), as: UTF8.self)
                let node = Node.scalar(.init(value, style: Self.style(s.style), tag: Self.optionalString(s.tag), mark: mark))
                if let anchor = Self.optionalString(s.anchor) { anchors[anchor] = node }
                finished = node
            case YAML_SEQUENCE_START_EVENT:
                let s = event.data.sequence_start
                stack.append(.sequence([], tag: Self.optionalString(s.tag), anchor: Self.optionalString(s.anchor), mark: mark))
            case YAML_MAPPING_START_EVENT:
                let m = event.data.mapping_start
                stack.append(
                    .mapping([], pendingKey: nil, tag: Self.optionalString(m.tag), anchor: Self.optionalString(m.anchor), mark: mark))
            case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
                switch stack.removeLast() {
                case let .sequence(nodes, tag, anchor, start):
                    finished = .sequence(.init(nodes, tag: tag, mark: start))
                    if let anchor { anchors[anchor] = finished }
                case let .mapping(pairs, _, tag, anchor, start):
                    finished = .mapping(.init(pairs, tag: tag, mark: start))
                    if let anchor { anchors[anchor] = finished }
                }
            default:
                break
            }
            guard let node = finished else { continue }
            if stack.isEmpty {
                root = node
            } else {
                Self.add(node, to: &stack[stack.count - 1])
            }
        }
    }

    private static func add(_ node: Node, to open: inout Open) {
        switch open {
        case .sequence(var nodes, let tag, let anchor, let mark):
            nodes.append(node)
            open = .sequence(nodes, tag: tag, anchor: anchor, mark: mark)
        case .mapping(var pairs, let key, let tag, let anchor, let mark):
            if let key {
                pairs.append((key, node))
                open = .mapping(pairs, pendingKey: nil, tag: tag, anchor: anchor, mark: mark)
            } else {
                open = .mapping(pairs, pendingKey: node, tag: tag, anchor: anchor, mark: mark)
            }
        }
    }

    private func error(_ parser: yaml_parser_t) -> YAMLError {
        let problem = parser.problem.map { String(cString: $0) } ?? "unknown problem"
        let mark = Node.Mark(line: Int(parser.problem_mark.line) + 1, column: Int(parser.problem_mark.column) + 1)
        let context = parser.context.map {
            YAMLError.Context(
                text: String(cString: $0),
                mark: .init(line: Int(parser.context_mark.line) + 1, column: Int(parser.context_mark.column) + 1))
        }
        switch parser.error {
        case YAML_MEMORY_ERROR: return .memory
        case YAML_READER_ERROR:
            return .reader(problem: problem, offset: Int(parser.problem_offset), value: parser.problem_value, yaml: text)
        case YAML_SCANNER_ERROR: return .scanner(context: context, problem: problem, mark, yaml: text)
        case YAML_PARSER_ERROR: return .parser(context: context, problem: problem, mark, yaml: text)
        default: return .composer(context: context, problem: problem, mark, yaml: text)
        }
    }

    private static func style(_ s: yaml_scalar_style_t) -> Node.Style {
        switch s {
        case YAML_PLAIN_SCALAR_STYLE: .plain
        case YAML_SINGLE_QUOTED_SCALAR_STYLE: .singleQuoted
        case YAML_DOUBLE_QUOTED_SCALAR_STYLE: .doubleQuoted
        case YAML_LITERAL_SCALAR_STYLE: .literal
        case YAML_FOLDED_SCALAR_STYLE: .folded
        default: .any
        }
    }

    private static func string(_ p: UnsafeMutablePointer<yaml_char_t>?) -> String {
        optionalString(p) ?? ""
    }

    private static func optionalString(_ p: UnsafeMutablePointer<yaml_char_t>?) -> String? {
        guard let p else { return nil }
        return String(cString: p)
    }
}
