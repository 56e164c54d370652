import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Foundation
import Testing

@testable import BLEAnalysis

/// The LE Audio sentence of the story: each CIS told by what its ASEs were configured with (ASCS Config Codec's LTVs,
/// Config QoS's CIG and CIS, Enable's contexts), its set-up, its end and where the audio went. The byte strings are the
/// Redmi K70 LE Audio log's ASE Control Point writes (corpus batch 13), as tshark prints them (`btatt.value`).
@Suite struct LEAudioStoryTests {
    static func bytes(_ hex: String) -> [UInt8] {
        stride(from: 0, to: hex.count, by: 2).map {
            UInt8(hex[hex.index(hex.startIndex, offsetBy: $0)..<hex.index(hex.startIndex, offsetBy: $0 + 2)], radix: 16)!
        }
    }

    /// The operation's ASEs, parsed as ``LEAudioTracker`` does (after the opcode and the ASE count).
    static func parameters(_ hex: String) -> [ASEParameters] {
        bytes(hex).withUnsafeBytes { raw in
            var r = ByteReader(raw)
            let op = try! r.readUInt8(), n = try! r.readUInt8()
            return LEAudioTracker.parameters(op: op, count: Int(n), &r)
        }
    }

    static let configCodec2209 = "010101030206000000001302010802020105030100000003047800020501"
    static let configQoS2258 = "020101010010270000027800021400204e00"
    static let enable2262 = "0301010703020400020502"
    static let configCodec4345 =
        "01020102020600000000130201060202010503010000000304500002050102020206000000001302010602020105030100000003045000020501"
    static let enable4365 = "0302010703020200020501020703020200020501"

    /// Assigned Numbers 6.12.5: sampling frequency 0x08 = 48 kHz, 0x06 = 32 kHz; frame duration 0x01 = 10 ms; octets per
    /// codec frame 0x0078 = 120, 0x0050 = 80; channel allocation 0x00000001 = Front Left. 6.12.3: contexts 0x0004 Media,
    /// 0x0002 Conversational.
    @Test func configCodecQoSAndEnableAreReadPerASE() {
        let media = Self.parameters(Self.configCodec2209)
        #expect(media.map(\.aseID) == [1])
        #expect(media.first?.codingFormat == 0x06 && media.first?.samplingHz == 48_000)
        #expect(media.first?.frameDurationMicroseconds == 10_000 && media.first?.octetsPerFrame == 120)
        #expect(media.first?.channelAllocation == 1)
        let conversational = Self.parameters(Self.configCodec4345)
        #expect(conversational.map(\.aseID) == [1, 2])
        #expect(conversational.map(\.samplingHz) == [32_000, 32_000] && conversational.map(\.octetsPerFrame) == [80, 80])
        let qos = Self.parameters(Self.configQoS2258)
        #expect(qos.first?.cigID == 1 && qos.first?.cisID == 0)
        #expect(Self.parameters(Self.enable2262).first?.contexts == 0x0004)
        #expect(Self.parameters(Self.enable4365).map(\.contexts) == [0x0002, 0x0002])
    }

    /// Near miss: a Config Codec whose LTV run is cut keeps its ASE ID and reads no configuration.
    @Test func nearMissACutConfigurationReadsNoValues() {
        let cut = Self.parameters(String(Self.configCodec2209.prefix(30)))
        #expect(cut.map(\.aseID) == [1])
        #expect(cut.first?.samplingHz == nil && cut.first?.octetsPerFrame == nil)
    }

