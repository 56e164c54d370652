import BLETestSupport
import Foundation
import Testing

/// `scripts/strip-binary.sh` (what `scripts/install.sh` installs): on this build's binary, the stripped one has no
/// symbol table and no DWARF, is smaller and still runs; what was stripped is in `.debug/blescope.debug`, which the
/// binary names in its `.gnu_debuglink`.
@Suite struct StripBinaryTests {
    static func sections(_ path: String) -> Set<String>? {
        guard let out = TestEnvironment.run("/usr/bin/readelf", ["-S", "-W", path]) else { return nil }
        return Set(out.split(separator: "\n").compactMap { $0.split(separator: " ").first { $0.hasPrefix(".") }.map(String.init) })
    }

    @Test func theInstalledBinaryIsStrippedAndKeepsItsDebugFile() throws {
        let binary = try #require(TestEnvironment.blescopeBinary)
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/readelf"),
            FileManager.default.isExecutableFile(atPath: "/usr/bin/objcopy")
        else {
            print("StripBinaryTests: skipped, readelf or objcopy is not installed (binutils)")
            return
        }
        let dir = NSTemporaryDirectory() + "blescope-strip-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let r = try #require(TestEnvironment.execute("/bin/bash", ["scripts/strip-binary.sh", binary, dir]))
        #expect(r.status == 0, "\(r.stderr)")
        let stripped = dir + "/blescope", debug = dir + "/.debug/blescope.debug"
        let size = { (p: String) in (try? FileManager.default.attributesOfItem(atPath: p)[.size] as? Int) ?? 0 }
        #expect(size(stripped) > 0 && size(stripped) < size(binary) * 3 / 4, "\(size(stripped)) of \(size(binary)) bytes")
        let strippedSections = try #require(Self.sections(stripped))
        #expect(!strippedSections.contains(".symtab") && !strippedSections.contains(".debug_info"), "\(strippedSections.sorted())")
        #expect(strippedSections.contains(".gnu_debuglink"))
        #expect(try #require(Self.sections(debug)).contains(".debug_info"))
        let link = TestEnvironment.run("/usr/bin/readelf", ["--string-dump=.gnu_debuglink", stripped]) ?? ""
        #expect(link.contains("blescope.debug"))
        let version = try #require(TestEnvironment.execute(stripped, ["--version"]))
        #expect(version.status == 0 && version.stdout.hasPrefix("blescope "))
        let diagnosis = try #require(
            TestEnvironment.execute(stripped, ["diagnose", TestEnvironment.sample("diag-supervision-timeout.btsnoop")]))
        #expect(diagnosis.stdout.contains("DC-01"))
    }
}
