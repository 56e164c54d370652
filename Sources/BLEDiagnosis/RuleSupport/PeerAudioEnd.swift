import BLEAnalysis
import BLECore
import BLEProtocols

/// A BR/EDR link's SCO/eSCO links as DC-02 reads its end: their traffic is the link's activity (a hands-free unit's
/// audio runs on its own handle beside the ACL, Core Spec Vol 2, Part B, 4.4), and the removal of the last of them,
/// with nothing on the link after it, is the session's orderly teardown. BTstack's hands-free log (corpus): 6,846 SCO
/// packets from the gateway up to 34740, this side's Disconnect of eSCO 0x0040 at 34722 (removed at 34741), the
/// gateway's 0x13 on the ACL at 34750, 2.9 s later; the ACL's own last packet was at 475, 23.5 s before.
extension DC02PeerEndedLink {
    /// The synchronous links that rode on connection `c`.
    static func audioLinks(of c: Connection, in e: Evidence) -> [SynchronousLink] {
        e.classic.synchronousLinks.filter { $0.aclConnection == c.number }
    }

    /// The last packet the peer sent on the link before frame `end`: its ACL's or its audio links', whichever came later,
    /// and what carried it (nil: the ACL).
    static func lastFromPeer(_ c: Connection, before end: Int, in e: Evidence) -> (moment: LinkActivity.Moment, audio: SynchronousLink?)? {
        var last = c.activity.lastReceived.flatMap { $0.frame < end ? ($0, nil as SynchronousLink?) : nil }
        for l in audioLinks(of: c, in: e) {
            guard let rx = l.lastReceived, rx.frame < end, rx.frame > last?.0.frame ?? 0 else { continue }
            last = (rx, l)
        }
        return last.map { (moment: $0.0, audio: $0.1) }
    }

    /// The removal of the link's last SCO/eSCO link before frame `end`, none still up and nothing on the ACL after it:
    /// the call's audio taken down, then the link closed.
    static func removedAudio(_ c: Connection, before end: Int, in e: Evidence) -> CitedFrame? {
        let audio = audioLinks(of: c, in: e).filter(\.established)
        guard !audio.isEmpty, audio.allSatisfy({ ($0.endFrame ?? .max) < end }),
            let last = audio.max(by: { $0.endFrame! < $1.endFrame! }), let removed = last.endFrame
        else { return nil }
        let aclLast = [c.activity.lastReceived, c.activity.lastSent].compactMap { $0?.frame }.max() ?? 0
        guard aclLast < removed else { return nil }
        let kind = last.isESCO ? "eSCO" : "SCO"
        let by = last.endReason == .connectionTerminatedByLocalHost ? " by this side" : ""
        return CitedFrame(removed, "removal of its \(kind) link \(hex(last.handle ?? 0, width: 4))\(by)")
    }
}
