import BLEAnalysis
import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// The tests of every diagnosis rule, one suite per group (`<Group>RuleTests.swift`), each rule on a capture that
/// triggers it and on the near miss that must not (DESIGN.md §6.13).
@Suite enum DiagnosisRuleTests {}

/// What the rule tests share: the whole `blescope diagnose` pipeline on a built capture, and the devices they name.
enum RuleTest {
    /// The peer most tests connect to, and how every message spells it.
    static let peer = BDAddress(0xC0_11_22_33_44_55)
    static let peerText = "C0:11:22:33:44:55"
    static let otherPeer = BDAddress(0xD2_33_44_55_66_77)
    static let otherPeerText = "D2:33:44:55:66:77"

    /// The diagnosis of a capture built from typed packets, through the reader, the analyzer and the engine.
    static func diagnose(_ b: CaptureBuilder, name: String = "built.btsnoop") throws -> DiagnosisResult {
        DiagnosisReport.analyze(try b.captureFile(name: name)).result
    }

    /// The diagnosis of an nRF Sniffer air capture built from typed link-layer packets.
    static func diagnose(air b: NordicBuilder) throws -> DiagnosisResult {
        DiagnosisReport.analyze(try airCapture(b.records)).result
    }

    static func airCapture(_ records: [TinyPcap.Rec]) throws -> CaptureFile {
        let owned = records.map { r in
            OwnedRecord(
                frame: r.frame, timestamp: Timestamp(microseconds: r.micros), direction: .unknown, kind: .linkLayer,
                originalLength: r.origLen, linkType: 272, bytes: r.bytes)
        }
        return try CaptureFile.open(bytes: CaptureWriter.pcap(owned, linkType: 272), name: "air.pcap")
    }

    /// `seconds` after the capture's first record.
    static func at(_ seconds: Double) -> Int64 { Int64(seconds * 1_000_000) }
}

extension DiagnosisResult {
    /// The findings of one rule, ranked as the engine ranks them.
    func of(_ rule: String) -> [Diagnosis] { findings.filter { $0.rule == rule } }
}

extension CaptureBuilder {
    /// The same builder, the next record `seconds` after the first.
    func at(_ seconds: Double) -> CaptureBuilder { at(microsecondsFromStart: RuleTest.at(seconds)) }
}
