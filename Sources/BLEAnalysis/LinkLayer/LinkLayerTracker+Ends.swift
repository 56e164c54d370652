import BLECore
import BLEProtocols

extension LinkLayerTracker {
    /// A device address of 6 octets at `at` in an advertising payload.
    @inline(__always)
    static func address(_ p: UnsafeRawBufferPointer, _ at: Int, _ random: Bool) -> LLDeviceAddress {
        var v: UInt64 = 0
        for i in 0..<6 { v |= UInt64(p[at + i]) << UInt64(8 * i) }
        return LLDeviceAddress(v, isRandom: random)
    }

    /// A struct mutated in place in `conns` (`&conns[i]`): no reference to retain per packet, and a copied
    /// tracker (``AdvertisingTracker`` keeps one) does not share its connections.
    struct Conn {
        var info: LLConnectionInfo
        var crcInit: UInt32?
        init(info: LLConnectionInfo, crcInit: UInt32?) {
            self.info = info
            self.crcInit = crcInit
        }
        var stats = LinkLayerStats()
        var ended = false
        var encryption = LLEncryptionState()
        // Per direction (index 0 = central → peripheral, 1 = peripheral → central).
        var lastSN: (Int8, Int8) = (-1, -1)
        var lastHash: (UInt64, UInt64) = (0, 0)
        /// The SN of the other side's PDU that acknowledged this direction's last PDU, -1 while none did
        /// (``LinkLayerTracker/noteAcknowledgement(_:_:d:frame:)``).
        var acknowledgedBy: (Int8, Int8) = (-1, -1)
        /// Each direction's last data PDU, and whether the current one's receiver takes it as resent
        /// (``LinkLayerTracker/noteReceiverView(_:_:llid:d:frame:)``).
        var lastSent: (SentPDU?, SentPDU?) = (nil, nil)
        var resentToReceiver = false
        var terminate: TerminateAcknowledgement?
        /// The latest encrypted control PDU no key opened whose size is an LL_TERMINATE_IND's (``encryptedTerminate``).
        var encryptedTerminate: TerminateAcknowledgement?
        // Events.
        var eventCounter: UInt16 = 0
        var haveEvent = false
        var lastNordicEvent: UInt16 = 0
        var lastTime: Int64 = 0
        var lastAirTime = 0
        /// The sniffer's own 32-bit clock (PPI-BTLE, 100 ns) at the previous packet, and that clock unwrapped (100 ns).
        var lastSnifferClock: UInt32?
        var snifferTime: Int64 = 0
        var directions = AirDirections()
        var attSides = ATTSides()
        var positionInEvent = 0
        var packetsThisEvent = 0
        var pending: [Pending] = []
        /// The latest LL_LENGTH_REQ of each side until answered, and whether the encryption was said (``LLLinkChange``).
        var lengthRequests: (central: LLLengthParameters?, peripheral: LLLengthParameters?) = (nil, nil)
        var encryptionSaid = false
        /// The last packet with a good CRC (frame, time), and the peripheral's first connectable advertisement after
        /// it: what ``LinkSilence`` is made of when the capture holds no end of the link.
        var lastGood: (frame: Int, timestamp: Timestamp)?
        var readvertised: LinkSilence.Advertising?
    }

    /// Advertising packets that failed their CRC are not decoded: said once, with how many and the first, so that a
    /// capture whose every advertisement is bad does not read as an empty one (the Auracast thesis capture in the
    /// corpus: 1,067 of 1,067).
    package var advertisingCRCFinding: Finding? {
        guard advertisingCRCErrors > 0, let first = firstAdvertisingCRCErrorFrame else { return nil }
        let all = advertisingCRCErrors == advertisingPackets
        return Finding(
            all || advertisingCRCErrors * 5 >= advertisingPackets ? .warning : .info,
            FindingKind(
                .llAdvertisingCRC,
                message:
                    "\(all ? "all " : "")\(advertisingCRCErrors) of \(advertisingPackets) advertising packets failed their CRC and were not decoded (first at frame \(first))"
                    + (all ? ": the sniffer or its settings (PHY, channel) may be wrong" : "")),
            frame: first)
    }
}

extension LinkLayerTracker.Conn {
    /// The link's last packet when the capture went on without it for longer than it can be silent and live (its
    /// supervision timeout, or the longest one the specification allows, 32 s, when the capture does not show it) and
    /// holds no end of it (``silence(captureEnd:)`` found none): the sniffer stopped following it there.
    func notFollowed(captureEnd: Timestamp) -> (frame: Int, timestamp: Timestamp)? {
        guard let last = lastGood else { return nil }
        let supervision = info.parameters.timeout.map { Int64($0) * 10_000 } ?? 32_000_000
        return captureEnd.microseconds(since: last.timestamp) > supervision ? last : nil
    }

    /// The silence a link ended the capture in, when it is longer than the link's supervision timeout (known from its
    /// connect request or an update); nil when the link may still have been up at the end.
    func silence(captureEnd: Timestamp) -> LinkSilence? {
        guard let units = info.parameters.timeout, units > 0 else { return nil }
        let supervision = Int64(units) * 10_000
        let last = lastGood ?? (info.startFrame, info.startTimestamp)
        let quiet = captureEnd.microseconds(since: last.timestamp)
        guard quiet > supervision else { return nil }
        // The link's last packets: an encrypted control PDU of a terminate's size and its acknowledgement.
        let terminate = encryptedTerminate.flatMap { t in
            t.acknowledgedAt == last.frame || t.frame == last.frame
                ? LinkSilence.EncryptedTerminate(frame: t.frame, byCentral: t.centralSent, acknowledgedAt: t.acknowledgedAt) : nil
        }
        // Without the peripheral advertising again, the silence may be the sniffer's alone (it lost the hopping): the link
        // stays open at the end, and the diagnosis says the capture cannot show what followed (``Observability``). An
        // acknowledged terminate-sized PDU as the last exchange is the end the sniffer saw, advertising or not.
        let again = readvertised.flatMap { $0.frame > last.frame ? $0 : nil }
        guard again != nil || terminate?.acknowledgedAt != nil else { return nil }
        var silence = LinkSilence(
            lastFrame: last.frame, lastTimestamp: last.timestamp, carriedPackets: lastGood != nil, readvertised: again,
            supervisionTimeout: supervision, interval: info.parameters.interval.map { Int64($0) * 1250 }, silence: quiet)
        silence.undecryptedFrom = encryption.summary?.firstUndecryptedFrame
        silence.encryptedTerminate = terminate
        return silence
    }
}
