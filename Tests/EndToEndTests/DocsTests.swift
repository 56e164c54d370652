import BLETestSupport
import Foundation
import Testing

/// The docs say what the binary says, and never send a reader out of the repository: the generated parts (option
/// lists, transcripts) are current, every relative link names a file of the repository, every `#anchor` a heading or
/// `<a id>` of its page, and every `docs/….md#anchor` a comment in the code points to exists.
@Suite struct DocsTests {
    static let root = TestEnvironment.repositoryRoot

    /// README.md and every page of docs/.
    static func pages() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: root + "/docs").filter { $0.hasSuffix(".md") }
        return ["README.md"] + docs.sorted().map { "docs/" + $0 }
    }

    /// `scripts/gen-docs.sh --check` with the binary under test: the option lists and transcripts are its output.
    @Test func generatedPartsAreCurrent() throws {
        let binary = try #require(TestEnvironment.blescopeBinary, "the blescope binary was not built")
        let environment = ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"]
        let r = try #require(
            TestEnvironment.execute("/bin/bash", ["scripts/gen-docs.sh", "--check", "--blescope", binary], environment: environment))
        #expect(r.status == 0, "run scripts/gen-docs.sh, then read the diff:\n\(r.stdout)\(r.stderr)")
    }

    @Test func linksStayInTheRepository() throws {
        var problems: [String] = []
        for page in try Self.pages() {
            let text = try String(contentsOfFile: Self.root + "/" + page, encoding: .utf8)
            for target in Self.linkTargets(text) where !Self.isExternal(target) {
                if let problem = Self.check(target, from: page) { problems.append("\(page): \(target): \(problem)") }
            }
        }
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    /// Code comments point to `docs/<page>.md#anchor` for the measurements behind a hot path: each must exist.
    @Test func pointersFromTheCodeResolve() throws {
        let pointer = /docs\/([a-z0-9-]+\.md)(#[a-z0-9-]+)?/
        var problems: [String] = [], count = 0
        let enumerator = FileManager.default.enumerator(atPath: Self.root + "/Sources")
        while let file = enumerator?.nextObject() as? String {
            guard file.hasSuffix(".swift") else { continue }
            let text = try String(contentsOfFile: Self.root + "/Sources/" + file, encoding: .utf8)
            for m in text.matches(of: pointer) {
                count += 1
                let target = String(m.output.1) + (m.output.2.map(String.init) ?? "")
                if let problem = Self.check(target, from: "docs/x.md") { problems.append("Sources/\(file): docs/\(target): \(problem)") }
            }
        }
        #expect(count > 0)
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
    }

    // MARK: -

    /// Targets of inline Markdown links `[text](target)`, outside fenced code blocks.
    static func linkTargets(_ text: String) -> [String] {
        var targets: [String] = []
        var inFence = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") { inFence.toggle(); continue }
            if inFence { continue }
            for m in line.matches(of: /\]\(([^)\s]+)\)/) { targets.append(String(m.output.1)) }
        }
        return targets
    }

    static func isExternal(_ target: String) -> Bool {
        target.hasPrefix("https://") || target.hasPrefix("http://") || target.hasPrefix("mailto:")
    }

    /// Why `target`, linked from `page`, does not resolve inside the repository; nil when it does.
    static func check(_ target: String, from page: String) -> String? {
        let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
        let path = parts[0], anchor = parts.count > 1 ? parts[1] : nil
        let base = URL(fileURLWithPath: root + "/" + page).deletingLastPathComponent()
        let file = path.isEmpty ? root + "/" + page : base.appendingPathComponent(path).standardized.path
        if path.hasPrefix("/") || !file.hasPrefix(root + "/") { return "leaves the repository" }
        guard FileManager.default.fileExists(atPath: file) else { return "no such file" }
        guard let anchor, file.hasSuffix(".md") else { return nil }
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else { return "unreadable" }
        return anchors(text).contains(anchor) ? nil : "no anchor #\(anchor) in \(file.dropFirst(root.count + 1))"
    }

    /// The anchors a page offers: GitHub's heading slugs (lower case, punctuation but `-` and `_` dropped, spaces to
    /// `-`, `-1`, `-2` … for repeats) and explicit `<a id="…">`.
    static func anchors(_ text: String) -> Set<String> {
        var result: Set<String> = [], seen: [String: Int] = [:], inFence = false
        for line in text.split(separator: "\n") {
            if line.hasPrefix("```") { inFence.toggle(); continue }
            if inFence { continue }
            for m in line.matches(of: /<a id="([^"]+)"><\/a>/) { result.insert(String(m.output.1)) }
            guard line.hasPrefix("#") else { continue }
            let title = line.drop { $0 == "#" }.trimmingCharacters(in: .whitespaces)
            let slug = String(
                title.lowercased().unicodeScalars.filter {
                    CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_" || $0 == " "
                }.map(Character.init)
            ).replacingOccurrences(of: " ", with: "-")
            let n = seen[slug, default: 0]
            seen[slug] = n + 1
            result.insert(n == 0 ? slug : "\(slug)-\(n)")
        }
        return result
    }
}
