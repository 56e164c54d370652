import BLEAnalysisTestSupport
import BLECore
import BLEProtocols
import Foundation
import Testing

@testable import BLEAnalysis

/// Hand-computed streams: exact byte counts over exact durations, windows counted by hand.
@Suite struct ThroughputTrackerTests {
    static let handle: UInt16 = 0x2A

    /// `count` notifications of `size` bytes, one every `every` µs from `start`.
    static func uniform(count: Int, size: Int, every: Int64, start: Int64 = 0, frame0: Int = 1, link: LinkSnapshot = TestEvent.defaultLink)
        -> [TestEvent]
    {
        (0..<count).map { i in
            var e = TestEvent.notify(
                frame0 + i, handle: handle, uuid: appleUUID, Array(repeating: UInt8(i & 0xFF), count: size),
                time: start + Int64(i) * every)
            e.link = link
            return e
        }
    }

    static func run(_ events: [TestEvent], options: ThroughputOptions = ThroughputOptions()) -> ThroughputTracker {
        var t = ThroughputTracker(options: options)
        feed(&t, events)
        return t
    }

    @Test func uniformStreamExactFigures() throws {
        // 300 × 100 bytes every 10 ms: t = 0 … 2.99 s.
        let t = Self.run(Self.uniform(count: 300, size: 100, every: 10_000))
        let s = try #require(t.streams.first)
        #expect(t.streams.count == 1)
        #expect(s.key == ThroughputStreamKey(connectionNumber: 1, direction: .rx, handle: Self.handle, kind: .notification))
        #expect(s.packets == 300)
        #expect(s.valueBytes == 30_000)
        #expect(s.attBytes == 300 * 103)  // opcode + handle + value
        #expect(s.l2capBytes == 300 * 107)  // + the 4-byte L2CAP header (as the test feeder sets it)
        #expect(s.durationMicroseconds == 2_990_000)
        #expect(abs(s.rateBitsPerSecond! - 30_000.0 * 8 / 2.99) < 1e-6)
        #expect(abs(s.l2capRateBitsPerSecond! - 32_100.0 * 8 / 2.99) < 1e-6)
        // Steps of 100 ms hold 10 packets each (1000 bytes); windows end at steps 10 … 30: 21 windows of 80 kbps.
        let w = try #require(s.windows)
        #expect(w.count == 21)
        #expect(w.min == 80_000 && w.max == 80_000 && w.median == 80_000 && w.p95 == 80_000)
        #expect(s.peakBitsPerSecond == 80_000)
        // 299 gaps of exactly 10 ms: bucket [10 ms, 20 ms) is index 7.
        #expect(ThroughputTracker.gapBucketEdges[6] == 10_000 && ThroughputTracker.gapBucketEdges[7] == 20_000)
        #expect(s.gapHistogram[7] == 299)
        #expect(s.gapHistogram.reduce(0, +) == 299)
        #expect(s.idleGapCount == 0)
        #expect(s.periods.count == 1)
        #expect(s.periods[0].ceilingBitsPerSecond == ThroughputCeiling.ceiling(for: TestEvent.defaultLink, direction: .rx))
        // Series: 30 slots of 100 ms, each 8 kbit.
        #expect(s.seriesSlotMicroseconds == 100_000)
        #expect(s.series.count == 30)
        // The last slot [2.9 s, 3 s) ends at 2.99 s: 10 packets over 90 ms.
        #expect(s.series.dropLast().allSatisfy { $0.bitsPerSecond == 80_000 })
        #expect(s.series.last?.microseconds == 90_000 && s.series.last?.bitsPerSecond == 8_000.0 * 1e6 / 90_000)
    }

