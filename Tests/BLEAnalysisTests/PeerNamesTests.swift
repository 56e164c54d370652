import BLEAnalysis
import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

/// One name per peer address, with its frame and source (``PeerNames``): from Remote Name Request Complete, an Extended
/// Inquiry Result's EIR, LE advertising data and a GATT Device Name read; shown where the story and the findings name
/// the peer. Captures built from typed packets; the names and frames are the packets' own.
@Suite struct PeerNamesTests {
    static let headset = BDAddress(0x94_DB_56_5F_D3_62)
    static let other = BDAddress(0x94_DB_56_5F_D3_63)
    static let tag = BDAddress(0x5A_73_E7_FF_D5_EB)

    static func evidence(_ b: CaptureBuilder) throws -> Evidence {
        Evidence(pass: try AnalyzerRun.analyze(b, options: AnalyzerOptions(evidence: true)).0)
    }

    static func remoteName(_ address: BDAddress, _ name: String) -> some HCIParameterSet {
        RemoteNameRequestComplete {
            $0.address = address; $0.remoteName = RemoteName(name)
        }
    }

    /// A legacy advertising report of `address` whose data holds `elements` (length, type, value each).
    static func advertising(_ address: BDAddress, _ elements: [(UInt8, [UInt8])], type: UInt8 = 0) -> [UInt8] {
        advertising(address, data: elements.flatMap { [UInt8($0.1.count + 1), $0.0] + $0.1 }, type: type)
    }

    static func advertising(_ address: BDAddress, data: [UInt8], type: UInt8 = 0) -> [UInt8] {
        HCIBuild.event(
            .leAdvertisingReport(
                LEAdvertisingReport(reports: [.init(eventType: type, addressType: .random, address: address, data: data, rssi: -60)])))
    }

    /// The Remote Name Request Complete at frame 2 names the link's peer: in the story's link line and in every finding's
    /// sentence, `WH-1000XM4 (94:DB:56:5F:D3:62)`, with its frame and source.
    @Test func aRemoteNameNamesTheLinksPeer() throws {
        let e = try Self.evidence(
            CaptureBuilder()
                .connectBREDR(handle: 0x000B, peer: Self.headset)  // 1
                .declaredEvent(Self.remoteName(Self.headset, "WH-1000XM4"))  // 2
                .disconnect(handle: 0x000B))  // 3
        let name = try #require(e.peerNames.name(for: Self.headset.value))
        #expect(name.text == "WH-1000XM4" && name.frame == 2 && name.source == .remoteNameRequest && !name.cut && !name.shortened)
        let c = try #require(e.connections.first)
        #expect(e.deviceName(c) == "WH-1000XM4 (94:DB:56:5F:D3:62)")
        let result = DiagnosisEngine.diagnose(e)
        let line = try #require(result.story.sentences.first { $0.topic == .classic })
        #expect(line.text.hasPrefix("1 BR/EDR link with WH-1000XM4 (94:DB:56:5F:D3:62) ×1:"), "\(line.text)")
        #expect(result.names == [NamedPeer(address: "94:DB:56:5F:D3:62", name: name)])
    }

    /// The near miss: a name for another address (one digit apart) is not the link's peer's.
    @Test func aNameForAnotherAddressIsNotAttached() throws {
        let e = try Self.evidence(
            CaptureBuilder()
                .connectBREDR(handle: 0x000B, peer: Self.headset)
                .declaredEvent(Self.remoteName(Self.other, "Car Kit"))
                .disconnect(handle: 0x000B))
        let c = try #require(e.connections.first)
        #expect(e.deviceName(c) == "94:DB:56:5F:D3:62")
        #expect(e.peerNames.name(for: Self.other.value)?.text == "Car Kit")
        #expect(DiagnosisEngine.diagnose(e).names.isEmpty)
        #expect(!DiagnosisEngine.diagnose(e).story.sentences.contains { $0.text.contains("Car Kit") })
    }

    /// A Shortened Local Name (0x08) at frame 1, the Complete Local Name (0x09) at frame 2: the complete one, frame 2.
    /// Then a shortened one again (frame 3) does not replace it.
    @Test func aShortenedThenACompleteNameGivesTheComplete() throws {
        let e = try Self.evidence(
            CaptureBuilder()
                .event(Self.advertising(Self.tag, [(0x01, [0x06]), (0x08, Array("Gr8".utf8))]))  // 1
                .event(Self.advertising(Self.tag, [(0x09, Array("Gr8 ThinQ".utf8))], type: 4))  // 2: SCAN_RSP
                .event(Self.advertising(Self.tag, [(0x08, Array("Gr".utf8))]))  // 3
                .connect(handle: 0x0040, peer: Self.tag))  // 4
        let name = try #require(e.peerNames.name(for: Self.tag.value))
        #expect(name.text == "Gr8 ThinQ" && name.frame == 2 && name.source == .advertising && !name.shortened)
        let c = try #require(e.connections.first)
        #expect(e.deviceName(c) == "Gr8 ThinQ (5A:73:E7:FF:D5:EB)")
    }