    /// A central's CIS 0x0060 on CIG 1 CIS 0 (40 octets each way), and the ASE operations the Redmi log wrote for it,
    /// with ASE 1 reported on the Sink ASE characteristic.
    static func story(qosCIS: UInt8) throws -> String? {
        var e = LEAudioRuleTests.evidence(try LEAudioRuleTests.cis(status: .success).captureFile())
        let number = try #require(e.iso?.streams.first?.connectionNumber)
        var profiles = LEAudioProfiles()
        for (frame, hex) in [(1, configCodec2209), (1, configQoS2258), (1, enable2262)] {
            var p = parameters(hex)
            if p.first?.cisID != nil { p[0].cisID = qosCIS }
            var op = ASEOperation(
                frame: frame, timestamp: Timestamp(microseconds: 0), connectionNumber: number, opcode: bytes(hex)[0],
                aseIDs: p.map(\.aseID))
            op.parameters = p
            profiles.operations.append(op)
        }
        profiles.aseStates.append(
            ASEStateReport(
                frame: 1, timestamp: Timestamp(microseconds: 0), connectionNumber: number, role: "sink", aseID: 1, state: 1,
                viaRead: false, allowed: true))
        e.leAudio = profiles
        return Story(e, findings: []).sentences.first { $0.text.hasPrefix("LE Audio:") }?.text
    }