    @Test func idleStepsAreCountedInBulkAsEmptyWindows() throws {
        // 10 × 100 bytes in the first 100 ms step, then one packet at 5 s (step 50).
        var events = Self.uniform(count: 10, size: 100, every: 9_000)
        events.append(contentsOf: Self.uniform(count: 1, size: 100, every: 0, start: 5_000_000, frame0: 11))
        let s = try #require(Self.run(events).streams.first)
        // Windows end at steps 10 … 51: [0-9] = 1000 B (8 kbps), 40 empty ones, [41-50] = 100 B (800 bps).
        let w = try #require(s.windows)
        #expect(w.count == 42)
        #expect(w.min == 0)
        #expect(w.max == 8_000)
        #expect(w.median == 0)
        #expect(w.p95 == 0)
        // One idle gap (> 500 ms): from frame 10 (t = 81 ms) to frame 11 (t = 5 s).
        #expect(s.idleGapCount == 1)
        #expect(s.idleMicroseconds == 5_000_000 - 81_000)
        #expect(s.longestIdleGaps.first?.afterFrame == 10 && s.longestIdleGaps.first?.resumeFrame == 11)
        #expect(s.gapHistogram[14] == 1)  // [2 s, 5 s): bucket i holds gaps in [edge i−1, edge i)
        #expect(s.verdict.limit == .idleGaps)
    }

    @Test func streamShorterThanTheWindowHasNoWindowStats() throws {
        let s = try #require(Self.run(Self.uniform(count: 5, size: 20, every: 15_000)).streams.first)
        #expect(s.windows == nil)
        #expect(s.rateBitsPerSecond == 100.0 * 8 / 0.06)
    }

    @Test func seriesStaysUnderTheCapAndKeepsEveryByte() throws {
        // 20,000 packets over 200 s: the series merges pairwise and never exceeds 500 points.
        let t = Self.run(Self.uniform(count: 20_000, size: 50, every: 10_000))
        let s = try #require(t.streams.first)
        #expect(s.series.count <= 500)
        #expect(s.series.count > 250)
        let bytes = s.series.reduce(0.0) { $0 + $1.bitsPerSecond * Double($1.microseconds) / 8e6 }
        #expect(s.series.dropLast().allSatisfy { $0.microseconds == s.seriesSlotMicroseconds })
        // The last slot [199.6 s, 200 s) ends at the last packet (199.99 s): its rate is over 390 ms, not 400.
        #expect(s.series.last?.microseconds == 390_000)
        #expect(abs(bytes - 1_000_000) < 1e-3)
        #expect(s.seriesSlotMicroseconds == 400_000)
    }

    @Test func gapBucketsMatchTheirEdges() {
        // The unrolled bucket search against its definition: bucket b holds gaps in [edges[b-1], edges[b]).
        let edges = ThroughputTracker.gapBucketEdges
        #expect(edges.count + 1 == InlineArray<17, Int>.count)
        for (b, edge) in edges.enumerated() {
            #expect(ThroughputTracker.gapBucket(edge - 1) == b)
            #expect(ThroughputTracker.gapBucket(edge) == b + 1)
        }
        #expect(ThroughputTracker.gapBucket(0) == 0)
        #expect(ThroughputTracker.gapBucket(Int64.max) == edges.count)
    }

    @Test func memoryStaysFlat() {
        // State size does not grow with packets: ring of 10, ≤ 500 slots, a sparse histogram of distinct rates.
        var t = ThroughputTracker()
        var rng = SystemRandomNumberGenerator()
        let seed = UInt64.random(in: 0..<1_000_000, using: &rng)
        print("memoryStaysFlat seed \(seed)")
        var x = seed | 1
        let value = [UInt8](repeating: 7, count: 244)
        value.withUnsafeBytes { raw in
            var time: Int64 = 0
            for i in 0..<300_000 {
                x ^= x << 13; x ^= x >> 7; x ^= x << 17
                time += Int64(x % 20_000)
                t.observe(
                    AttributeValueEvent(
                        frame: i + 1, timestamp: Timestamp(microseconds: time), connection: 1, connectionNumber: 1,
                        direction: .rx, kind: .notification, handle: 0x10, characteristic: nil, service: nil, l2capBytes: 100,
                        link: TestEvent.defaultLink),
                    value: UnsafeRawBufferPointer(rebasing: raw[0..<Int(x % 244)]).bytes)
            }
        }
        let state = t.states[0]
        #expect(state.ring.count == 10)
        #expect(state.series.count <= 500)
        #expect(state.windowRates.bins.count < 2400)  // 1 % bins between 1 bps and 10 Gbps
        #expect(state.closedPeriods.isEmpty)  // one period: the open one
        #expect(state.longestIdle.count <= 20)
    }

