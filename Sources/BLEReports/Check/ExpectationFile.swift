import BLEYAML

/// What an expectations file says is wrong with it, where: `nordic.yaml:4:24: expect[1].ota.min_rate: '20kB' is not
/// a rate (e.g. 20kB/s or 160kbps)` (the same shape as `blescope codecs check`).
public struct ExpectationFileError: Error, CustomStringConvertible, Sendable {
    public var file: String
    /// 1-based line and column of the offending key or value, when known.
    public var line: Int?
    public var column: Int?
    /// Where in the document: `expect[1].ota.min_rate` (list indexes from 0), empty for the whole file.
    public var path: String
    public var message: String

    public var description: String {
        var s = file
        if let line { s += ":\(line)" + (column.map { ":\($0)" } ?? "") }
        return s + ": " + (path.isEmpty ? "" : path + ": ") + message
    }
}

/// A problem found while decoding, at a coding path; ``ExpectationFile`` turns the path into a line and a column.
/// `atKey`: point at the key itself (an unknown key or kind) rather than at its value.
struct ExpectationProblem: Error {
    var path: [any CodingKey]
    var message: String
    var atKey = false
    /// Which of the keys of that name the last step of the path means (a key written twice: the second).
    var occurrence = 0
}

/// A key of any name: kinds and keys are read as written and checked against the known ones, so an unknown one is
/// an error rather than ignored.
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(_ string: String) { stringValue = string }
    init?(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

extension Decoder {
    /// Throws at the first key of this mapping that `Keys` does not name, or that is written twice (YAML allows it, and
    /// the second would be ignored).
    func rejectUnknownKeys<Keys: CodingKey & CaseIterable>(_ keys: Keys.Type, kind: String) throws {
        let container = try self.container(keyedBy: AnyKey.self)
        let known = Keys.allCases.map(\.stringValue)
        var seen: Set<String> = []
        for key in container.allKeys {
            guard known.contains(key.stringValue) else {
                throw ExpectationProblem(
                    path: codingPath + [key],
                    message: "unknown key '\(key.stringValue)' for \(kind) (known: \(known.sorted().joined(separator: ", ")))", atKey: true)
            }
            guard seen.insert(key.stringValue).inserted else {
                throw ExpectationProblem(path: codingPath + [key], message: "'\(key.stringValue)' given twice", atKey: true, occurrence: 1)
            }
        }
    }

    /// A problem with the value being decoded here.
    func problem(_ message: String) -> ExpectationProblem { ExpectationProblem(path: codingPath, message: message) }
}

/// The document: a list of expectations under `expect:`, or the list itself.
struct ExpectationDocument: Decodable {
    var entries: [ExpectationEntry]

    init(from decoder: any Decoder) throws {
        if (try? decoder.unkeyedContainer()) != nil {
            entries = try decoder.singleValueContainer().decode([ExpectationEntry].self)
            guard !entries.isEmpty else { throw decoder.problem("an empty list: nothing would be checked") }
            return
        }
        guard (try? decoder.container(keyedBy: AnyKey.self)) != nil else {
            throw decoder.problem("expected a list of expectations under 'expect:'")
        }
        enum Keys: String, CodingKey, CaseIterable { case expect }
        try decoder.rejectUnknownKeys(Keys.self, kind: "the document")
        let container = try decoder.container(keyedBy: Keys.self)
        guard container.contains(.expect) else { throw decoder.problem("expected a list of expectations under 'expect:'") }
        entries = try container.decode([ExpectationEntry].self, forKey: .expect)
        guard !entries.isEmpty else {
            throw ExpectationProblem(path: decoder.codingPath + [Keys.expect], message: "an empty list: nothing would be checked")
        }
    }
}

/// One item of the list: a single-key mapping whose key is the kind (`ota`, `no_findings`…) and whose value that
/// kind's keys, decoded by the kind's own type (``ExpectationKinds/all``).
struct ExpectationEntry: Decodable {
    var expectation: Expectation

    init(from decoder: any Decoder) throws {
        let kinds = ExpectationKinds.names
        guard let container = try? decoder.container(keyedBy: AnyKey.self), container.allKeys.count == 1,
            let key = container.allKeys.first
        else {
            throw decoder.problem("one kind per expectation, as `- ota: {protocol: nordic-secure-dfu}` (kinds: \(kinds))")
        }
        guard let kind = ExpectationKinds.all.first(where: { $0.kind == key.stringValue }) else {
            throw ExpectationProblem(
                path: decoder.codingPath + [key], message: "unknown expectation '\(key.stringValue)' (\(kinds))", atKey: true)
        }
        if try container.decodeNil(forKey: key) {
            guard let bare = kind.bare else {
                throw ExpectationProblem(path: decoder.codingPath + [key], message: "needs a value: \(kind.shape)")
            }
            expectation = bare
            return
        }
        func decode<Kind: ExpectationKind>(_ type: Kind.Type) throws -> Expectation {
            try container.decode(Kind.self, forKey: key).expectation
        }
        expectation = try decode(kind)
    }
}

extension Expectation {
    /// Parses an expectations file: a list under `expect:` (or the document itself), one single-key mapping per
    /// expectation, each decoded by its kind's type. Unknown kinds and keys are errors, so a typo never passes; every
    /// error names the file, the line and column, the key and what is wrong (``ExpectationFileError``).
    public static func parse(yaml text: String, path: String = "expectations") throws(ExpectationFileError) -> [Expectation] {
        let root: Node
        do {
            guard let node = try YAML.compose(yaml: text) else {
                throw ExpectationFileError(file: path, path: "", message: "empty: expected a list of expectations under 'expect:'")
            }
            root = node
        } catch let e as ExpectationFileError {
            throw e
        } catch let e as YAMLError {
            throw syntaxError(e, file: path)
        } catch {
            throw ExpectationFileError(file: path, path: "", message: "not YAML: \(error)")
        }
        // Decoded from the composed tree, whose marks locate the errors.
        do {
            return try YAMLDecoder().decode(ExpectationDocument.self, from: root).entries.map(\.expectation)
        } catch let problem as ExpectationProblem {
            throw locate(problem, in: root, file: path)
        } catch let error as DecodingError {
            // A decoder may wrap an error thrown by a type's `init(from:)` in `dataCorrupted`: ours carries its own path.
            if case .dataCorrupted(let context) = error, let problem = context.underlyingError as? ExpectationProblem {
                throw locate(problem, in: root, file: path)
            }
            throw locate(describe(error, in: root), in: root, file: path)
        } catch {
            throw ExpectationFileError(file: path, path: "", message: "\(error)")
        }
    }

    static func syntaxError(_ e: YAMLError, file: String) -> ExpectationFileError {
        guard let mark = e.mark, let problem = e.problem else {
            return ExpectationFileError(file: file, path: "", message: "not YAML: \(e)")
        }
        return ExpectationFileError(file: file, line: mark.line, column: mark.column, path: "", message: "not YAML: \(problem)")
    }

    /// The line and column of the node at the problem's path (its key's, for an unknown key), and the path as text.
    static func locate(_ problem: ExpectationProblem, in root: Node, file: String) -> ExpectationFileError {
        let (node, key) = node(at: problem.path, in: root, occurrence: problem.occurrence)
        let mark = (problem.atKey ? key?.mark : nil) ?? node.mark
        var text = ""
        for component in problem.path {
            if let index = component.intValue { text += "[\(index)]" } else { text += (text.isEmpty ? "" : ".") + component.stringValue }
        }
        return ExpectationFileError(file: file, line: mark?.line, column: mark?.column, path: text, message: problem.message)
    }

    /// The node a coding path leads to (as deep as it exists) and the key that names it in its mapping; `occurrence`
    /// picks among keys of the same name at the last step.
    static func node(at path: [any CodingKey], in root: Node, occurrence: Int = 0) -> (value: Node, key: Node?) {
        var node = root
        var key: Node? = nil
        for (step, component) in path.enumerated() {
            let nth = step == path.count - 1 ? occurrence : 0
            if let index = component.intValue, let sequence = node.sequence, index < sequence.count {
                node = sequence[index]
                key = nil
            } else if let pairs = node.mapping?.filter({ $0.key.string == component.stringValue }), nth < pairs.count {
                node = pairs[nth].value
                key = pairs[nth].key
            }
        }
        return (node, key)
    }

    /// The decoder's errors in the file's words: what the key takes and what it found.
    static func describe(_ error: DecodingError, in root: Node) -> ExpectationProblem {
        switch error {
        case let .typeMismatch(type, context), let .valueNotFound(type, context):
            let found = node(at: context.codingPath, in: root).value
            return ExpectationProblem(path: context.codingPath, message: "expected \(words(for: type)), found \(words(for: found))")
        case let .keyNotFound(key, context):
            return ExpectationProblem(path: context.codingPath, message: "'\(key.stringValue)' is missing")
        case let .dataCorrupted(context):
            return ExpectationProblem(path: context.codingPath, message: context.debugDescription)
        @unknown default:
            return ExpectationProblem(path: [], message: "\(error)")
        }
    }

    static func words(for type: Any.Type) -> String {
        switch type {
        case is Int.Type, is Int64.Type: "a whole number"
        case is Double.Type: "a number"
        case is Bool.Type: "true or false"
        case is String.Type, is Node.Scalar.Type: "a single value"
        case is Node.Mapping.Type: "a mapping ({key: value})"
        case is Node.Sequence.Type, is [String].Type: "a list ([a, b])"
        default: "\(type)"
        }
    }

    static func words(for node: Node) -> String {
        switch node {
        case .scalar(let s): s.string.isEmpty || s.string == "~" || s.string == "null" ? "nothing" : "'\(s.string)'"
        case .mapping: "a mapping"
        case .sequence: "a list"
        }
    }
}
