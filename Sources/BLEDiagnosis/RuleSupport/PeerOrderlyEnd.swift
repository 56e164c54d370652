import BLEAnalysis
import BLECore
import BLEProtocols

/// A peer's end of a link after the link's own profiles were already taken down in order: the routine end of a session,
/// not a problem (issue 48: DC-02 warned on every one, DC-09 called a day of them "flapping"). Only for Remote User
/// Terminated Connection (0x13) and Remote Device Power Off (0x15) with nothing failed before it:
/// - BR/EDR: every dynamic L2CAP channel of the link was closed before the end (AVDTP, AVCTP, RFCOMM, SDP: the BLUFFS
///   captures' 7 + 4 sessions, this side's Close then its channels, 602–606 before the buds' 0x13 at 608; the Sony
///   headphones' channels closed by the headphones, 1963–1973, before 1980), or the A2DP stream was suspended or closed
///   with no media after it, or its SCO/eSCO links were removed with nothing on it after them (``removedAudio(_:before:in:)``);
/// - LE: bonding finished (the last key distributed) and nothing went over the link after it, a second allowed for the
///   key's last PDU (the BTstack LE log: keys at 176–190, the central's 0x13 at 191, 6.3 s later).
/// A peer ending a link with a profile still in use (a channel open, a stream playing, a request outstanding) is not.
extension DC02PeerEndedLink {
    static let orderlyEndReasons: Set<HCIStatus> = [.remoteUserTerminatedConnection, .remotePowerOff]
    /// How long after the last key's first PDU the distribution may still be sending its last PDU, µs.
    static let bondingTail: Int64 = 1_000_000

    /// The peer ended the link in order: nothing failed before it and its profiles were taken down.
    static func isOrderlyEnd(_ d: DisconnectionStory, in e: Evidence) -> Bool {
        orderlyEndReasons.contains(d.reason) && failureBefore(d, in: e) == nil && orderlyTeardown(d, in: e) != nil
    }

    /// The last step of the link's orderly teardown before `d`, or nil when the link was not taken down in order.
    static func orderlyTeardown(_ d: DisconnectionStory, in e: Evidence) -> CitedFrame? {
        guard orderlyEndReasons.contains(d.reason), let c = d.connection else { return nil }
        if c.isBREDR {
            return closedChannels(c, before: d.frame) ?? stoppedStream(c, before: d.frame) ?? removedAudio(c, before: d.frame, in: e)
        }
        return bondingDone(c, d, in: e)
    }

    /// Every dynamic channel of the link closed before the end: the last close. An SDP channel left open is left out:
    /// it holds no session (a search answered, nothing more; the blueprobe midlog's buds opened one at 1704 and kept it
    /// while the phone closed A2DP, AVRCP and RFCOMM, 2987–3027, before their 0x13 at 3051). An RFCOMM channel whose
    /// multiplexer was closed (DISC on DLCI 0, Core: RFCOMM 5.2; TS 07.10 5.8.3) holds none either: an SPP printer ends
    /// the link when the phone closes it (newcap19's Nelko P21: DISC on DLCI 2 at 200, UA 201, DISC on DLCI 0 at 202,
    /// the printer's 0x13 at 204, before the phone's L2CAP Disconnection Request).
    static func closedChannels(_ c: Connection, before frame: Int) -> CitedFrame? {
        let muxClosed = c.profiles?.rfcomm.last { $0.dlci == 0 }?.closeFrame.flatMap { $0 < frame ? $0 : nil }
        let sessions = c.channels.filter { $0.psm != .sdp || $0.closeFrame != nil }
        let closes = sessions.map { $0.psm == .rfcomm && $0.closeFrame == nil ? muxClosed : $0.closeFrame }
        guard !closes.isEmpty, closes.allSatisfy({ ($0 ?? .max) < frame }), let last = closes.compactMap({ $0 }).max() else {
            return nil
        }
        if last == muxClosed { return CitedFrame(last, "close of its RFCOMM multiplexer (DISC on DLCI 0)") }
        let channel = sessions.first { $0.closeFrame == last }
        return CitedFrame(last, "close of its last L2CAP channel, \(channel.map { "\($0.psm)" } ?? "")")
    }

    /// The link's last A2DP stream closed, or suspended with no media after: the audio stopped in order.
    static func stoppedStream(_ c: Connection, before frame: Int) -> CitedFrame? {
        guard let s = c.profiles?.a2dp.streams.last else { return nil }
        let media = s.media.lastFrame ?? 0
        if let close = s.closeFrame, close < frame, close > media { return CitedFrame(close, "AVDTP Close of its stream") }
        if let suspend = s.suspends.last, suspend < frame, suspend > media, suspend > (s.starts.last ?? 0) {
            return CitedFrame(suspend, "AVDTP Suspend of its stream")
        }
        return nil
    }

    /// LE: the link's bonding finished and nothing went over the link after its last key.
    static func bondingDone(_ c: Connection, _ d: DisconnectionStory, in e: Evidence) -> CitedFrame? {
        guard
            let keys = e.last(
                before: d.frame,
                where: { ev in
                    guard ev.connection == d.event.connection, ev.frame >= c.startFrame else { return false }
                    if case .keysDistributed = ev.kind { return true }
                    return false
                })
        else { return nil }
        // The key's last PDU (Central Identification, Identity Address Information) follows its first within the
        // distribution; anything later than a second after is the link in use again.
        let lastPacket = [c.activity.lastReceived, c.activity.lastSent].compactMap { $0?.timestamp.microseconds }.max() ?? 0
        guard lastPacket - keys.timestamp.microseconds <= bondingTail else { return nil }
        return CitedFrame(keys.frame, "bonding's last key")
    }
}
