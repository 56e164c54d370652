import BLEAnalysisTestSupport
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEAnalysis

/// What the first screen of a long log told too little of (batch (17), issues 48 and 46): which device's BR/EDR links
/// ended how, two links up at once, an end that crossed this side's refused Disconnect, a version exchange the peer
/// never answered, and who asked for a link's parameter changes. Each from typed packets, with its near miss.
@Suite struct FirstScreenFoldTests {
    static let echo = BDAddress(0x4C_17_44_79_6B_59)
    static let speaker = BDAddress(0xF8_5C_7D_18_E2_FF)

    static func story(_ b: CaptureBuilder) throws -> [String] { try RuleTest.diagnose(b).story.sentences.map(\.text) }

    static func classicLine(_ b: CaptureBuilder) throws -> String {
        let texts = try story(b)
        return try #require(texts.first { $0.contains("BR/EDR link") }, "\(texts)")
    }

    static func at(_ b: CaptureBuilder, _ seconds: Int64) -> CaptureBuilder { b.at(microsecondsFromStart: seconds * 1_000_000) }

    /// Two devices: the car kit's link lost (0x08) at 10 s, the speaker's link (5–8 s) ended by the peer: each device
    /// gets its own endings, and the 3 s both were up is told with the frames that bound it.
    static func twoDevices(overlapping: Bool) -> CaptureBuilder {
        var b = CaptureBuilder().connectBREDR(handle: 0x0032, peer: echo)  // 1
        if !overlapping { b = at(b, 4).disconnect(handle: 0x0032, reason: .remoteUserTerminatedConnection) }  // 2
        b = at(b, 5).connectBREDR(handle: 0x0033, peer: speaker)
        b = at(b, 8).disconnect(handle: 0x0033, reason: .remoteUserTerminatedConnection)
        if overlapping { b = at(b, 10).disconnect(handle: 0x0032, reason: .connectionTimeout) }
        return b
    }