    @Test func linkChangesSplitPeriodsWithTheirCeilings() throws {
        let small = LinkSnapshot(
            parameters: ConnectionParameters(interval: 24, latency: 0, timeout: 400), phy: .le1M,
            dataLength: .default, mtu: 23, encrypted: false)
        let big = LinkSnapshot(
            parameters: ConnectionParameters(interval: 24, latency: 0, timeout: 400), phy: PHYPair(tx: .le2M, rx: .le2M),
            dataLength: DataLength(maxTxOctets: 251, maxTxTime: 2120, maxRxOctets: 251, maxRxTime: 2120),
            mtu: 247, encrypted: false)
        let events =
            Self.uniform(count: 40, size: 20, every: 10_000, link: small)
            + Self.uniform(count: 60, size: 244, every: 10_000, start: 400_000, frame0: 41, link: big)
        let s = try #require(Self.run(events).streams.first)
        #expect(s.periods.count == 2)
        #expect(s.periods[0].packets == 40 && s.periods[0].valueBytes == 800 && s.periods[0].lastFrame == 40)
        #expect(s.periods[1].packets == 60 && s.periods[1].valueBytes == 60 * 244 && s.periods[1].firstFrame == 41)
        #expect(abs(s.periods[0].ceilingBitsPerSecond! - 236_700) < 0.01 * 236_700)
        #expect(abs(s.periods[1].ceilingBitsPerSecond! - 1_402_000) < 0.01 * 1_402_000)
        #expect(s.mainPeriod == s.periods[1])
        #expect(s.ceilingBitsPerSecond == s.periods[1].ceilingBitsPerSecond)
        #expect(s.verdict.text.hasSuffix("(in the busiest of 2 link periods)"))
    }

    /// A connection up before the capture: its ATT_MTU is assumed 23 until a 200-byte value proves it is at least 203.
    /// Exchange MTU happens once per connection (Core Spec Vol 3, Part F, 3.4.2.2), before the capture here, so the
    /// bound holds from the first record: the stream that spans the proof is one period, and a stream that ended before
    /// it (0x0030) is judged against ≥ 203 too, never against 23.
    @Test func anMTUProvedByALaterPDUHoldsForTheWholeJoinedConnection() throws {
        let joined: UnseenLinkFacts = [.mtuAssumed, .dataLengthAssumed, .phyAssumed]
        let assumed = LinkSnapshot(
            parameters: nil, phy: .le1M, dataLength: .default, mtu: 23, encrypted: false, unseen: joined)
        var proved = assumed
        proved.mtu = 203
        proved.unseen = [.mtuAtLeast, .dataLengthAssumed, .phyAssumed]
        let early = Self.uniform(count: 40, size: 20, every: 10_000, link: assumed)
        let other = Self.uniform(count: 10, size: 20, every: 10_000, start: 5_000, frame0: 101, link: assumed).map {
            var e = $0
            e.handle = 0x30
            return e
        }
        let late = Self.uniform(count: 60, size: 200, every: 10_000, start: 400_000, frame0: 41, link: proved)
        let t = Self.run((early + other + late).sorted { $0.time < $1.time })
        let s = try #require(t.streams.first { $0.key.handle == Self.handle })
        #expect(s.periods.count == 1 && s.periods[0].packets == 100 && s.periods[0].link.mtu == 203)
        #expect(s.periods[0].link.unseen == [.mtuAtLeast, .dataLengthAssumed, .phyAssumed])
        #expect(!s.verdict.text.contains("link periods"))
        let ended = try #require(t.streams.first { $0.key.handle == 0x30 })
        #expect(ended.periods.count == 1 && ended.periods[0].link.mtu == 203 && ended.periods[0].link.unseen.contains(.mtuAtLeast))
        #expect(ended.ceilingBitsPerSecond == ThroughputCeiling.ceiling(for: proved, direction: .rx))
    }

