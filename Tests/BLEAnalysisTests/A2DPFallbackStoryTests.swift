import BLECore
import BLEProtocols
import Testing

@testable import BLEAnalysis

/// The codec fallback as one story event (Story+A2DPFallback): a stream closed with no Start and, within 2 s, another
/// configured with a different codec. Typed streams with the Honda log's frames (LDAC 4086 closed 4140, AAC 4142).
@Suite struct A2DPFallbackStoryTests {
    static let ldac = A2DPCodec(codecType: A2DPCodec.vendorSpecific, element: [0x2D, 0x01, 0, 0, 0xAA, 0, 0x04, 0x01])
    static let aac = A2DPCodec(codecType: 0x02, element: [0x80, 0x01, 0x04, 0x84, 0xE2, 0x00])

    static func stream(_ codec: A2DPCodec, set frame: Int, at us: Int64, closed: Int?, starts: [Int] = []) -> A2DPStream {
        var s = A2DPStream(acpSEID: 6, intSEID: 4, configuredByThisSide: true, configurationFrame: frame)
        s.configurationTime = Timestamp(microseconds: us)
        s.codec = codec
        s.closeFrame = closed
        s.starts = starts
        return s
    }

    @Test func ldacClosedThenAACIsOneEvent() throws {
        let streams = [
            Self.stream(Self.ldac, set: 4086, at: 76_573_402, closed: 4140), Self.stream(Self.aac, set: 4142, at: 76_740_063, closed: 4255),
        ]
        let (line, told) = try #require(Story.a2dpFallback(streams, who: "D2:02:03:04:A2:61"))
        #expect(Self.ldac.name == "LDAC" && Self.aac.name == "AAC" && told == [4086, 4142])
        #expect(
            line.text
                == "A2DP with D2:02:03:04:A2:61: codec fell back from \(Self.ldac) to \(Self.aac) (LDAC set at 4086, closed with no Start at 4140; AAC set at 4142); the stream never started.",
            "\(line.text)")
        #expect(line.frames == [4086, 4140, 4142])
    }

    /// The end this side is, when both streams say it (tshark on the Honda log: the earbuds' Discover answer at 4074
    /// lists Audio Sink end points, so the phone is the source); near miss: the two streams disagree, so none is said.
    @Test func roleSaidWhenTheStreamsAgree() throws {
        var ldac = Self.stream(Self.ldac, set: 4086, at: 76_573_402, closed: 4140)
        var aac = Self.stream(Self.aac, set: 4142, at: 76_740_063, closed: nil)
        (ldac.thisSideIsSink, ldac.roleFrame, aac.thisSideIsSink, aac.roleFrame) = (false, 4074, false, 4074)
        let (line, _) = try #require(Story.a2dpFallback([ldac, aac], who: "ROSE EarFeel i5"))
        #expect(
            line.text.hasPrefix("A2DP with ROSE EarFeel i5, this side the source (Discover answer, 4074): codec fell back from LDAC"),
            "\(line.text)")
        #expect(line.frames == [4074, 4086, 4140, 4142])
        aac.thisSideIsSink = true
        let (mixed, _) = try #require(Story.a2dpFallback([ldac, aac], who: "ROSE EarFeel i5"))
        #expect(mixed.text.hasPrefix("A2DP with ROSE EarFeel i5: codec fell back"), "\(mixed.text)")
    }

    /// Near misses: the first stream had started (a codec change after streaming, not a fallback); the second came 5 s
    /// later; the same codec again (a reconnection); the first never closed.
    @Test func nearMissesStaySeparate() {
        let started = [
            Self.stream(Self.ldac, set: 10, at: 0, closed: 40, starts: [20]), Self.stream(Self.aac, set: 42, at: 500_000, closed: nil),
        ]
        let late = [Self.stream(Self.ldac, set: 10, at: 0, closed: 40), Self.stream(Self.aac, set: 42, at: 5_000_000, closed: nil)]
        let same = [Self.stream(Self.aac, set: 10, at: 0, closed: 40), Self.stream(Self.aac, set: 42, at: 100_000, closed: nil)]
        let open = [Self.stream(Self.ldac, set: 10, at: 0, closed: nil), Self.stream(Self.aac, set: 42, at: 100_000, closed: nil)]
        for streams in [started, late, same, open] { #expect(Story.a2dpFallback(streams, who: "x")?.line == nil) }
    }
}

/// A profile told once over a device's links (Story.folded): the link with the most to tell, not the first alone
/// (the blueprobe moto g04s log: the HFP connection of the first link without a call, the second with the call
/// answered by ATA at 6319, its line citing more frames). Near misses: the same text on each link; a tie keeps the first.
@Suite struct FoldedProfileLineTests {
    @Test func theLinkWithTheMostToTellIsTold() {
        let plain = StorySentence(.classic, "HFP with X: service level connection up at frame 1620.", frames: [1620])
        let call = StorySentence(
            .classic, "HFP with X: service level connection up at frame 6228; 1 incoming call at 6282.", frames: [6228, 6282, 6319, 6328])
        let told = Story.folded([plain, call])
        #expect(
            told.map(\.text) == ["HFP with X: service level connection up at frame 6228; 1 incoming call at 6282 (the second of 2 links)."])
        #expect(told.first?.frames == [1620, 6228, 6282, 6319, 6328])
        #expect(
            Story.folded([plain, plain]).map(\.text) == ["HFP with X: service level connection up at frame 1620 (on each of 2 links)."])
        let other = StorySentence(.classic, "HFP with X: service level connection up at frame 9000.", frames: [9000])
        #expect(
            Story.folded([plain, other]).map(\.text) == ["HFP with X: service level connection up at frame 1620 (the first of 2 links)."])
        #expect(
            [1, 2, 6, 7, 11, 12, 13, 21, 22, 23, 101, 111].map(Story.ordinal) == [
                "first", "second", "6th", "7th", "11th", "12th", "13th", "21st", "22nd", "23rd", "101st", "111th",
            ])
    }
}
