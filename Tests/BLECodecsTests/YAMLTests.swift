import BLEYAML
import Testing

/// BLEYAML composes libyaml's events into nodes. Positions and problems below are libyaml's, the same PyYAML's
/// `CLoader` (libyaml underneath) reports for these texts: `yaml.compose(text, Loader=yaml.CLoader)`.
struct YAMLTests {
    @Test func composesMappingsSequencesAndScalarsWithTheirPositions() throws {
        let text = """
            codec: bracelet
            fields:
              - {name: steps, type: u16}
              - name: 'kcal'
                type: "u8"
            """
        let root = try #require(try YAML.compose(yaml: text))
        let m = try #require(root.mapping)
        #expect(m.keys.compactMap(\.string) == ["codec", "fields"])
        #expect(m["codec"]?.string == "bracelet")
        let fields = try #require(m["fields"]?.sequence)
        #expect(fields.count == 2)
        #expect(fields[0].mapping?["type"]?.string == "u16")
        #expect(fields[0].mark == Node.Mark(line: 3, column: 5))
        #expect(fields[1].mapping?["name"]?.scalar?.style == .singleQuoted)
        #expect(fields[1].mapping?["type"]?.mark == Node.Mark(line: 5, column: 11))
        #expect(m.keys[1].mark == Node.Mark(line: 2, column: 1))
    }

    @Test func emptyTextHasNoDocumentAndAliasesAreTheirAnchorsNodes() throws {
        #expect(try YAML.compose(yaml: "") == nil)
        #expect(try YAML.compose(yaml: "# only a comment\n") == nil)
        let root = try #require(try YAML.compose(yaml: "a: &x [1, 2]\nb: *x\n"))
        #expect(root.mapping?["b"]?.sequence?.compactMap(\.string) == ["1", "2"])
    }

    /// A key is found as written and as plain text would resolve: `1` is an integer key, `'1'` a text key.
    @Test func keysResolveAsPlainText() throws {
        let root = try #require(try YAML.compose(yaml: "'1': quoted\n2: plain\nk: first\nk: last\n"))
        let m = try #require(root.mapping)
        #expect(m["1"] == nil)
        #expect(m["2"]?.string == "plain")
        #expect(m["k"]?.string == "last")
        #expect(m.count == 4)
    }

    @Test(arguments: [
        ("a: b: c\n", "1:5: error: scanner: mapping values are not allowed in this context:\na: b: c\n    ^"),
        (
            "a: [1, 2\n",
            "2:1: error: parser: while parsing a flow sequence in line 1, column 4\ndid not find expected ',' or ']':\n\n^"
        ),
        (
            "- a\nb: c\n",
            "2:1: error: parser: while parsing a block collection in line 1, column 1\ndid not find expected '-' indicator:\nb: c\n^"
        ),
        ("a: *x\n", "1:4: error: composer: found undefined alias:\na: *x\n   ^"),
        (
            "a: 1\n---\nb: 2\n",
            "2:1: error: composer: expected a single document in the stream in line 1, column 1\nbut found another document:\n---\n^"
        ),
    ])
    func errorsSayStageProblemAndPosition(_ text: String, _ description: String) {
        do {
            _ = try YAML.compose(yaml: text)
            Issue.record("\(text) composed")
        } catch {
            #expect(error.description == description)
        }
    }

    struct Numbers: Decodable, Equatable {
        var hex: Int
        var octal: Int
        var big: Int64
        var sexagesimal: Int
        var rate: Double
        var on: Bool
        var text: String
        var missing: Int?
        var null: String?
    }

    /// YAML 1.1 numbers and truth values, as the expectation files are read.
    @Test func decodesYAML11Scalars() throws {
        let text = "hex: 0x1F\noctal: 010\nbig: 1_000_000\nsexagesimal: 1:30\nrate: 2.5e+3\non: yes\ntext: 007\nnull: ~\n"
        let node = try #require(try YAML.compose(yaml: text))
        let n = try YAMLDecoder().decode(Numbers.self, from: node)
        #expect(
            n == Numbers(hex: 31, octal: 8, big: 1_000_000, sexagesimal: 90, rate: 2500, on: true, text: "007", missing: nil, null: nil))
    }

    /// A quoted number is text, and a mapping where a value belongs says so, at the key's path.
    @Test func quotedNumbersAndWrongShapesAreTypeMismatches() throws {
        struct One: Decodable { var n: Int }
        for (text, expected) in [("n: '5'\n", "Int"), ("n: {a: 1}\n", "Scalar")] {
            let node = try #require(try YAML.compose(yaml: text))
            do {
                _ = try YAMLDecoder().decode(One.self, from: node)
                Issue.record("\(text) decoded")
            } catch DecodingError.typeMismatch(let type, let context) {
                #expect("\(type)" == expected)
                #expect(context.codingPath.map(\.stringValue) == ["n"])
            }
        }
    }

    /// `<<` merges a mapping's pairs in before the mapping's own (which win).
    @Test func mergeKeys() throws {
        struct Pair: Decodable, Equatable {
            var a: Int
            var b: Int
        }
        let node = try #require(try YAML.compose(yaml: "base: &b {a: 1, b: 2}\nx:\n  <<: *b\n  b: 3\n"))
        let x = try #require(node.mapping?["x"])
        #expect(try YAMLDecoder().decode(Pair.self, from: x) == Pair(a: 1, b: 3))
    }
}

extension Node: Equatable {
    public static func == (l: Node, r: Node) -> Bool {
        switch (l, r) {
        case let (.scalar(a), .scalar(b)): a.string == b.string && a.style == b.style
        case let (.sequence(a), .sequence(b)): a.nodes == b.nodes
        case let (.mapping(a), .mapping(b)): a.keys == b.keys && a.values == b.values
        default: false
        }
    }
}
