import BLECore
import BLEProtocols

extension Layer {
    public static let sdp = Layer(rawValue: "sdp")
    public static let rfcomm = Layer(rawValue: "rfcomm")
    public static let hfp = Layer(rawValue: "hfp")
    public static let avdtp = Layer(rawValue: "avdtp")
    /// A2DP media packets (RTP on an AVDTP transport channel).
    public static let a2dp = Layer(rawValue: "a2dp")
    public static let avrcp = Layer(rawValue: "avrcp")
    /// An OBEX packet (PBAP, MAP, FTP, OPP over RFCOMM).
    public static let obex = Layer(rawValue: "obex")
}

/// One BR/EDR link's audio and serial profiles, fed the PDUs of its dynamic channels by PSM (SDP 0x0001, RFCOMM 0x0003,
/// AVDTP 0x0019, AVCTP 0x0017): the trackers of each, and what SDP tells RFCOMM about its server channels (which DLC
/// is the hands-free one). Made on a link's first such PDU; its result is the link's ``ClassicProfilesResult``.
struct ClassicProfiles {
    var sdp = SDPTracker()
    var rfcomm = RFCOMMTracker()
    var avdtp = AVDTPTracker()
    var avrcp = AVRCPSummary()
    var obex = OBEXTracker()
    /// OBEX over L2CAP (GOEP 2.0): whether each channel's I-frames end with an FCS, and the last TxSeq each way.
    var goepFCS: [UInt16: Bool] = [:]
    var goepTxSeq: [UInt32: UInt8] = [:]
    /// The hands-free DLC and its tracker (one per link: a second HFP DLC is not followed).
    var hfp: HFPTracker?
    /// AVRCP commands waiting for their response, by (sender is the peer, label): frame.
    var avrcpPending: [UInt8: Int] = [:]
    /// DLCs SDP did not name whose first whole lines were not hands-free AT traffic (an ELM327's `ATE1`, a serial
    /// port's text): never read as HFP later, when one fragment of their data happens to begin like an AT command (the
    /// HappyLeaf OBD dongle's "NO DATA" in five RFCOMM frames, the last `ATA\r\r>`, 66081).
    var notHandsFree: Set<UInt8> = []

    /// Whether RFCOMM data on `dlci` is hands-free AT traffic: SDP named its server channel (Handsfree, Headset or their
    /// gateways, by service class or profile), or, with no SDP answer that names it, its first bytes are AT lines.
    mutating func isHandsFree(dlci: UInt8, data: [UInt8]) -> Bool {
        if let h = hfp { return h.session.dlci == dlci }
        let channel = dlci >> 1
        let service = sdp.service(onRFCOMMChannel: channel)
        // A search may ask for the protocol and profile lists only (no service class list): the profile names it then.
        let named = Set((service?.classes ?? []).compactMap(\.uuid16) + (service?.profiles ?? []).compactMap(\.profile.uuid16))
        if !named.isEmpty {
            guard !named.isDisjoint(with: [0x111E, 0x111F, 0x1108, 0x1112, 0x1131]) else { return false }
        } else if notHandsFree.contains(dlci) {
            return false
        } else if !HFPTracker.looksLikeAT(data) {
            // Whole lines (ending in CR or LF) that are not AT traffic decide; a fragment leaves it open.
            if let last = data.last, last == 0x0D || last == 0x0A, notHandsFree.count < 256 { notHandsFree.insert(dlci) }
            return false
        }
        hfp = HFPTracker(dlci: dlci)
        // Headset (0x1108), Headset Audio Gateway (0x1112), Headset HS (0x1131), and no Hands-Free class: HSP.
        if !named.isEmpty, named.isDisjoint(with: [0x111E, 0x111F]) { hfp?.markHeadsetProfile() }
        rfcomm.name(dlci: dlci, sdp.service(onRFCOMMChannel: channel)?.title ?? "AT commands (hands-free)")
        return true
    }

    /// AVRCP over AVCTP: commands, responses, refusals, pass-through operations, notifications, volume.
    mutating func feedAVRCP(_ m: AVCTPMessage, fromPeer: Bool, frame: Int) -> Int? {
        guard let f = m.frame, m.profile == 0x110E else { return nil }
        let key = (fromPeer ? 0x10 : 0) | m.label
        if !m.isResponse {
            avrcp.commands += 1
            avrcpPending[key] = frame
            if let p = f.passThroughOperation, !p.released, avrcp.operations.count < 4096 {
                avrcp.operations.append(AVRCPEvent(frame: frame, what: f.what))
            }
            if let e = f.notificationEvent, !avrcp.registered.contains(e) { avrcp.registered.append(e) }
            if let v = f.absoluteVolume { avrcp.volume = v; avrcp.volumeFrame = frame }
            return nil
        }
        avrcp.responses += 1
        let request =
            f.code == .interim
            ? avrcpPending[(fromPeer ? 0 : 0x10) | m.label] : avrcpPending.removeValue(forKey: (fromPeer ? 0 : 0x10) | m.label)
        if f.code.isRefusal, avrcp.rejections.count < 4096 {
            avrcp.rejections.append(AVRCPEvent(frame: frame, what: "\(f.what): \(f.code)"))
        }
        if f.code == .changed, avrcp.changed.count < 4096 {
            avrcp.changed.append(AVRCPEvent(frame: frame, what: f.notificationEvent ?? f.what))
        }
        if let v = f.absoluteVolume { avrcp.volume = v; avrcp.volumeFrame = frame }
        return request
    }

    /// The link ended (or the capture): each tracker's result.
    mutating func finish(connection: Int, endFrame: Int?) -> ClassicProfilesResult {
        var r = ClassicProfilesResult(connection: connection)
        r.sdp = sdp.finish()
        r.rfcomm = rfcomm.channels
        r.a2dp = avdtp.finish()
        r.avrcp = avrcp
        r.obex = obex.sessions
        if var h = hfp {
            let closed = rfcomm.channels.last { $0.dlci == h.session.dlci }?.closeFrame
            r.hfp = h.finish(closedAt: closed ?? endFrame)
        }
        return r
    }
}