    @Test func aCISIsToldWithItsASEsCodecAndSetUp() throws {
        let text = try #require(try Self.story(qosCIS: 0))
        // Frames: connect (1), CIG parameters (2, 3), LE Create CIS (4) and its status (5), LE CIS Established (6).
        #expect(
            text
                == "LE Audio: 1 CIS: 1 media two-way LC3 48 kHz 10 ms 120 octets (sink ASE); established 0x00 at 6 (LE Create CIS 4); 1 open at the end; no LE Audio problem found.",
            "\(text)")
    }

    /// Near miss: Config QoS put the ASE on another CIS: this CIS is told by its SDUs alone.
    @Test func nearMissASEsOnAnotherCISAreNotThisOnes() throws {
        let text = try #require(try Self.story(qosCIS: 1))
        #expect(text.hasPrefix("LE Audio: 1 CIS: 1 two-way 40-octet SDUs every 10.0 ms; established 0x00 at 6"), "\(text)")
    }

    /// The bumble unicast Sample: its truth's LC3 configuration, CIS and SDU counts.
    @Test func theUnicastSampleIsToldFromItsTruth() throws {
        let truth = try #require(loadTruth("le-audio-unicast"))
        let lc3 = try #require(truth["lc3"] as? [String: Any])
        let hz = try #require(TruthJSON.int(lc3["sampling_frequency_hz"]))
        let us = try #require(TruthJSON.int(lc3["frame_duration_us"]))
        let octets = try #require(TruthJSON.int(lc3["octets_per_codec_frame"]))
        let streams = (truth["iso_streams"] as? [String: [String: Any]] ?? [:]).values
        let sdus = streams.reduce(0) { $0 + (TruthJSON.int($1["sdus"]) ?? 0) }
        let e = try LEAudioRuleTests.sample("le-audio-unicast")
        let text = try #require(Story(e, findings: []).sentences.first { $0.text.hasPrefix("LE Audio:") }?.text)
        #expect(
            text.contains("1 CIS: 1 conversational two-way LC3 \(hz / 1000) kHz \(us / 1000) ms \(octets) octets (sink and source ASEs)"),
            "\(text)")
        #expect(text.contains("ISO data path Transparent on HCI (\(sdus) SDUs over HCI)"), "\(text)")
    }

    /// The Redmi K70 log (corpus batch 13), each value checked with tshark: Config Codec 2209/4255/4301/4481 (48 kHz,
    /// 120 octets, Sink ASE 0x0122) and 4345 (32 kHz, 80 octets, ASEs 1 and 2 on 0x0122 and 0x0132), Enable contexts
    /// 0x0004 and 0x0002 (4365); LE Create CIS 2299 → LE CIS Established 0x00 at 2324, 4279, 4321, 4372, 4502;
    /// Disconnection Complete 0x16 for 0x0400 at 2569, 4297, 4337, 4473; LE Setup ISO Data Path 'Transparent' with data
    /// path 0x03 (2353 …) and 0x01 (4379, 4381); no HCI ISO data packet; Read By Group Type responses 1320 (0x1850,
    /// 0x184E, 0x1844) and 1323 (0x1846, 0x1853, 0x1855), the includes of 0x1843 and 0x1845 at 1399.
    @Test func theRedmiLogsFiveCISAreTold() throws {
        guard let dir = TestEnvironment.corpusDirectory else { return }
        let path =
            dir + "/android-btsnoop-cfa_btlover-redmi-k70-mediatek-le-audio-ebl-sc-justworks-x2-cis-x5-lc3-path-ascs-pacs-vcs-csis.cfa"
        guard FileManager.default.fileExists(atPath: path) else { return }
        let e = LEAudioRuleTests.evidence(try CaptureFile.open(path: path))
        let text = try #require(Story(e, findings: []).sentences.first { $0.text.hasPrefix("LE Audio:") }?.text)
        #expect(
            text
                == "LE Audio: 5 CIS: 4 media LC3 48 kHz 10 ms 120 octets (sink ASE), 1 conversational two-way LC3 32 kHz 10 ms 80 octets (sink and source ASEs); established 0x00 at 2324 (LE Create CIS 2299), 4279, 4321, 4372, 4502; 4 ended by this side (0x16), 1 open at the end; ISO data path Transparent on vendor paths 0x03, 0x01 (no ISO data over HCI: the audio took another path); no LE Audio problem found; GATT: PACS, ASCS, VCS, CSIS, CAS, TMAS, AICS, VOCS.",
            "\(text)")
    }

    /// A discovery of the peer's primary services: `services` as (start, end, UUID).
    static func discovery(_ services: [(UInt16, UInt16, UInt16)]) -> CaptureBuilder {
        CaptureBuilder().connect(handle: 0x40)
            .att(
                .readByGroupTypeRequest(ATTTypeRequest(range: .init(start: 1, end: 0xFFFF), type: BluetoothUUID(uuid16: 0x2800))),
                handle: 0x40, .tx
            )
            .att(
                .readByGroupTypeResponse(
                    services.map { ATTGroupValue(start: $0.0, end: $0.1, value: BluetoothUUID(uuid16: $0.2).littleEndianBytes) }),
                handle: 0x40, .rx)
    }

    /// Assigned Numbers 3.4: 0x1850 Published Audio Capabilities (PACS), 0x184E Audio Stream Control (ASCS).
    @Test func theAudioServicesDiscoveredAreNamed() throws {
        let e = LEAudioRuleTests.evidence(
            try Self.discovery([(1, 0x63, 0x1850), (0x101, 0x133, 0x184E), (0x200, 0x210, 0x180D)]).captureFile())
        let text = Story(e, findings: []).sentences.first { $0.text.hasPrefix("LE Audio:") }
        #expect(text?.text == "LE Audio: GATT: PACS, ASCS; no CIS set up.", "\(String(describing: text))")
        #expect(text?.frames == [3])  // the response
    }

    /// Near miss: a Heart Rate service alone is no LE Audio.
    @Test func nearMissNoAudioServiceNoSentence() throws {
        let e = LEAudioRuleTests.evidence(try Self.discovery([(0x200, 0x210, 0x180D)]).captureFile())
        #expect(!Story(e, findings: []).sentences.contains { $0.text.hasPrefix("LE Audio:") })
    }

    /// The bumble broadcast Sample: the assistant's BASS (truth: control point at handle 16, receive state at 18) and
    /// two BIS (truth: handles 256, 257), told by the Data line; no "no CIS set up" where broadcast streams ran.
    @Test func aBroadcastLogNamesBASSWithoutSayingNoCIS() throws {
        let e = try LEAudioRuleTests.sample("le-audio-broadcast")
        #expect(e.iso?.streams.map(\.handle) == [256, 257])
        let texts = Story(e, findings: []).sentences.map(\.text)
        #expect(texts.contains("LE Audio: GATT: BASS."), "\(texts)")
        #expect(texts.contains { $0.contains("2 isochronous streams") }, "\(texts)")
    }
}
