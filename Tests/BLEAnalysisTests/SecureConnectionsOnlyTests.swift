import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Foundation
import Testing

/// Secure Connections where the log shows it, never guessed (issue 45): BR/EDR this side's Secure Connections host
/// support (Core Spec Vol 4, Part E, 7.3.92–93) as a fact of each link opened after it; LE a responder that refuses a
/// Pairing Request without the SC flag at once with Authentication Requirements (0x03) or Encryption Key Size (0x06):
/// it requires Secure Connections (SC Only mode, Vol 3, Part H, 2.3.5.1), inferred from both frames.
@Suite struct SecureConnectionsOnlyTests {
    static let write = HCICommand(ogf: 0x03, ocf: 0x007A), read = HCICommand(ogf: 0x03, ocf: 0x0079)
    static let peer = BDAddress(0x0011_2233_4455)

    static func record(_ b: CaptureBuilder) throws -> LinkSecurity {
        try #require(Analyzer.analyze(try b.captureFile()).connections.first).machine.securityRecord
    }

    /// Write Secure Connections Host Support (on) at 1, accepted at 2, the BR/EDR link at 3: "on, frame 1". Near
    /// misses: the write refused (0x0C): not in the log; Read's answer "off" at 2: off, frame 2.
    @Test func hostSupportAsTheControllerTookIt() throws {
        func link(_ b: CaptureBuilder) throws -> SecureConnectionsHostSupport? {
            try Self.record(b.event(HCIBuild.connectionComplete(handle: 0x0B, peer: Self.peer))).secureConnectionsHost
        }
        let written = CaptureBuilder().command(HCIBuild.command(Self.write, parameters: [0x01]))
            .event(HCIBuild.commandComplete(Self.write))
        #expect(try link(written) == SecureConnectionsHostSupport(on: true, frame: 1, shownBy: "Write Secure Connections Host Support"))
        #expect(try link(written)?.description == "on, frame 1 (Write Secure Connections Host Support)")
        let refused = CaptureBuilder().command(HCIBuild.command(Self.write, parameters: [0x01]))
            .event(HCIBuild.commandComplete(Self.write, returnParameters: [0x0C]))
        #expect(try link(refused) == nil)
        let read = CaptureBuilder().command(HCIBuild.command(Self.read)).event(
            HCIBuild.commandComplete(Self.read, returnParameters: [0x00, 0x00]))
        #expect(try link(read) == SecureConnectionsHostSupport(on: false, frame: 2, shownBy: "Read Secure Connections Host Support"))
        let le = written.connect(handle: 0x40)
        #expect(try Self.record(le).secureConnectionsHost == nil)
    }

    /// The aleksa Android log (corpus), with tshark: Write Secure Connections Host Support "Enable (0x01)" at 581, its
    /// Command Complete status 0x00 at 582, the BR/EDR Connection Complete with 00:1f:82:3a:8f:56 at 791.
    @Test func realCaptureAsTsharkReadsIt() throws {
        guard let dir = TestEnvironment.corpusDirectory else { return }
        let path = dir + "/android-btsnoop-broadcom-vsc_aleksa-classic-hfp-avdtp.log"
        guard FileManager.default.fileExists(atPath: path) else { return }
        let link = try #require(Analyzer.analyze(try CaptureFile.open(path: path)).connections.filter { !$0.isLE }.first)
        #expect(link.startFrame == 791)
        #expect(
            link.machine.securityRecord.secureConnectionsHost
                == SecureConnectionsHostSupport(on: true, frame: 581, shownBy: "Write Secure Connections Host Support"))
    }

    /// Pairing Request (IO NoInputNoOutput, AuthReq `authReq`, 16-byte maximum, keys EncKey|IdKey) from this side.
    static func request(authReq: UInt8) -> [UInt8] { [0x01, 0x03, 0x00, authReq, 0x10, 0x03, 0x03] }
    static let response: [UInt8] = [0x02, 0x03, 0x00, 0x01, 0x10, 0x03, 0x03]

    static func pairing(authReq: UInt8, then steps: [([UInt8], Direction)]) throws -> SecurityPairing {
        var b = CaptureBuilder().connect(handle: 0x40).l2cap(cid: 0x0006, payload: request(authReq: authReq), handle: 0x40, .tx)
        for (pdu, direction) in steps { b = b.l2cap(cid: 0x0006, payload: pdu, handle: 0x40, direction) }
        return try #require(try Self.record(b).pairings.first)
    }

    /// The central's Pairing Request at 2 with AuthReq bonding only (no SC flag), the peer's Pairing Failed
    /// Authentication Requirements at 3 (and Encryption Key Size): the responder requires Secure Connections. Near
    /// misses: the request set SC (0x09); the reason Pairing Not Supported (0x05); a Pairing Response came first; the
    /// initiator itself sent the Pairing Failed.
    @Test func aResponderThatRefusesLegacyPairing() throws {
        let refused = try Self.pairing(authReq: 0x01, then: [([0x05, 0x03], .rx)])
        #expect(refused.requiresSecureConnections && refused.frame == 2)
        #expect(refused.outcome == .failed(frame: 3, by: .peer, reason: "Authentication Requirements"))
        #expect(try Self.pairing(authReq: 0x01, then: [([0x05, 0x06], .rx)]).requiresSecureConnections)
        #expect(try !Self.pairing(authReq: 0x09, then: [([0x05, 0x03], .rx)]).requiresSecureConnections)
        #expect(try !Self.pairing(authReq: 0x01, then: [([0x05, 0x05], .rx)]).requiresSecureConnections)
        #expect(try !Self.pairing(authReq: 0x01, then: [(Self.response, .rx), ([0x05, 0x03], .rx)]).requiresSecureConnections)
        #expect(try !Self.pairing(authReq: 0x01, then: [([0x05, 0x03], .tx)]).requiresSecureConnections)
    }
}
