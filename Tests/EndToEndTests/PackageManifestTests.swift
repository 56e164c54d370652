import BLETestSupport
import Foundation
import Testing

/// Every test target names in `Package.swift` each of the project's modules its sources import. SwiftPM rebuilds a
/// target when the modules it names change, and a test compiles in the stored-property layout of the types it uses:
/// BLEReportsTests reached BLEAnalysis only through BLEReports, so a change to `Analyzer`'s stored properties rebuilt
/// neither it nor its `analyzer.onEvent = …`, which then wrote into other fields (the heap corruption in
/// BackgroundTimelineJSONTests; the comment above the test targets in `Package.swift`).
@Suite struct PackageManifestTests {
    static let projectModules: Set<String> = [
        "BLECore", "BLESecurity", "BLECapture", "BLEProtocols", "BLECodecs", "BLEAnalysis", "BLEReports", "BLETestSupport",
    ]

    @Test func testTargetsNameEveryModuleTheyImport() throws {
        let root = TestEnvironment.repositoryRoot
        let manifest = try String(contentsOfFile: root + "/Package.swift", encoding: .utf8)
        var checked: [String] = []
        for target in try FileManager.default.contentsOfDirectory(atPath: root + "/Tests").sorted() {
            guard let declared = Self.dependencies(ofTestTarget: target, in: manifest) else { continue }
            let imported = try Self.imports(under: root + "/Tests/" + target).intersection(Self.projectModules)
            let missing = imported.subtracting(declared).subtracting([target])
            #expect(missing.isEmpty, "\(target) imports \(missing.sorted()) without naming it in Package.swift")
            checked.append(target)
        }
        // The parsing reads what it should: the targets of Package.swift, and the import this test exists for.
        #expect(checked.contains("BLEReportsTests") && checked.contains("EndToEndTests") && checked.count >= 9, "\(checked)")
        #expect(try Self.imports(under: root + "/Tests/BLEReportsTests").contains("BLEAnalysis"))
    }

    /// The quoted names in the `dependencies: [...]` of `.testTarget(name: "<target>"`; nil when it is no test target.
    static func dependencies(ofTestTarget target: String, in manifest: String) -> Set<String>? {
        let compact = manifest.filter { !$0.isWhitespace }
        guard let start = compact.range(of: ".testTarget(name:\"\(target)\"") else { return nil }
        let rest = compact[start.upperBound...]
        guard let open = rest.range(of: "dependencies:["), let close = rest[open.upperBound...].firstIndex(of: "]") else {
            return []
        }
        let list = rest[open.upperBound..<close]
        return Set(list.split(separator: ",").map { String($0.filter { $0 != "\"" }) })
    }

    /// The modules the Swift files under `directory` import (`import X`, `@testable import X`, `import struct X.Y`).
    static func imports(under directory: String) throws -> Set<String> {
        var modules: Set<String> = []
        guard let files = FileManager.default.enumerator(atPath: directory) else { return modules }
        for case let file as String in files where file.hasSuffix(".swift") {
            let text = try String(contentsOfFile: directory + "/" + file, encoding: .utf8)
            for line in text.split(separator: "\n") {
                var words = line.split(separator: " ").map(String.init)
                if words.first == "@testable" { words.removeFirst() }
                guard words.first == "import", words.count >= 2 else { continue }
                let kinds: Set<String> = ["struct", "class", "enum", "protocol", "func", "var", "let", "typealias"]
                let name = kinds.contains(words[1]) && words.count >= 3 ? words[2] : words[1]
                modules.insert(String(name.split(separator: ".")[0]))
            }
        }
        return modules
    }
}
