import BLECore
import BLEProtocols

/// Follows AVDTP on one BR/EDR link (AVDTP 1.3; A2DP 1.4): the signalling channel's commands paired with their
/// responses by transaction label, the end points and codecs offered, each stream's configuration and life (open,
/// start, suspend, close, abort, reconfigure), rejections with their error codes; and the media channels, each bound to
/// the stream opened before it (the first AVDTP channel signals, each later one carries one stream's media, 5.4.6),
/// with their RTP packets, rate, sequence gaps, jitter and stalls.
struct AVDTPTracker {
    private(set) var summary = A2DPSummary()
    /// The L2CAP channel index of the signalling channel (the first to PSM 0x0019).
    private var signallingChannel: Int?
    /// Media channel index → stream index.
    private var mediaChannels: [Int: Int] = [:]
    /// Streams opened whose media channel has not opened yet.
    private var awaitingMedia: [Int] = []
    /// Commands waiting for their response, by (sender is the peer, label): signal, frame, SEIDs.
    private var pending: [UInt8: (signal: AVDTPSignal, frame: Int, seids: [UInt8], parameters: AVDTPParameters)] = [:]
    /// Per stream being started: whether media flows now, and the RTP state.
    private var mediaState: [Int: MediaState] = [:]
    /// A silence longer than this while a stream is started is a stall (the host stopped feeding the link).
    static let stallMicroseconds: Int64 = 200_000
    static let maxStreams = 64
    static let maxStalls = 4096

    struct MediaState {
        var started = false
        var lastSequence: UInt16?
        var lastTime: Timestamp?
        var lastFrame = 0
        var lastRTPTimestamp: UInt32?
        var jitter: Double = 0
        var transit: Double?
        var clock: Int?
    }

    /// Which role an AVDTP channel has: the first is signalling, each later one the media of the stream opened last. A
    /// channel that carries data after the signalling channel closed signals in its place (AVDTP 1.3, 5.4.6: media
    /// channels exist only while the signalling one does; the blueprobe moto g04s log closes the signalling channel at
    /// 6312 and opens another at 6349, whose Set Configuration 6383 starts the call's second stream).
    mutating func role(ofChannel channel: Int, closed: (Int) -> Bool) -> Bool {
        if let s = signallingChannel, s != channel, mediaChannels[channel] == nil, closed(s) {
            signallingChannel = nil
            pending = [:]
        }
        if signallingChannel == nil { signallingChannel = channel }
        if channel == signallingChannel { return true }
        if mediaChannels[channel] == nil, !awaitingMedia.isEmpty { mediaChannels[channel] = awaitingMedia.removeFirst() }
        return false
    }

    // MARK: signalling

    /// One signalling message; returns the command's frame a response answers.
    mutating func signal(_ m: AVDTPMessage, fromPeer: Bool, frame: Int, timestamp: Timestamp) -> Int? {
        summary.signals += 1
        guard let signal = m.signal else { return nil }
        let commandKey = (fromPeer ? 0x10 : 0) | m.label
        if m.messageType == .command {
            if pending.count < 64 { pending[commandKey] = (signal, frame, Self.seids(m.parameters), m.parameters) }
            command(m, signal: signal, fromPeer: fromPeer, frame: frame)
            return nil
        }
        // A response answers the other side's command with the same label.
        let answered = pending.removeValue(forKey: (fromPeer ? 0 : 0x10) | m.label)
        switch m.messageType {
        case .accept: accepted(m, signal: signal, command: answered, fromPeer: fromPeer, frame: frame, timestamp: timestamp)
        case .reject, .generalReject:
            var error: AVDTPError? = nil
            if case .reject(_, let e) = m.parameters { error = e }
            summary.rejections.append(
                AVDTPRejection(frame: frame, signal: signal, error: error, commandFrame: answered?.frame, byPeer: fromPeer))
        default: break
        }
        return answered?.frame
    }

    private mutating func command(_ m: AVDTPMessage, signal: AVDTPSignal, fromPeer: Bool, frame: Int) {
        if case .delayReport(let seid, let delay) = m.parameters, let i = stream(seid) {
            summary.streams[i].delayReportMilliseconds = Double(delay) / 10
        }
    }