    /// A connection whose MTU was seen (or that started in the capture) keeps its history: 23, then 247.
    @Test func anObservedMTUChangeStillSplitsPeriods() throws {
        var observed = TestEvent.defaultLink
        observed.mtu = 23
        let events =
            Self.uniform(count: 40, size: 20, every: 10_000, link: observed)
            + Self.uniform(count: 60, size: 200, every: 10_000, start: 400_000, frame0: 41, link: TestEvent.defaultLink)
        let s = try #require(Self.run(events).streams.first)
        #expect(s.periods.map(\.link.mtu) == [23, 247])
    }

    @Test func streamsAreKeyedByConnectionDirectionHandleAndKind() {
        var events: [TestEvent] = []
        events.append(.notify(1, handle: 0x10, uuid: nil, [1, 2, 3]))
        events.append(.notify(2, handle: 0x10, uuid: nil, [1, 2, 3], conn: 2))
        events.append(.write(3, handle: 0x10, uuid: nil, [1], command: true))
        events.append(.write(4, handle: 0x10, uuid: nil, [1], command: false))
        events.append(.notify(5, handle: 0x12, uuid: nil, [1]))
        events.append(.notify(6, handle: 0x10, uuid: nil, [9, 9]))
        let t = Self.run(events)
        #expect(t.streams.count == 5)
        #expect(t.streams.map(\.packets) == [2, 1, 1, 1, 1] || t.streams.map(\.key.connectionNumber).sorted() == [1, 1, 1, 1, 2])
        let first = t.streams.first {
            $0.key == ThroughputStreamKey(connectionNumber: 1, direction: .rx, handle: 0x10, kind: .notification)
        }
        #expect(first?.packets == 2 && first?.valueBytes == 5)
        #expect(t.streams == t.streams.sorted { $0.key < $1.key })
    }

    @Test(arguments: [
        (ValueKind.notification, 10, 13), (.writeCommand, 10, 13), (.writeRequest, 0, 3), (.signedWriteCommand, 4, 19),
        (.readResponse, 5, 6), (.prepareWrite, 8, 13),
    ])
    func attPDUSizes(_ kind: ValueKind, _ value: Int, _ expected: Int) {
        #expect(ThroughputTracker.attPDUSize(valueCount: value, kind: kind) == expected)
    }
}

/// The verdict rules, one limit at a time, with figures worked out independently of the tracker.
@Suite struct ThroughputVerdictTests {
    static func link(phy: UInt8, dl: UInt16, mtu: Int, ciUnits: UInt16) -> LinkSnapshot {
        LinkSnapshot(
            parameters: ConnectionParameters(interval: ciUnits, latency: 0, timeout: 400),
            phy: PHYPair(tx: LEPHY(rawValue: phy), rx: LEPHY(rawValue: phy)),
            dataLength: DataLength(maxTxOctets: dl, maxTxTime: 2120, maxRxOctets: dl, maxRxTime: 2120), mtu: mtu, encrypted: false)
    }

