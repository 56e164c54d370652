import BLEAnalysis
import BLECapture
import BLECore
import BLETestSupport
import Testing

@testable import BLEReports

/// `check --expect`'s `security` kind on the security Samples (bumble, with truth files): each field fails on the link
/// that breaks it, at the frame the truth names, and passes where the Sample keeps it; a wrong value in the file is an
/// error naming it.
@Suite struct SecurityExpectationTests {
    static func check(_ yaml: String, _ sample: String) throws -> ExpectationResult {
        let expectation = try #require(try Expectation.parse(yaml: "expect:\n  - " + yaml).first)
        return CheckFacts.gather(try CaptureFile.open(path: TestEnvironment.sample(sample))).evaluate(expectation, file: sample)
    }

    @Test func aSevenByteKeyFailsAMinimumOfSixteenAndPassesSeven() throws {
        // sec-legacy-short-key: Pairing Response #34 agrees 7 bytes; encryption on at #43.
        let r = try Self.check("security: {min_key_size: 16}", "sec-legacy-short-key.btsnoop")
        #expect(!r.passed && r.frame == 34 && r.connection == 1)
        #expect(r.detail.hasPrefix("link #1: 7-byte key (inferred: the smaller Maximum Encryption Key Size"), "\(r.detail)")
        #expect(try Self.check("security: {min_key_size: 7}", "sec-legacy-short-key.btsnoop").passed)
        // BR/EDR: the second session's Read Encryption Key Size (#82) says 7.
        let bredr = try Self.check("security: {min_key_size: 16}", "sec-bredr-key-downgrade.btsnoop")
        #expect(!bredr.passed && bredr.frame == 82 && bredr.connection == 2)
    }

    @Test func methodsDebugKeysAndLegacyPairing() throws {
        let methods = try Self.check("security: {methods: [Numeric Comparison, Passkey Entry]}", "sec-legacy-short-key.btsnoop")
        #expect(!methods.passed && methods.frame == 32 && methods.detail == "link #1: LE legacy Just Works at frame 32")
        #expect(try Self.check("security: {methods: [numeric comparison]}", "sec-bredr-key-downgrade.btsnoop").passed)
        let debug = try Self.check("security: {no_debug_keys: true}", "sec-sc-debug-key.btsnoop")
        #expect(!debug.passed && debug.frame == 39 && debug.detail == "link #1 paired with a debug key (frame 39)")
        #expect(try Self.check("security: {no_debug_keys: true}", "sec-legacy-short-key.btsnoop").passed)
        let legacy = try Self.check("security: {no_legacy_pairing: true}", "sec-legacy-short-key.btsnoop")
        #expect(!legacy.passed && legacy.detail == "link #1: LE legacy pairing at frame 32")
        #expect(try Self.check("security: {no_legacy_pairing: true}", "sec-sc-debug-key.btsnoop").passed)
    }

    @Test func aKeySizeTheLogDoesNotShowFails() throws {
        // diag-bond-lost's second link encrypts nothing; its first pairs (SC, 16 bytes): passes. nordic-dfu never
        // encrypts: nothing to check.
        #expect(try Self.check("security: {min_key_size: 16}", "diag-bond-lost.btsnoop").passed)
        let none = try Self.check("security: {min_key_size: 16}", "nordic-dfu.btsnoop")
        #expect(none.passed && none.detail == "no pairing or encryption in the capture")
    }

    @Test func badValuesAreNamed() {
        #expect(throws: ExpectationFileError.self) { try Expectation.parse(yaml: "expect:\n  - security: {min_key_size: 20}") }
        #expect(throws: ExpectationFileError.self) { try Expectation.parse(yaml: "expect:\n  - security: {methods: [Magic]}") }
        #expect(throws: ExpectationFileError.self) { try Expectation.parse(yaml: "expect:\n  - security: {min_keysize: 16}") }
    }
}
