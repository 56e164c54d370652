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
        func link(_ b: CaptureBuilder) throws -> HostSecuritySetting? {
            try Self.record(b.event(HCIBuild.connectionComplete(handle: 0x0B, peer: Self.peer))).secureConnectionsHost
        }
        let written = CaptureBuilder().command(HCIBuild.command(Self.write, parameters: [0x01]))
            .event(HCIBuild.commandComplete(Self.write))
        #expect(
            try link(written)
                == HostSecuritySetting(.secureConnectionsHost, on: true, frame: 1, shownBy: "Write Secure Connections Host Support"))
        #expect(try link(written)?.description == "on, frame 1 (Write Secure Connections Host Support)")
        let refused = CaptureBuilder().command(HCIBuild.command(Self.write, parameters: [0x01]))
            .event(HCIBuild.commandComplete(Self.write, returnParameters: [0x0C]))
        #expect(try link(refused) == nil)
        let read = CaptureBuilder().command(HCIBuild.command(Self.read)).event(
            HCIBuild.commandComplete(Self.read, returnParameters: [0x00, 0x00]))
        #expect(
            try link(read)
                == HostSecuritySetting(.secureConnectionsHost, on: false, frame: 2, shownBy: "Read Secure Connections Host Support"))
        let le = written.connect(handle: 0x40)
        #expect(try Self.record(le).secureConnectionsHost == nil)
    }

    /// Simple Pairing Mode off (Write 0x0C56 [0x00] at 1, accepted at 2) and Authentication Enable on (Write 0x0C20
    /// [0x01] at 3, accepted at 4), then a BR/EDR link at 5: both are the link's facts, and the report's pairing cell
    /// names them (legacy PIN only; security mode 3). Near misses: Simple Pairing Mode on and Authentication Enable
    /// off (Read's answers at 2 and 4) are facts in JSON but not in the cell, which keeps what differs from a current
    /// host; the Authentication Enable write refused (0x12): not in the log.
    @Test func simplePairingModeAndAuthenticationEnable() throws {
        let sspWrite = HCICommand(ogf: 0x03, ocf: 0x0056), authWrite = HCICommand(ogf: 0x03, ocf: 0x0020)
        let sspRead = HCICommand(ogf: 0x03, ocf: 0x0055), authRead = HCICommand(ogf: 0x03, ocf: 0x001F)
        func link(_ b: CaptureBuilder) throws -> LinkSecurity {
            try Self.record(b.event(HCIBuild.connectionComplete(handle: 0x0B, peer: Self.peer)))
        }
        let mode3 = try link(
            CaptureBuilder().command(HCIBuild.command(sspWrite, parameters: [0x00])).event(HCIBuild.commandComplete(sspWrite))
                .command(HCIBuild.command(authWrite, parameters: [0x01])).event(HCIBuild.commandComplete(authWrite)))
        #expect(
            mode3.hostSettings[.simplePairingMode]
                == HostSecuritySetting(.simplePairingMode, on: false, frame: 1, shownBy: "Write Simple Pairing Mode"))
        #expect(
            mode3.hostSettings[.authenticationEnable]
                == HostSecuritySetting(.authenticationEnable, on: true, frame: 3, shownBy: "Write Authentication Enable"))
        #expect(mode3.secureConnectionsHost == nil)
        #expect(
            mode3.hostSettingsNote
                == "; this side's Simple Pairing mode: off, frame 1 (Write Simple Pairing Mode); this side's Authentication Enable (every link authenticated at setup): on, frame 3 (Write Authentication Enable)"
        )
        let usual = try link(
            CaptureBuilder().command(HCIBuild.command(sspRead)).event(HCIBuild.commandComplete(sspRead, returnParameters: [0x00, 0x01]))
                .command(HCIBuild.command(authRead)).event(HCIBuild.commandComplete(authRead, returnParameters: [0x00, 0x00])))
        #expect(
            usual.hostSettings[.simplePairingMode]
                == HostSecuritySetting(.simplePairingMode, on: true, frame: 2, shownBy: "Read Simple Pairing Mode"))
        #expect(
            usual.hostSettings[.authenticationEnable]
                == HostSecuritySetting(.authenticationEnable, on: false, frame: 4, shownBy: "Read Authentication Enable"))
        #expect(usual.hostSettingsNote == "")
        let refused = try link(
            CaptureBuilder().command(HCIBuild.command(authWrite, parameters: [0x01]))
                .event(HCIBuild.commandComplete(authWrite, returnParameters: [0x12])))
        #expect(refused.hostSettings.isEmpty)
        // An HCI Reset between the accepted write (1, 2) and the link (5) puts the controller back to its defaults.
        let reset = HCICommand(ogf: 0x03, ocf: 0x0003)
        let afterReset = try link(
            CaptureBuilder().command(HCIBuild.command(authWrite, parameters: [0x01])).event(HCIBuild.commandComplete(authWrite))
                .command(HCIBuild.command(reset)).event(HCIBuild.commandComplete(reset)))
        #expect(afterReset.hostSettings.isEmpty)
    }

    /// The lksp CTF laptop's BTVS log (corpus), with tshark: Windows writes Authentication Enable "Authentication
    /// disabled (0x00)" after each of its three HCI Resets (1/19, 125/141, 233/249; Command Complete success 20, 142,
    /// 250); five pages time out (Connect Complete 0x04 at 116, 230, 340, 343, 352) and the one link, Connect Complete
    /// Success at 389, carries the write since the latest reset (249), not an earlier one (19, 141).
    @Test func windowsWritesAuthenticationEnableAfterEachReset() throws {
        guard let dir = TestEnvironment.corpusDirectory else { return }
        let path =
            dir + "/pcapng-lt201-btvs_lksp-ctf-laptop-samsung-a23-bredr-ssp-numcomp-974086-obex-put-unanswered-5-page-timeouts.pcapng"
        guard FileManager.default.fileExists(atPath: path) else { return }
        let links = try Analyzer.analyze(try CaptureFile.open(path: path)).connections.filter { !$0.isLE }
        let seen = links.map { ($0.startFrame, $0.machine.securityRecord.hostSettings[.authenticationEnable]?.frame) }
        #expect(seen.map(\.0) == [389])
        #expect(seen.map(\.1) == [249])
        #expect(links.allSatisfy { $0.machine.securityRecord.hostSettings[.authenticationEnable]?.on != true })
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
                == HostSecuritySetting(.secureConnectionsHost, on: true, frame: 581, shownBy: "Write Secure Connections Host Support"))
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