    private mutating func accepted(
        _ m: AVDTPMessage, signal: AVDTPSignal, command: (signal: AVDTPSignal, frame: Int, seids: [UInt8], parameters: AVDTPParameters)?,
        fromPeer: Bool, frame: Int, timestamp: Timestamp
    ) {
        switch (signal, m.parameters) {
        case (.discover, .endpoints(let list)) where fromPeer: (summary.peerEndpoints, summary.peerEndpointsFrame) = (list, frame)
        case (.discover, .endpoints(let list)): (summary.localEndpoints, summary.localEndpointsFrame) = (list, frame)
        case (.getCapabilities, .capabilities(let caps)), (.getAllCapabilities, .capabilities(let caps)):
            guard let seid = command?.seids.first, let codec = caps.lazy.compactMap(\.codec).first else { break }
            if fromPeer {
                summary.peerCodecs[seid] = codec
            } else {
                summary.localCodecs[seid] = codec
                summary.localCodecFrames = (summary.localCodecFrames?.lowerBound ?? frame)...frame
            }
        default: break
        }
        guard let command else { return }
        switch command.parameters {
        case .setConfiguration(let acp, let int, let caps) where signal == .setConfiguration:
            guard summary.streams.count < Self.maxStreams else { return }
            var s = A2DPStream(acpSEID: acp, intSEID: int, configuredByThisSide: fromPeer, configurationFrame: command.frame)
            s.codec = caps.lazy.compactMap(\.codec).first
            s.configurationTime = timestamp
            role(of: &s, acceptorIsPeer: fromPeer)
            // A configuration of an end point configured before replaces it (a new stream).
            summary.streams.append(s)
        case .reconfigure(let acp, let caps) where signal == .reconfigure:
            if let i = stream(acp) {
                let codec = caps.lazy.compactMap(\.codec).first
                summary.streams[i].reconfigurations.append(A2DPReconfiguration(frame: frame, time: timestamp, codec: codec))
                if let codec { summary.streams[i].codec = codec }
            }
        default:
            for seid in command.seids { lifecycle(signal, seid: seid, frame: frame) }
        }
    }

    private mutating func lifecycle(_ signal: AVDTPSignal, seid: UInt8, frame: Int) {
        guard let i = stream(seid) else { return }
        switch signal {
        case .open:
            summary.streams[i].openFrame = frame
            awaitingMedia.append(i)
        case .start:
            summary.streams[i].starts.append(frame)
            mediaState[i, default: MediaState()].started = true
            mediaState[i]?.lastTime = nil
        case .suspend:
            summary.streams[i].suspends.append(frame)
            mediaState[i]?.started = false
        case .close: summary.streams[i].closeFrame = frame; mediaState[i]?.started = false
        case .abort: summary.streams[i].abortFrame = frame; mediaState[i]?.started = false
        default: break
        }
    }

    /// This side's end of a stream from the acceptor's end point (its ACP SEID) in the acceptor's Discover answer, else
    /// from the initiator's end point (INT SEID) in the initiator's: a sink's stream has a source at the other end.
    private func role(of s: inout A2DPStream, acceptorIsPeer: Bool) {
        let peer = (summary.peerEndpoints, summary.peerEndpointsFrame), local = (summary.localEndpoints, summary.localEndpointsFrame)
        let (acceptor, initiator) = acceptorIsPeer ? (peer, local) : (local, peer)
        if let frame = acceptor.1, let e = acceptor.0.first(where: { $0.seid == s.acpSEID }) {
            s.thisSideIsSink = acceptorIsPeer != e.isSink
            s.roleFrame = frame
        } else if let frame = initiator.1, let e = initiator.0.first(where: { $0.seid == s.intSEID }) {
            s.thisSideIsSink = acceptorIsPeer == e.isSink
            s.roleFrame = frame
        }
    }

    /// The latest stream configured on `seid` (either side's SEID).
    private func stream(_ seid: UInt8) -> Int? {
        summary.streams.lastIndex { $0.acpSEID == seid || $0.intSEID == seid }
    }