    /// A verdict for a continuous stream at `rate` (bps) over 10 s.
    static func judge(
        _ link: LinkSnapshot, rate: Double, kind: ValueKind = .notification, valueSize: Double = 244,
        ppe: PacketsPerEvent? = nil, idle: Int64 = 0
    ) -> ThroughputVerdict {
        let duration: Int64 = 10_000_000
        return ThroughputVerdict.judge(
            kind: kind, direction: .rx, link: link, packets: 1000, durationMicroseconds: duration,
            idleMicroseconds: idle, valueBytes: Int(rate * 10 / 8), averageValueSize: valueSize,
            packetsPerEvent: ppe, idleThreshold: 500_000)
    }

    @Test func atTheFastestCeiling() {
        let v = Self.judge(Self.link(phy: 2, dl: 251, mtu: 247, ciUnits: 6), rate: 1_300_000)
        #expect(v.limit == .ceiling)
        #expect(v.text.hasPrefix("1,300 kbps = 93 % of the 1,402 kbps ceiling for 2M/251/247 at 7.5 ms"))
    }

    @Test func nearTheCeilingOf1MNamesThePHY() {
        let v = Self.judge(Self.link(phy: 1, dl: 251, mtu: 247, ciUnits: 6), rate: 700_000)
        #expect(v.limit == .phy)
        #expect(v.text.contains("limited by the link's PHY 1M (2M would allow 1,402 kbps)"))
    }

    @Test func nearTheCeilingWithShortPacketsNamesTheDataLength() {
        // 2M, MTU 247 but 27-octet LL packets: only the data length can change.
        let link = Self.link(phy: 2, dl: 27, mtu: 247, ciUnits: 6)
        let c = ThroughputCeiling.ceiling(for: link, direction: .rx)!
        let v = Self.judge(link, rate: 0.9 * c)
        #expect(v.limit == .dataLength)
        #expect(v.text.contains("data length 27 (251 would allow 1,402 kbps)"))
    }

    @Test func nearTheCeilingWithTheDefaultMTUNamesTheMTU() {
        let link = Self.link(phy: 2, dl: 251, mtu: 23, ciUnits: 6)
        let c = ThroughputCeiling.ceiling(for: link, direction: .rx)!
        let v = Self.judge(link, rate: 0.8 * c, valueSize: 20)
        #expect(v.limit == .mtu)
        #expect(v.text.contains("MTU 23 (247 would allow 1,402 kbps)"))
    }

    @Test func theBestOfSeveralChangesIsNamed() {
        // 1M/27/23: each change alone; the verdict names the one whose ceiling is highest.
        let link = Self.link(phy: 1, dl: 27, mtu: 23, ciUnits: 6)
        let c = ThroughputCeiling.ceiling(for: link, direction: .rx)!
        var alternatives: [(ThroughputLimit, Double)] = []
        var l = link; l.phy = PHYPair(tx: .le2M, rx: .le2M); alternatives.append((.phy, ThroughputCeiling.ceiling(for: l, direction: .rx)!))
        l = link; l.dataLength = DataLength(maxTxOctets: 251, maxTxTime: 2120, maxRxOctets: 251, maxRxTime: 2120)
        alternatives.append((.dataLength, ThroughputCeiling.ceiling(for: l, direction: .rx)!))
        l = link; l.mtu = 247; alternatives.append((.mtu, ThroughputCeiling.ceiling(for: l, direction: .rx)!))
        let best = alternatives.max { $0.1 < $1.1 }!
        #expect(Self.judge(link, rate: 0.95 * c, valueSize: 20).limit == best.0)
    }

    @Test func requestsAreLimitedByTheRoundTrip() {
        for kind in [ValueKind.writeRequest, .indication, .readResponse] {
            let v = Self.judge(Self.link(phy: 2, dl: 251, mtu: 247, ciUnits: 24), rate: 5_000, kind: kind)
            #expect(v.limit == .roundTrip)
            #expect(!v.text.contains("ceiling"))
        }
    }

    @Test func idleTimeDominates() {
        let v = Self.judge(Self.link(phy: 2, dl: 251, mtu: 247, ciUnits: 24), rate: 50_000, idle: 6_000_000)
        #expect(v.limit == .idleGaps)
        #expect(v.text.contains("60 % of the time in pauses over 500 ms"))
    }