    /// A shortened name alone is shown marked: `Gr8…`.
    @Test func aShortenedNameAloneIsMarked() throws {
        let e = try Self.evidence(
            CaptureBuilder()
                .event(Self.advertising(Self.tag, [(0x08, Array("Gr8".utf8))]))
                .connect(handle: 0x0040, peer: Self.tag))
        let name = try #require(e.peerNames.name(for: Self.tag.value))
        #expect(name.shortened && name.shown == "Gr8…")
        #expect(e.deviceName(try #require(e.connections.first)) == "Gr8… (5A:73:E7:FF:D5:EB)")
    }

    /// A resolvable private address that changed is another address: the name advertised under the old one is not the
    /// link's, whatever the names look like.
    @Test func aNameOfAnotherRandomAddressIsNotGuessed() throws {
        let later = BDAddress(0x4B_8D_18_37_D3_25)
        let e = try Self.evidence(
            CaptureBuilder()
                .event(Self.advertising(Self.tag, [(0x09, Array("N02G2".utf8))]))
                .connect(handle: 0x0040, peer: later))
        #expect(e.deviceName(try #require(e.connections.first)) == "4B:8D:18:37:D3:25")
    }

    /// An Extended Inquiry Result (7.7.38) names the device that answered the inquiry with its EIR's Local Name.
    @Test func anExtendedInquiryResultNamesItsDevice() throws {
        let eir: [UInt8] = [10, 0x09] + Array("Gr8 ThinQ".utf8) + [0, 0]
        var parameters: [UInt8] = [1]
        parameters += (0..<6).map { UInt8(truncatingIfNeeded: Self.headset.value >> (8 * UInt64($0))) }
        parameters += [1, 0, 0x0C, 0x02, 0x5A, 0x34, 0x12, 0xC4] + eir
        let e = try Self.evidence(
            CaptureBuilder()
                .event(HCIBuild.event(HCIEventCode(0x2F), parameters: parameters))  // 1
                .connectBREDR(handle: 0x000B, peer: Self.headset))  // 2
        let name = try #require(e.peerNames.name(for: Self.headset.value))
        #expect(name.text == "Gr8 ThinQ" && name.frame == 1 && name.source == .extendedInquiryResult)
    }

    /// A read of the peer's Device Name (Read By Type 0x2A00) names an LE peer that never advertised in the log.
    @Test func aGATTDeviceNameReadNamesThePeer() throws {
        let request = ATTTypeRequest(range: ATTHandleRange(start: 1, end: 0xFFFF), type: BluetoothUUID(uuid16: 0x2A00))
        let e = try Self.evidence(
            CaptureBuilder()
                .connect(handle: 0x0040, peer: Self.tag)  // 1
                .att(.readByTypeRequest(request), handle: 0x0040, .tx)  // 2
                .att(.readByTypeResponse([ATTHandleValue(handle: 3, value: Array("Thingy".utf8))]), handle: 0x0040, .rx))  // 3
        let name = try #require(e.peerNames.name(for: Self.tag.value))
        #expect(name.text == "Thingy" && name.frame == 3 && name.source == .gattDeviceName && !name.cut)
    }

    /// Names are shown safely: a control character escaped, a name whose last character is cut mid-sequence marked.
    @Test func namesAreShownSafely() throws {
        let escape = try #require(PeerName(bytes: Array("\u{1B}[31mRed".utf8), source: .advertising, frame: 1))
        #expect(escape.shown == "\\u{1B}[31mRed" && escape.text == "\u{1B}[31mRed")
        // "Café" cut inside the é (C3 A9): the C3 is dropped, the name marked cut.
        let cut = try #require(PeerName(bytes: Array("Caf".utf8) + [0xC3], source: .remoteNameRequest, frame: 1))
        #expect(cut.text == "Caf" && cut.cut && cut.shown == "Caf…")
        let whole = try #require(PeerName(bytes: Array("Café".utf8) + [0, 0x41], source: .remoteNameRequest, frame: 1))
        #expect(whole.text == "Café" && !whole.cut && whole.shown == "Café")
        #expect(PeerName(bytes: [0, 0, 0], source: .remoteNameRequest, frame: 1) == nil)
        let long = try #require(PeerName(bytes: Array(String(repeating: "x", count: 40).utf8), source: .advertising, frame: 1))
        #expect(long.shown == String(repeating: "x", count: 32) + "…")
    }

    /// A Local Name element that runs past the advertising data is kept, marked cut; a later whole one replaces it.
    @Test func aNameRunningPastItsDataIsCut() throws {
        let e = try Self.evidence(
            CaptureBuilder()
                .event(Self.advertising(Self.tag, data: [0x02, 0x01, 0x06, 0x0A, 0x09] + Array("Gr8".utf8)))  // 1: 9 bytes said, 3 there
                .connect(handle: 0x0040, peer: Self.tag))
        let name = try #require(e.peerNames.name(for: Self.tag.value))
        #expect(name.text == "Gr8" && name.cut && name.shown == "Gr8…")
    }
}