    static func seids(_ p: AVDTPParameters) -> [UInt8] {
        switch p {
        case .seid(let s): [s]
        case .seids(let list): list
        case .setConfiguration(let acp, _, _): [acp]
        case .reconfigure(let acp, _): [acp]
        case .delayReport(let seid, _): [seid]
        default: []
        }
    }

    /// The commands still unanswered when the link ended; a stream's end no Discover answer showed, from who sent its
    /// media (all of it one side's).
    mutating func finish() -> A2DPSummary {
        summary.unanswered = pending.values.map { $0.frame }.sorted()
        for i in summary.streams.indices where summary.streams[i].thisSideIsSink == nil {
            let m = summary.streams[i].media
            if m.packets > 0, m.packetsSent == 0 || m.packetsSent == m.packets { summary.streams[i].thisSideIsSink = m.packetsSent == 0 }
        }
        pending.removeAll()
        return summary
    }
}

extension AVDTPTracker {
    /// One media packet on channel `channel` (RTP, then the codec's payload; A2DP 1.4, 4.3.4): counted on its stream,
    /// its sequence and timing checked. Returns the stream's ACP SEID and the RTP header, for the timeline.
    mutating func media(
        channel: Int, payload: UnsafeRawBufferPointer, fromPeer: Bool, frame: Int, timestamp: Timestamp
    ) -> (UInt8, RTPHeader?)? {
        guard let i = mediaChannels[channel] else { return nil }
        var r = ByteReader(payload)
        let rtp = try? RTPHeader(parsing: &r)
        var st = mediaState[i, default: MediaState()]
        summary.streams[i].media.packets += 1
        if !fromPeer { summary.streams[i].media.packetsSent += 1 }
        summary.streams[i].media.bytes += payload.count
        if summary.streams[i].media.firstFrame == nil {
            summary.streams[i].media.firstFrame = frame
            summary.streams[i].media.firstTime = timestamp
        }
        summary.streams[i].media.lastFrame = frame
        summary.streams[i].media.lastTime = timestamp
        if let codec = summary.streams[i].codec, codec.codecType == A2DPCodec.sbc, let header = try? r.readUInt8() {
            summary.streams[i].media.sbcFrames += Int(header & 0x0F)
        }
        if st.clock == nil { st.clock = summary.streams[i].codec?.frequencies.first }
        if let rtp {
            if let last = st.lastSequence, rtp.sequence != last &+ 1, rtp.sequence != last {
                let missing = Int(rtp.sequence &- last &- 1)
                if missing < 0x8000 {
                    summary.streams[i].media.sequenceGaps += 1
                    summary.streams[i].media.packetsMissing += missing
                }
            }
            st.lastSequence = rtp.sequence
            jitter(rtp, timestamp: timestamp, stream: i, state: &st)
        }
        if st.started, let last = st.lastTime {
            let gap = timestamp.microseconds(since: last)
            if gap > Self.stallMicroseconds, summary.streams[i].media.stalls.count < Self.maxStalls {
                summary.streams[i].media.stalls.append(A2DPStall(fromFrame: st.lastFrame, toFrame: frame, microseconds: gap))
            }
        }
        // A Start clears the last time: the silence since the suspend is not streaming time.
        if let last = st.lastTime { summary.streams[i].media.streamingMicroseconds += timestamp.microseconds(since: last) }
        st.lastTime = timestamp
        st.lastFrame = frame
        mediaState[i] = st
        return (summary.streams[i].acpSEID, rtp)
    }

    /// RFC 3550, 6.4.1: J += (|D| − J) / 16, D the difference of transit times, in the RTP clock's units (the codec's
    /// sampling frequency); reported in ms.
    private mutating func jitter(_ rtp: RTPHeader, timestamp: Timestamp, stream i: Int, state st: inout MediaState) {
        guard let clock = st.clock, clock > 0 else { return }
        let arrival = Double(timestamp.microseconds) * Double(clock) / 1e6
        let transit = arrival - Double(rtp.timestamp)
        if let previous = st.transit {
            let d = abs(transit - previous)
            // A jump of more than a second of samples is a timestamp reset, not jitter.
            if d < Double(clock) { st.jitter += (d - st.jitter) / 16 }
        }
        st.transit = transit
        summary.streams[i].media.jitterMilliseconds = st.jitter * 1000 / Double(clock)
    }
}
