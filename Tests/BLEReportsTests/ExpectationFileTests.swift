import BLEAnalysis
import BLECore
import BLETestSupport
import Foundation
import Testing

@testable import BLEReports

/// `check --expect` files read by the Decodable kinds: the example files as they are, and every kind of mistake named
/// with its file, line, column and key. The positions are counted by hand in the YAML written here (line 1 is
/// `expect:`, an item's key starts at column 5 after `  - `).
@Suite struct ExpectationFileTests {
    static func parse(_ yaml: String) throws(ExpectationFileError) -> [BLEReports.Expectation] {
        try BLEReports.Expectation.parse(yaml: yaml, path: "e.yaml")
    }

    /// The description of the error `yaml` raises (nil: it parsed).
    static func error(_ yaml: String) -> String? {
        do {
            _ = try parse(yaml)
            return nil
        } catch {
            return error.description
        }
    }

    @Test func theExampleFilesReadAsWritten() throws {
        let ok = try String(contentsOfFile: TestEnvironment.sample("expect/nordic-dfu-ok.yaml"), encoding: .utf8)
        #expect(
            try Self.parse(ok) == [
                .ota(protocolName: "nordic-secure-dfu", minRateBitsPerSecond: 160_000, rateText: "20kB/s", imagePath: nil),
                .noATTError(handle: nil, except: ["Attribute Not Found"]),
                .noDisconnection(reason: "Connection Timeout"),
                .latency(request: "Write Request", handle: nil, maxMicroseconds: 100_000),
            ])
        let strict = try String(contentsOfFile: TestEnvironment.sample("expect/nordic-dfu-strict.yaml"), encoding: .utf8)
        #expect(
            try Self.parse(strict) == [
                .ota(protocolName: "nordic-secure-dfu", minRateBitsPerSecond: 400_000, rateText: "50kB/s", imagePath: nil),
                .noDisconnection(reason: nil),
                .linkQuality(minRSSI: -80, maxRetransmissionsPerReport: nil, allowApproachingLSTO: false),
            ])
        let diagnosis = try String(contentsOfFile: TestEnvironment.sample("expect/no-errors.yaml"), encoding: .utf8)
        #expect(try Self.parse(diagnosis) == [.noFindings(minSeverity: .error), .absent(rules: ["CE-01", "CE-02", "SEC-01", "SEC-03"])])
    }

    @Test func everyKindAndValueForm() throws {
        let yaml = """
            - transfer: {uuid: 2A19, handle: 0x0012}
            - transfer: {handle: "00a0"}
            - no_att_error: {handle: 18, except: [insufficient encryption, "0x0A"]}
            - no_disconnection: {reason: 0x08}
            - no_disconnection: {reason: remote user terminated connection}
            - no_disconnection:
            - latency: {request: Read Request, handle: 0x0003, max_ms: 2.5}
            - link_quality: {min_rssi: -70, max_retransmissions_per_report: 5, allow_approaching_lsto: true}
            - no_findings:
            - no_findings: {min_severity: warning}
            - present: [DC-01, DC-01, GATT-08]
            - ota: {protocol: mcumgr-smp, min_rate: 1 Mbps, image: app.bin}
            """
        #expect(
            try Self.parse(yaml) == [
                .transfer(uuid: BluetoothUUID("2A19"), handle: 0x0012),
                .transfer(uuid: nil, handle: 0x00A0),
                .noATTError(handle: 18, except: ["Insufficient Encryption", "Attribute Not Found"]),
                .noDisconnection(reason: "Connection Timeout"),
                .noDisconnection(reason: "Remote User Terminated Connection"),
                .noDisconnection(reason: nil),
                .latency(request: "Read Request", handle: 3, maxMicroseconds: 2_500),
                .linkQuality(minRSSI: -70, maxRetransmissionsPerReport: 5, allowApproachingLSTO: true),
                .noFindings(minSeverity: .error),
                .noFindings(minSeverity: .warning),
                .present(rules: ["DC-01", "GATT-08"]),
                .ota(protocolName: "mcumgr-smp", minRateBitsPerSecond: 1_000_000, rateText: "1 Mbps", imagePath: "app.bin"),
            ])
    }

    /// Each mistake, with where it is and what is wrong: `file:line:column: key path: message`.
    @Test(arguments: [
        // Unknown kind: points at the kind's key (line 3, column 5).
        (
            "expect:\n  - ota: {protocol: nordic-secure-dfu}\n  - otta: {protocol: x}\n",
            "e.yaml:3:5: expect[1].otta: unknown expectation 'otta' (ota, transfer, no_att_error, no_disconnection, latency, link_quality, no_findings, absent, present, baseline, security)"
        ),
        // Unknown key: points at the key, `min_rat` at column 40.
        (
            "expect:\n  - ota: {protocol: nordic-secure-dfu, min_rat: 20kB/s}\n",
            "e.yaml:2:40: expect[0].ota.min_rat: unknown key 'min_rat' for ota (known: image, min_rate, protocol)"
        ),
        // Wrong type: the value `low` at column 30.
        (
            "expect:\n  - link_quality: {min_rssi: low}\n",
            "e.yaml:2:30: expect[0].link_quality.min_rssi: expected a whole number, found 'low'"
        ),
        (
            "expect:\n  - link_quality: {allow_approaching_lsto: maybe}\n",
            "e.yaml:2:44: expect[0].link_quality.allow_approaching_lsto: expected true or false, found 'maybe'"
        ),
        (
            "expect:\n  - no_att_error: {except: Attribute Not Found}\n",
            "e.yaml:2:28: expect[0].no_att_error.except: expected a list ([a, b]), found 'Attribute Not Found'"
        ),
        // Block style: max_ms's value on line 4 at column 15.
        (
            "expect:\n  - latency:\n      request: Write Request\n      max_ms: [1, 2]\n",
            "e.yaml:4:15: expect[0].latency.max_ms: expected a single value, found a list"
        ),
        // Bad handle.
        (
            "expect:\n  - no_att_error: {handle: 0xZZ12}\n",
            "e.yaml:2:28: expect[0].no_att_error.handle: '0xZZ12' is not a handle (e.g. 0x0012)"
        ),
        (
            "expect:\n  - transfer:\n      handle: 70000\n",
            "e.yaml:3:15: expect[0].transfer.handle: 70000 is not a handle (0x0000–0xFFFF)"
        ),
        // Bad rate.
        (
            "expect:\n  - ota:\n      protocol: nordic-secure-dfu\n      min_rate: 20kB\n",
            "e.yaml:4:17: expect[0].ota.min_rate: '20kB' is not a rate (e.g. 20kB/s or 160kbps)"
        ),
        // Unknown rule id, the second of the list (column 21), and one in the wrong case.
        (
            "expect:\n  - absent: [DC-01, CE-99]\n",
            "e.yaml:2:21: expect[0].absent[1]: unknown rule 'CE-99' (blescope diagnose --list-rules lists them)"
        ),
        (
            "expect:\n  - absent: [dc-01]\n",
            "e.yaml:2:14: expect[0].absent[0]: unknown rule 'dc-01' (did you mean DC-01? blescope diagnose --list-rules lists them)"
        ),
        (
            "expect:\n  - no_findings: {min_severity: severe}\n",
            "e.yaml:2:33: expect[0].no_findings.min_severity: unknown severity 'severe' (info, warning, error, critical)"
        ),
        // Values a typo would otherwise let pass: a protocol, a reason or an ATT error nobody has.
        (
            "expect:\n  - ota: {protocol: nordic-secure-dfuu}\n",
            "e.yaml:2:21: expect[0].ota.protocol: unknown protocol 'nordic-secure-dfuu' (nordic-secure-dfu, nordic-legacy-dfu, mcumgr-smp, silabs-ota, nordic-buttonless-dfu, ti-oad, dialog-suota, esp-ble-ota, telink-ota, cypress-bootloader, vendor)"
        ),
        (
            "expect:\n  - no_disconnection: {reason: Conection Timeout}\n",
            "e.yaml:2:32: expect[0].no_disconnection.reason: unknown reason 'Conection Timeout' (a code such as 0x08, or its name: Connection Timeout)"
        ),
        (
            "expect:\n  - no_att_error: {except: [Atribute Not Found]}\n",
            "e.yaml:2:29: expect[0].no_att_error.except[0]: unknown ATT error 'Atribute Not Found' (a name such as Attribute Not Found, or a code such as 0x0A)"
        ),
        (
            "expect:\n  - ota: {protocol: nordic-secure-dfu, protocol: mcumgr-smp}\n",
            "e.yaml:2:40: expect[0].ota.protocol: 'protocol' given twice"
        ),
        // Shape of the document and of the items.
        (
            "expect:\n  - ota\n",
            "e.yaml:2:5: expect[0]: one kind per expectation, as `- ota: {protocol: nordic-secure-dfu}` (kinds: ota, transfer, no_att_error, no_disconnection, latency, link_quality, no_findings, absent, present, baseline, security)"
        ),
        (
            "expect:\n  - ota: {}\n    transfer: {}\n",
            "e.yaml:2:5: expect[0]: one kind per expectation, as `- ota: {protocol: nordic-secure-dfu}` (kinds: ota, transfer, no_att_error, no_disconnection, latency, link_quality, no_findings, absent, present, baseline, security)"
        ),
        ("expect:\n  - ota: {}\nexpcet: []\n", "e.yaml:3:1: expcet: unknown key 'expcet' for the document (known: expect)"),
        ("expect: ota\n", "e.yaml:1:9: expect: expected a list ([a, b]), found 'ota'"),
        ("expect: []\n", "e.yaml:1:9: expect: an empty list: nothing would be checked"),
        ("", "e.yaml: empty: expected a list of expectations under 'expect:'"),
        ("expect:\n  - latency: {max_ms: 5}\n", "e.yaml:2:14: expect[0].latency: needs 'request' (e.g. Write Request)"),
        (
            "expect:\n  - latency: {request: Write Request, max_ms: -5}\n",
            "e.yaml:2:47: expect[0].latency.max_ms: must be positive (got -5)"
        ),
        ("expect:\n  - absent:\n", "e.yaml:2:12: expect[0].absent: needs a value: a list of rule ids ([DC-01, CE-02])"),
        (
            "expect:\n  - absent: []\n",
            "e.yaml:2:13: expect[0].absent: an empty list: name at least one rule (blescope diagnose --list-rules)"
        ),
        // YAML syntax: libyaml's position and problem.
        ("expect:\n  - ota: {protocol: x\n  - bad\n", "e.yaml:4:1: not YAML: did not find expected ',' or '}'"),
    ])
    func mistakesNameFileLineColumnAndKey(_ yaml: String, _ message: String) {
        #expect(Self.error(yaml) == message)
    }

    /// A list at the top (no `expect:`) is the same file.
    @Test func aBareListIsTheSameFile() throws {
        #expect(try Self.parse("- no_findings: {min_severity: critical}\n") == [.noFindings(minSeverity: .critical)])
        #expect(Self.error("- no_findings: {min_severity: fatal}\n")?.hasPrefix("e.yaml:1:31: [0].no_findings.min_severity: ") == true)
    }

    /// Every rule of the table can be named, and every kind is listed in the message for an unknown one.
    @Test func everyRuleIdAndKindIsAccepted() throws {
        let ids = DiagnosisRules.all.map { $0.id }
        #expect(try Self.parse("- absent: [\(ids.joined(separator: ", "))]\n") == [.absent(rules: ids)])
        for kind in ExpectationKinds.all {
            #expect(Self.error("- \(kind.kind)x: {}\n")?.contains(kind.kind) == true)
        }
    }
}
