import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// HH-04 on inquiries, pages and name requests refused while the controller pages for an earlier name request or
/// connection (issue 48), found on BlueZ 2006 with a NEC 616 (`pcap-lt201-h4phdr_thewbi-bluez-2006-nec616-…`, tshark):
/// Remote Name Request at 41 and Inquiry at 43 refused 0x0C (frames 42, 44) while the name request of 37 (accepted at
/// 38) paged, answered 0x04 Page Timeout at 45; Inquiry at 111 refused (112) while that of 107 paged, answered at 113.
/// Info with the page's frames; the same refusal with no page running, or one the log never answers, stays a warning.
extension DiagnosisRuleTests {
    @Suite struct HH04PageState {
        static let address: [UInt8] = [0xFA, 0x2E, 0x07, 0x6D, 0x0E, 0x00]
        static let inquiryParameters: [UInt8] = [0x33, 0x8B, 0x9E, 0x10, 0x00]

        static func nameRequest(_ b: CaptureBuilder) -> CaptureBuilder {
            b.command(HCIBuild.command(.remoteNameRequest, parameters: Self.address + [1, 0, 0, 0]))
                .event(HCIBuild.commandStatus(.remoteNameRequest))
        }
        /// Remote Name Request Complete, 0x04 Page Timeout (as at frame 45).
        static func nameComplete(_ b: CaptureBuilder) -> CaptureBuilder {
            b.event(HCIBuild.event(HCIEventCode(0x07), parameters: [0x04] + Self.address + [UInt8](repeating: 0, count: 248)))
        }
        static func refusedInquiry(_ b: CaptureBuilder) -> CaptureBuilder {
            b.commandRefusedByStatus(.inquiry, parameters: Self.inquiryParameters, status: .commandDisallowed)
        }
        static func hh04(_ b: CaptureBuilder, _ op: String) throws -> Diagnosis {
            try #require(try RuleTest.diagnose(b).of("HH-04").first { $0.headline.hasPrefix(op) })
        }

        @Test func anInquiryRefusedWhileANameRequestPagesIsTheControllersState() throws {
            let request = CaptureBuilder().nextFrame
            let b = Self.refusedInquiry(Self.nameRequest(CaptureBuilder()))
            let refused = b.nextFrame - 1
            let answered = b.nextFrame
            let d = try Self.hh04(Self.nameComplete(b), "Inquiry")
            #expect(d.severity == .info && d.frame == refused)
            #expect(
                d.causes.first
                    == "a name request to 00:0E:6D:07:2E:FA was still paging (frame \(request), answered at frame \(answered)): the controller was in a state where it cannot process the command at this time (Command Disallowed, Core Spec Vol 1, Part F, 2.12); the page went on"
            )
        }

        @Test func aSecondNameRequestRefusedWhileTheFirstPagesIsAnsweredByTheFirst() throws {
            // Frames 37–45: two requests accepted, one answered, a third refused while the second pages.
            let first = Self.nameComplete(Self.nameRequest(Self.nameRequest(CaptureBuilder())))
            let second = 3
            let b = first.commandRefusedByStatus(
                .remoteNameRequest, parameters: Self.address + [1, 0, 0, 0], status: .commandDisallowed)
            let answered = b.nextFrame
            let d = try Self.hh04(Self.nameComplete(b), "Remote Name Request")
            #expect(d.severity == .info)
            #expect(
                d.causes.first?.hasPrefix(
                    "a name request to 00:0E:6D:07:2E:FA was still paging (frame \(second), answered at frame \(answered))") == true)
        }

        @Test func nearMissAnInquiryRefusedWithNoPageRunningOrOneNeverAnsweredStaysAWarning() throws {
            // The name request answered before the inquiry; a name request the log never answers.
            let answeredFirst = Self.refusedInquiry(Self.nameComplete(Self.nameRequest(CaptureBuilder())))
            let neverAnswered = Self.refusedInquiry(Self.nameRequest(CaptureBuilder()))
            for b in [answeredFirst, neverAnswered] {
                let d = try Self.hh04(b, "Inquiry")
                #expect(d.severity == .warning && d.causes.first == "a host state-machine bug")
            }
        }

        static func refusedCreate(_ b: CaptureBuilder) -> CaptureBuilder {
            b.commandRefusedByStatus(
                .createConnection, parameters: Self.address + [0x18, 0xCC, 0x01, 0x00, 0x00, 0x00, 0x01], status: .commandDisallowed)
        }
        /// Connection Complete (ACL, success) with `address` on handle 0x000B.
        static func connected(_ b: CaptureBuilder, _ address: [UInt8] = Self.address) -> CaptureBuilder {
            b.event(HCIBuild.event(HCIEventCode(0x03), parameters: [0x00, 0x0B, 0x00] + address + [0x01, 0x00]))
        }

        /// Ethermind (`btsnoop-h4_ethermind-bredr-page-timeout-04-…`, tshark): Create Connection at 1543 refused 0x0C at
        /// 1544, the device's own Connect Request at 1545, the link up at 1549 (0.28 s).
        @Test func aCreateConnectionRefusedWhileTheDeviceConnectsToThisSideGotItsLink() throws {
            let b = Self.refusedCreate(CaptureBuilder())
            let up = b.nextFrame
            let d = try Self.hh04(Self.connected(b), "Create Connection")
            #expect(d.severity == .info)
            #expect(
                d.causes.first
                    == "00:0E:6D:07:2E:FA was connecting to this side at the same moment: the link came up at frame \(up), the one the host asked for"
            )
        }

        @Test func nearMissACreateConnectionRefusedThenAnotherDevicesLinkStaysAWarning() throws {
            let b = Self.connected(Self.refusedCreate(CaptureBuilder()), [0x01, 0x02, 0x03, 0x04, 0x05, 0x06])
            let d = try Self.hh04(b, "Create Connection")
            #expect(d.severity == .warning && d.causes.first == "a host state-machine bug")
        }
    }
}