    @Test func eachDeviceItsOwnEndingsAndTwoLinksAtOnce() throws {
        let line = try Self.classicLine(Self.twoDevices(overlapping: true))
        #expect(
            line.hasPrefix(
                "2 BR/EDR links with 2 devices: 4C:17:44:79:6B:59 ×1: 1 lost by supervision timeout (0x08); F8:5C:7D:18:E2:FF ×1: 1 ended by the peer (0x13 Remote User Terminated Connection)"
            ), "\(line)")
        #expect(line.contains("; 2 links up at once for 3.00 s (2–3: 4C:17:44:79:6B:59, F8:5C:7D:18:E2:FF)"), "\(line)")
    }

    /// Near miss: the first link ended before the second opened; nothing was up at once.
    @Test func linksOneAfterTheOtherAreNotAtOnce() throws {
        let line = try Self.classicLine(Self.twoDevices(overlapping: false))
        #expect(
            line.contains(
                "4C:17:44:79:6B:59 ×1: 1 ended by the peer (0x13 Remote User Terminated Connection); F8:5C:7D:18:E2:FF ×1: 1 ended by the peer (0x13)"
            ), "\(line)")
        #expect(!line.contains("at once"), "\(line)")
    }

    /// One device: the fold over its links as before (no device list to split).
    @Test func oneDeviceKeepsTheFold() throws {
        let b = CaptureBuilder().connectBREDR(handle: 0x0032, peer: Self.echo).disconnect(handle: 0x0032)
            .connectBREDR(handle: 0x0033, peer: Self.echo).disconnect(handle: 0x0033, reason: .connectionTimeout)
        let line = try Self.classicLine(b)
        #expect(line.hasPrefix("2 BR/EDR links with 4C:17:44:79:6B:59 ×2: 1 ended by the peer"), "\(line)")
    }

    // MARK: A refused Disconnect the peer's end overtook

    /// The Echo Auto: this side's Disconnect refused 0x12 (22345), the peer's 0x13 0.14 s later (22346).
    static func refusedThenEnded(refused: Bool) -> CaptureBuilder {
        var b = CaptureBuilder().connectBREDR(handle: 0x0033, peer: echo)
        let disconnect = HCIDisconnect(handle: 0x0033, reason: .remoteUserTerminatedConnection)
        b = at(b, 1).command(HCIBuild.command(.disconnect(disconnect)))
            .event(HCIBuild.commandStatus(.disconnect, status: refused ? .invalidCommandParameters : .success))
        return b.at(microsecondsFromStart: 1_140_000).disconnect(handle: 0x0033, reason: .remoteUserTerminatedConnection)
    }

    @Test func thePeersEndWhileThisSidesDisconnectWasRefused() throws {
        let line = try Self.classicLine(Self.refusedThenEnded(refused: true))
        #expect(
            line.contains("1 ended by the peer (0x13 Remote User Terminated Connection) while this side's Disconnect was refused (0x12)"),
            "\(line)")
    }

    /// Near miss: the Disconnect accepted, the end is this side's own (as the controller reports it), no refusal told.
    @Test func anAcceptedDisconnectIsNoCrossing() throws {
        let line = try Self.classicLine(Self.refusedThenEnded(refused: false))
        #expect(!line.contains("refused"), "\(line)")
    }

    // MARK: The version exchange

    /// An LE link: this side asks Read Remote Version Information (its Command Status), then the link ends 0x22
    /// with no Complete event; `answered` adds the Complete before the end; `open` leaves the link up at the log's end.
    static func versionAsked(answered: Bool, open: Bool = false, endAfter seconds: Int64 = 30) -> CaptureBuilder {
        var b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer)
        b = b.command(HCIBuild.command(.readRemoteVersionInformation, parameters: [0x40, 0x00]))
            .event(HCIBuild.commandStatus(.readRemoteVersionInformation))
        if answered {
            b = b.declaredEvent(
                ReadRemoteVersionInformationComplete {
                    $0.handle = 0x40; $0.version = 12; $0.companyIdentifier = 0x0059; $0.subversion = 1
                })
        }
        return open
            ? b.att(.readRequest(handle: 3), handle: 0x40, .tx)
            : b.at(microsecondsFromStart: seconds * 1_000_000 + 3_000).disconnect(handle: 0x40, reason: .llResponseTimeout)
    }

    static func leLine(_ b: CaptureBuilder) throws -> String {
        let texts = try story(b)
        return try #require(texts.first { $0.contains("LE link") }, "\(texts)")
    }

    @Test func aVersionExchangeNeverAnsweredBeforeTheEnd() throws {
        let line = try Self.leLine(Self.versionAsked(answered: false))
        #expect(
            line.hasSuffix("; the version exchange this side asked never completed on it (Read Remote Version Information at 2)."),
            "\(line)")
    }

    /// Near misses: answered before the end; asked on a link still open when the log ends (it may yet be answered); or
    /// asked 1 ms before the link was lost (the bafang iPhone log, 45370 → 45372): no time to answer.
    @Test func anAnsweredOrStillOpenExchangeIsNotTold() throws {
        #expect(!(try Self.leLine(Self.versionAsked(answered: false, endAfter: 0))).contains("version exchange"))
        #expect(!(try Self.leLine(Self.versionAsked(answered: true))).contains("version exchange"))
        #expect(!(try Self.leLine(Self.versionAsked(answered: false, open: true))).contains("version exchange"))
    }

    // MARK: Who asked for the parameter changes

    /// The band's link #10: the peer's L2CAP Connection Parameter Update Request, this side's answer (`result`), then the
    /// update this side's controller made.
    static func peerAsks(result: UInt16) -> CaptureBuilder {
        var b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer)
            .att(.writeRequest(handle: 0x0013, value: [0x01, 0x00]), handle: 0x40, .tx).att(.writeResponse, handle: 0x40, .rx)
        b = b.leSignal(
            .connectionParameterUpdateRequest(intervalMin: 6, intervalMax: 6, latency: 0, timeout: 600), identifier: 7, handle: 0x40, .rx)
        b = b.leSignal(.connectionParameterUpdateResponse(result: result), identifier: 7, handle: 0x40, .tx)
        if result == 0 { b = b.connectionUpdateComplete(handle: 0x40, interval: 6, timeout: 600) }
        return b
    }

    @Test func theChangesThePeerAskedForAreSaidToBeItsOwn() throws {
        let texts = try Self.story(Self.peerAsks(result: 0))
        let setup = try #require(texts.first { $0.hasPrefix("Set-up of link #1") }, "\(texts)")
        #expect(
            setup.contains("then 7.5 ms, timeout 6 s (6) (the peer asked for one: L2CAP Connection Parameter Update Request at 4)"),
            "\(setup)")
    }

    /// Near miss: the request refused (result 1, LP-01's): no change, and the story does not say the peer drove one.
    @Test func aRefusedRequestIsNotTold() throws {
        let texts = try Self.story(Self.peerAsks(result: 1))
        #expect(!texts.contains { $0.contains("the peer asked for") }, "\(texts)")
    }
}
