import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// HH-04 on refusals the link types and the link's own tuning explain (issue 48), found on the corpus's Android logs
/// (tshark): the pumpX2 Galaxy S20 FE sends Write Link Policy Settings for each new LE handle (171, 0x0002), refused
/// 0x02 (172); the blueprobe moto g04s refuses Write Default Link Policy Settings 0x12 (58), Change Connection Packet
/// Type 0x1A (772), and, in its earlier log, Create Connection 0x0B (6065) while the buds page it (6066, link up 6070).
/// Each is info with its cause; the same refusal where the explanation does not hold stays a warning.
extension DiagnosisRuleTests {
    @Suite struct HH04LinkTypeRefusal {
        static func hh04(_ b: CaptureBuilder, _ op: String) throws -> Diagnosis {
            try #require(try RuleTest.diagnose(b).of("HH-04").first { $0.headline.hasPrefix(op) })
        }
        /// Write Link Policy Settings for `handle` (role switch, sniff, park), refused 0x02 by Command Complete.
        static func linkPolicy(_ b: CaptureBuilder, handle: UInt16) -> CaptureBuilder {
            b.command(HCIBuild.command(.init(ogf: 0x02, ocf: 0x000D), parameters: [UInt8(handle & 0xFF), UInt8(handle >> 8), 0x0D, 0x00]))
                .event(
                    HCIBuild.commandComplete(
                        .init(ogf: 0x02, ocf: 0x000D), returnParameters: [0x02, UInt8(handle & 0xFF), UInt8(handle >> 8)]))
        }

        @Test func aLinkPolicyCommandForAnLELinkIsRefusedAsTheSpecSays() throws {
            let le = CaptureBuilder().connect(handle: 0x0002, peer: RuleTest.peer)
            let d = try Self.hh04(Self.linkPolicy(le, handle: 0x0002), "Write Link Policy Settings")
            #expect(d.severity == .info && d.causes.first?.hasPrefix("a BR/EDR link-policy command sent for an LE link") == true)
            // Near miss: the same refusal for a BR/EDR link, where link policy exists: not explained, a warning.
            let bredr = CaptureBuilder().connectBREDR(handle: 0x000B)
            #expect(try Self.hh04(Self.linkPolicy(bredr, handle: 0x000B), "Write Link Policy Settings").severity == .warning)
        }

        @Test func packetTypesThePeerLacksAndTheDefaultPolicyAreTuning() throws {
            let link = CaptureBuilder().connectBREDR(handle: 0x0032)
            let types = link.commandRefusedByStatus(
                .changeConnectionPacketType, parameters: [0x32, 0x00, 0x18, 0xCC], status: .unsupportedRemoteFeature)
            let d = try Self.hh04(types, "Change Connection Packet Type")
            #expect(
                d.severity == .info
                    && d.causes == ["the peer does not support the packet types asked for: the link keeps the ones in force"])
            let policy = CaptureBuilder().commandRefusedByComplete(
                .writeDefaultLinkPolicySettings, parameters: [0x0D, 0x00], status: .invalidCommandParameters)
            #expect(try Self.hh04(policy, "Write Default Link Policy Settings").severity == .info)
            // Near miss: packet types refused as invalid parameters (the host asked for something malformed).
            let invalid = link.commandRefusedByStatus(
                .changeConnectionPacketType, parameters: [0x32, 0x00, 0x18, 0xCC], status: .invalidCommandParameters)
            #expect(try Self.hh04(invalid, "Change Connection Packet Type").severity == .warning)
        }

        @Test func aPageRefusedWhileThePeerPagesUsIsACollision() throws {
            let refused = CaptureBuilder().commandRefusedByStatus(
                .createConnection, parameters: RuleTest.peer.bytes + [0x18, 0xCC, 0x01, 0x00, 0x00, 0x00, 0x01],
                status: .connectionAlreadyExists)
            let up = refused.nextFrame
            let d = try Self.hh04(refused.connectBREDR(handle: 0x0033), "Create Connection")
            #expect(d.severity == .info && d.causes.first?.hasPrefix("a page collision") == true)
            #expect(d.supporting.map(\.frame).contains(up) && d.message.hasSuffix("and the link came up at frame \(up)."))
            // Near miss: no link follows: a warning.
            #expect(try Self.hh04(refused, "Create Connection").severity == .warning)
        }

        /// The blueprobe Echo Auto log (tshark): Disconnect (0x0033, 0x13) at 22344 refused 0x12 at 22345, the link's
        /// Disconnection Complete reason 0x13 at 22346, 0.14 s later: the peer left as this side asked, and the
        /// controller never started this side's disconnection.
        static func disconnectRefused(_ b: CaptureBuilder) -> CaptureBuilder {
            b.commandRefusedByStatus(.disconnect, parameters: [0x33, 0x00, 0x13], status: .invalidCommandParameters)
        }

        @Test func aDisconnectRefusedAsTheLinkEndsIsThePeersEnd() throws {
            var b = Self.disconnectRefused(CaptureBuilder().connectBREDR(handle: 0x0033, peer: RuleTest.peer).at(10)).at(10.14)
            let end = b.nextFrame
            b = b.disconnect(handle: 0x0033, reason: .remoteUserTerminatedConnection)
            let d = try Self.hh04(b, "Disconnect")
            #expect(d.severity == .info && d.supporting.map(\.frame).contains(end))
            #expect(
                d.message.hasSuffix(
                    "; the link ended anyway at frame \(end) (Disconnection Complete, reason 0x13 Remote User Terminated Connection)."),
                "\(d.message)")
            let c = try #require(Analyzer.analyze(try b.captureFile(), options: AnalyzerOptions(evidence: true)).connections.first)
            #expect(c.lifecycle.ending?.endedBy == .peer && c.lifecycle.ending?.requestFrame == nil)
            #expect(try RuleTest.diagnose(b).of("DC-03").isEmpty)
        }

        @Test func nearMissADisconnectRefusedWithTheLinkGoingOnStaysAWarningAndAnAcceptedOneIsThisSides() throws {
            var b = Self.disconnectRefused(CaptureBuilder().connectBREDR(handle: 0x0033, peer: RuleTest.peer).at(10)).at(60)
            b = b.disconnect(handle: 0x0033, reason: .remoteUserTerminatedConnection)
            #expect(try Self.hh04(b, "Disconnect").severity == .warning)
            var accepted = CaptureBuilder().connectBREDR(handle: 0x0033, peer: RuleTest.peer).at(10).disconnectCommand(handle: 0x0033)
            accepted = accepted.at(10.14).disconnect(handle: 0x0033, reason: .remoteUserTerminatedConnection)
            let c = try #require(Analyzer.analyze(try accepted.captureFile(), options: AnalyzerOptions(evidence: true)).connections.first)
            #expect(c.lifecycle.ending?.endedBy == .local)
        }
    }
}
