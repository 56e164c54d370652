import BLEAnalysis
import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// BTstack logs the eSCO link's Disconnection Complete before the Disconnect that names it (the corpus's HFP gateway
/// logs, shutting down: 45697 then 45707, 11.2 ms; 25201 then 25211), then the ACL's completion 0.1 ms after the
/// command, and the log ends. The Disconnect's outcome is in the log: CQ-03 must not call it "still waiting for its
/// answer". Near misses: a completion of the same handle 2 s before, or of another handle, answers nothing.
extension DiagnosisRuleTests {
    @Suite struct DisconnectLoggedFirst {
        static let acl: UInt16 = 0x0048, esco: UInt16 = 0x0041

        /// A BR/EDR link with an eSCO link and its audio; the eSCO's completion (of `completed`) at 38.273121 s, the
        /// Disconnect of the eSCO at `commandAt` µs, the ACL's completion 94 µs after it; the log ends there.
        static func shutdown(completed: UInt16 = 0x0041, commandAt: Int64 = 38_284_357) -> (CaptureBuilder, command: Int) {
            var b = CaptureBuilder().connectBREDR(handle: acl).declaredEvent(
                SynchronousConnectionComplete {
                    $0.handle = esco; $0.address = BDAddress(0x00_1A_7D_DA_71_13); $0.linkType = 2; $0.airMode = .cvsd
                    $0.transmissionInterval = 12
                })
            b = b.sco(handle: esco, .tx).sco(handle: esco, .rx).at(microsecondsFromStart: 38_273_121)
                .event(HCIBuild.disconnectionComplete(handle: completed, reason: .connectionTerminatedByLocalHost))
                .at(microsecondsFromStart: commandAt)
            let command = b.nextFrame
            b = b.command(HCIBuild.command(.disconnect, parameters: [UInt8(esco & 0xFF), UInt8(esco >> 8), 0x13]))
                .at(microsecondsFromStart: commandAt + 94)
                .event(HCIBuild.disconnectionComplete(handle: acl, reason: .connectionTerminatedByLocalHost))
            return (b, command)
        }

        @Test func aDisconnectAnsweredJustBeforeItWasLoggedIsNotPending() throws {
            let (b, command) = Self.shutdown()
            let r = try RuleTest.diagnose(b)
            #expect(!r.of("CQ-03").contains { $0.message.contains("Disconnect still waiting") }, "\(r.of("CQ-03").map(\.message))")
            // The timeline says where its answer is.
            let (_, events) = try AnalyzerRun.analyze(b)
            let sent = try #require(events.first { $0.frame == command })
            #expect(
                sent.responseFrame == command - 1 && sent.summary.contains("logged before it, at frame \(command - 1)"), "\(sent.summary)")
        }

        @Test(arguments: [(UInt16(0x0041), Int64(40_273_121)), (UInt16(0x0042), Int64(38_284_357))])
        func nearMissACompletionLongBeforeOrOfAnotherHandleAnswersNothing(completed: UInt16, commandAt: Int64) throws {
            let (b, command) = Self.shutdown(completed: completed, commandAt: commandAt)
            let d = try #require(try RuleTest.diagnose(b).of("CQ-03").first)
            #expect(d.frame == command && d.message.contains("Disconnect still waiting for its answer at frame \(command)"), "\(d.message)")
        }
    }
}