    @Test func smallValuesAreTheLimit() {
        let v = Self.judge(Self.link(phy: 2, dl: 251, mtu: 247, ciUnits: 24), rate: 50_000, valueSize: 20)
        #expect(v.limit == .valueSize)
        #expect(v.text.contains("20-byte values where the MTU allows 244"))
    }

    @Test func fewPacketsInEveryEventAreTheLimit() {
        // CI 30 ms, 6 × 244 bytes in each event: 390.4 kbps; 2M/251/247 fits 11 such PDUs in 30 ms.
        let link = Self.link(phy: 2, dl: 251, mtu: 247, ciUnits: 24)
        let rate = 6.0 * 244 * 8 / 0.030
        let ppe = PacketsPerEvent(events: 333, mean: 6, median: 6, p90: 6, max: 6)
        let v = Self.judge(link, rate: rate, ppe: ppe)
        #expect(v.limit == .packetsPerEvent)
        #expect(
            v.text == "390.4 kbps = 28 % of the 1,402 kbps ceiling for 2M/251/247 at 30 ms; limited by 6 packets per event at 30 ms "
                + "(\(ThroughputCeiling.packetsPerEvent(link: link, direction: .rx)) would fit: more packets per event or a shorter interval would raise it)"
        )
        #expect(
            ThroughputCeiling.packetsPerEvent(link: link, direction: .rx)
                == Int(30_000 / ThroughputCeiling.pduTime(mtu: 247, dataLength: 251, phy: .le2M)))
    }

    @Test func eventsLeftEmptyMeanTheAppIsSlow() {
        // 6 packets every third event only.
        let link = Self.link(phy: 2, dl: 251, mtu: 247, ciUnits: 24)
        let ppe = PacketsPerEvent(events: 111, mean: 6, median: 6, p90: 6, max: 6)
        let v = Self.judge(link, rate: 6.0 * 244 * 8 / 0.090, ppe: ppe)
        #expect(v.limit == .app)
        #expect(v.text.contains("packets in only 33 % of the connection events"))
    }

    @Test func onePacketIsTooFew() {
        let v = ThroughputVerdict.judge(
            kind: .notification, direction: .rx, link: Self.link(phy: 1, dl: 27, mtu: 23, ciUnits: 24),
            packets: 1, durationMicroseconds: 0, idleMicroseconds: 0, valueBytes: 20,
            averageValueSize: 20, packetsPerEvent: nil, idleThreshold: 500_000)
        #expect(v.limit == .unknown)
    }

    /// End to end through the tracker: the per-event estimate from timestamps feeds the verdict.
    @Test func trackerEstimatesPacketsPerEventFromTimestamps() throws {
        let link = Self.link(phy: 2, dl: 251, mtu: 247, ciUnits: 24)
        var events: [TestEvent] = []
        for k in 0..<100 {
            for j in 0..<6 {
                var e = TestEvent.notify(
                    events.count + 1, handle: 0x10, uuid: nil, Array(repeating: 1, count: 244),
                    time: Int64(k) * 30_000 + Int64(j) * 1_000)
                e.link = link
                events.append(e)
            }
        }
        var t = ThroughputTracker()
        feed(&t, events)
        let s = try #require(t.streams.first)
        let ppe = try #require(s.periods[0].packetsPerEvent)
        #expect(ppe.events == 100 && ppe.median == 6 && ppe.max == 6 && ppe.mean == 6)
        #expect(s.durationMicroseconds == 99 * 30_000 + 5_000)
        #expect(abs(s.rateBitsPerSecond! - 600.0 * 244 * 8 / 2.975) < 1e-6)
        #expect(s.verdict.limit == .packetsPerEvent)
        #expect(s.verdict.text.contains("limited by 6 packets per event at 30 ms"))
    }
}
