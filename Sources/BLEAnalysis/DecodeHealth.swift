import BLECore
import BLEProtocols

/// PDUs on one CID that no decoder claimed.
public struct CIDTally: Hashable, Sendable {
    public var pdus = 0
    public var bytes = 0
    public var firstFrame = 0
    public var lastFrame = 0
    public init(pdus: Int = 0, bytes: Int = 0, firstFrame: Int = 0, lastFrame: Int = 0) {
        self.pdus = pdus
        self.bytes = bytes
        self.firstFrame = firstFrame
        self.lastFrame = lastFrame
    }
}

/// What one connection carried against what blescope decoded, layer by layer: ACL (or LL) data → L2CAP PDUs →
/// ATT / SMP / signalling / credit-based K-frames, PDUs on channels known by their PSM but not decoded (RFCOMM,
/// AVDTP …), PDUs on CIDs nothing claims, and what reassembly had to drop.
///
/// Counted on the per-connection decoding state (a few integer increments per PDU), copied into
/// ``Connection/decode`` when the connection ends or the capture does.
public struct DecodeCounts: Hashable, Sendable {
    /// Whole L2CAP PDUs reassembled (B-frames, C-frames, K-frames).
    public var l2capPDUs = 0
    /// Of those: ATT (fixed channel, BR/EDR bearers; EATT SDUs are counted in `creditFrames`), SMP, signalling.
    public var att = 0
    public var smp = 0
    public var signalling = 0
    /// K-frames on credit-based channels opened in the capture (LE CoC, EATT).
    public var creditFrames = 0
    /// PDUs on a dynamic channel whose PSM is known but whose protocol blescope does not decode, by PSM.
    public var knownChannelPDUs = 0
    /// PDUs of the BR/EDR profiles decoded (SDP, RFCOMM, AVDTP signalling and media, AVCTP).
    public var profilePDUs = 0
    public var knownByPSM: [UInt16: Int] = [:]
    /// PDUs on CIDs no decoder claims (no signalling for them in the capture), by CID (at most 32 CIDs listed).
    public var unclaimedPDUs = 0
    public var unclaimedByCID: [UInt16: CIDTally] = [:]
    /// L2CAP PDUs lost in reassembly mid-stream: a continuation without its start, a PDU cut short by the next start.
    public var reassemblyDropped = 0
    /// PDUs in progress when the capture or the connection ended (at most one per direction): counted, and
    /// reported by their own finding, but no sign of a decoding problem, so not part of the warning's share.
    public var cutAtEnd = 0
    /// PDUs the capturer cut (incl_len < orig_len): counted, not decoded.
    public var cutByCapturer = 0
    /// The first frames where reassembly dropped something (at most 8).
    public var dropFrames: [Int] = []
    /// Link-layer data PDUs that were encrypted and not decrypted (air captures), nil when not known.
    /// Filled from ``LinkLayerStats/encryptedUndecrypted``; link-layer decryption reports what it could not decrypt here.
    public var encryptedUndecrypted: Int?

    public init() {}

    static let maxListedCIDs = 32

    mutating func countUnclaimed(cid: UInt16, bytes: Int, frame: Int) {
        unclaimedPDUs &+= 1
        if var t = unclaimedByCID[cid] {
            t.pdus += 1
            t.bytes += bytes
            t.lastFrame = frame
            unclaimedByCID[cid] = t
        } else if unclaimedByCID.count < Self.maxListedCIDs {
            unclaimedByCID[cid] = CIDTally(pdus: 1, bytes: bytes, firstFrame: frame, lastFrame: frame)
        }
    }

    mutating func countKnown(psm: UInt16) {
        knownChannelPDUs &+= 1
        if knownByPSM[psm] != nil || knownByPSM.count < Self.maxListedCIDs { knownByPSM[psm, default: 0] += 1 }
    }

    /// A reassembly finding: what it says was lost.
    mutating func countReassembly(_ f: Finding) {
        switch f.kind.code {
        case .l2capUnexpectedContinuation, .l2capIncompleteSDU:
            reassemblyDropped &+= 1
        case .l2capCutByEnd:
            cutAtEnd &+= 1
            return
        case .l2capCutByCapturer:
            cutByCapturer &+= 1
        default:
            return
        }
        if dropFrames.count < 8, let frame = f.frame { dropFrames.append(frame) }
    }

    /// PDUs decoded or knowingly set aside, plus those lost: the denominator of the shares below.
    public var attempted: Int { l2capPDUs + reassemblyDropped + cutByCapturer + cutAtEnd }
    /// PDUs some decoder took (ATT, SMP, signalling, K-frames).
    public var decoded: Int { att + smp + signalling + creditFrames + profilePDUs }

    public static func + (a: DecodeCounts, b: DecodeCounts) -> DecodeCounts {
        var s = a
        s.l2capPDUs += b.l2capPDUs
        s.att += b.att
        s.smp += b.smp
        s.signalling += b.signalling
        s.creditFrames += b.creditFrames
        s.knownChannelPDUs += b.knownChannelPDUs
        s.profilePDUs += b.profilePDUs
        for (k, v) in b.knownByPSM { s.knownByPSM[k, default: 0] += v }
        s.unclaimedPDUs += b.unclaimedPDUs
        s.reassemblyDropped += b.reassemblyDropped
        s.cutAtEnd += b.cutAtEnd
        s.cutByCapturer += b.cutByCapturer
        if let e = b.encryptedUndecrypted { s.encryptedUndecrypted = (s.encryptedUndecrypted ?? 0) + e }
        return s
    }
}

/// ACL packets outside any connection on handles controllers use for their own data: Qualcomm controllers put
/// their firmware logs on handle 0x0EDC (AOSP `snoop_logger.cc`, `kQualcommDebugLogHandle`), and handles above
/// 0x0EFF are reserved (Core Spec Vol 4, Part E, 5.4.2: a Connection_Handle is 0x0000–0x0EFF), so no connection
/// can own them. They are not L2CAP; decoding them as such gives nonsense (tshark decodes 0x0EDC as ATT, SMP,
/// signalling).
public struct VendorTrace: Hashable, Sendable {
    public var packets = 0
    public var bytes = 0
    public var firstFrame: Int?
    public var lastFrame: Int?
    /// The handles seen (at most 8).
    public var handles: [UInt16] = []
    public init() {}
    mutating func count(handle: UInt16, frame: Int, bytes n: Int) {
        packets += 1
        bytes += n
        if firstFrame == nil { firstFrame = frame }
        lastFrame = frame
        if handles.count < 8, !handles.contains(handle) { handles.append(handle) }
    }
}

extension VendorTrace {
    /// The Qualcomm controller-log ACL handle; treated as such only when no Connection Complete named it.
    public static let handle: UInt16 = 0x0EDC
    /// The largest valid connection handle (Core Spec Vol 4, Part E, 5.4.2).
    public static let maxConnectionHandle: UInt16 = 0x0EFF

    /// ACL on this handle outside a connection is vendor data, not a connection to infer.
    @inline(__always)
    static func isVendorHandle(_ handle: UInt16) -> Bool { handle == Self.handle || handle > maxConnectionHandle }
}

/// Decode health of a capture: per connection and in total, what was carried and what was decoded, and ONE
/// warning per connection when a large share was not: more than 5 % of its L2CAP PDUs incomplete, a CID that
/// no decoder claims carrying more than ``DecodeHealth/fewPDUs`` PDUs, or encrypted traffic not decrypted.
public struct DecodeHealth: Sendable {
    public struct ConnectionHealth: Sendable {
        public var number: Int
        public var handle: UInt16
        public var isLE: Bool
        /// The link is BR/EDR (neither this nor ``isLE``: its transport is not in the capture).
        public var isBREDR = false
        public var inferred: Bool
        public var aclPackets: Int
        public var aclBytes: Int
        public var counts: DecodeCounts
        /// The one warning for this connection, nil when it decoded well.
        public var warning: String?
        /// The first frame the warning is about.
        public var warningFrame: Int?
        /// The warning only repeats what the link layer already said (ll.encrypted-no-key / ll.mic-failed): shown by
        /// `info`, which lists no analysis findings, and left out of the findings so it is said once.
        public var saidByLinkLayer = false
        /// Traffic on fixed channels no decoder reads (``DecodeHealth/fixedChannelNote(_:connection:)``): info, not a loss.
        public var fixedChannels: String?
        /// The first frame on those channels.
        public var fixedChannelsFrame: Int?
        /// How blescope decrypted the link (air captures): the key and how it was found; nil when it decrypted nothing.
        public var decryption: String?
    }

    public var connections: [ConnectionHealth] = []
    public var totals = DecodeCounts()
    public var aclPackets = 0
    public var aclBytes = 0
    public var vendorTrace = VendorTrace()

    /// Share of incomplete L2CAP PDUs above which a connection gets a warning.
    public static let incompleteShare = 0.05
    /// An unclaimed CID carrying more PDUs than this gets a warning.
    public static let fewPDUs = 3

    public init() {}

    public init(connections list: [Connection], vendorTrace: VendorTrace) {
        self.vendorTrace = vendorTrace
        for c in list {
            var counts = c.decode
            // Link-layer decryption counts what stayed encrypted (no key) and what failed its MIC: neither was decoded.
            if let ll = c.linkLayer, counts.encryptedUndecrypted == nil {
                counts.encryptedUndecrypted = ll.encryptedUndecrypted + ll.micFailures
            }
            let packets = c.aclPackets.tx + c.aclPackets.rx + c.aclPackets.unknown
            let bytes = c.aclBytes.tx + c.aclBytes.rx + c.aclBytes.unknown
            var h = ConnectionHealth(
                number: c.number, handle: c.handle, isLE: c.isLE, inferred: c.inferred, aclPackets: packets,
                aclBytes: bytes, counts: counts)
            h.isBREDR = c.isBREDR
            (h.warning, h.warningFrame) = Self.judge(counts, connection: c)
            h.fixedChannels = Self.fixedChannelNote(counts, connection: c)
            h.fixedChannelsFrame = counts.unclaimedByCID.filter { $0.key < Self.firstDynamicCID }.map(\.value.firstFrame).min()
            h.decryption = c.linkEncryption?.decryptionText
            if h.warning == nil, let e = counts.encryptedUndecrypted, e > 0 {
                let from = c.linkEncryption?.firstUndecryptedFrame ?? c.linkEncryption?.firstMICFailureFrame
                h.warning =
                    "connection #\(c.number) (handle \(hex(c.handle, width: 4)), LE): \(e) link-layer data PDUs encrypted and not decrypted"
                    + (from.map { " from frame \($0)" } ?? "")
                    + (c.linkEncryption.map {
                        " (link encrypted from frame \($0.encryptedFrom); \(LLEncryptionSummary.noKeyReason(keysTried: $0.keysTried, note: $0.keySearch)))"
                    } ?? "")
                    + ": their ATT, SMP and L2CAP traffic is missing from every analysis; pass --ltk HEX, --keys FILE or --keys-from PHONE_HCI_LOG"
                h.warningFrame = from
                h.saidByLinkLayer = true
            }
            connections.append(h)
            totals = totals + counts
            aclPackets += packets
            aclBytes += bytes
        }
    }

    /// Connections with a warning.
    public var warnings: [ConnectionHealth] { connections.filter { $0.warning != nil } }

    /// `connection #1 (handle 0x0001): decrypted by blescope with STK … (how the key was found)`, one per link
    /// blescope decrypted: a reader knows which claim the decoded traffic rests on.
    public var decryptions: [String] {
        connections.compactMap { c in c.decryption.map { "connection #\(c.number) (handle \(hex(c.handle, width: 4))): " + $0 } }
    }

    /// One `decode.health` warning per connection that needs one, and one note for vendor trace packets.
    public var findings: [Finding] {
        var out = warnings.filter { !$0.saidByLinkLayer }
            .map { Finding(.warning, FindingKind(.decodeHealth, message: $0.warning!), frame: $0.warningFrame) }
        for c in connections {
            if let note = c.fixedChannels {
                out.append(Finding(.info, FindingKind(.decodeFixedChannel, message: note), frame: c.fixedChannelsFrame))
            }
        }
        if vendorTrace.packets > 0 {
            out.append(
                Finding(.info, FindingKind(.decodeVendorTrace, message: vendorTraceSummary!), frame: vendorTrace.firstFrame))
        }
        return out
    }

    public var vendorTraceSummary: String? {
        guard vendorTrace.packets > 0 else { return nil }
        let names = vendorTrace.handles.map {
            hex($0, width: 4) + ($0 == VendorTrace.handle ? " (Qualcomm debug-log handle)" : " (reserved, above 0x0eff)")
        }
        return "\(vendorTrace.packets) ACL packets (\(vendorTrace.bytes) bytes) on handle\(names.count == 1 ? "" : "s") "
            + names.joined(separator: ", ")
            + " outside any connection are controller vendor data (firmware logs), not L2CAP: not decoded"
    }

    /// The one-line answer for a whole capture.
    public var headline: String {
        let t = totals
        var s = "\(t.decoded) of \(t.attempted) L2CAP PDUs decoded"
        var rest: [String] = []
        if t.knownChannelPDUs > 0 { rest.append("\(t.knownChannelPDUs) on channels known by PSM, not decoded") }
        if t.unclaimedPDUs > 0 { rest.append("\(t.unclaimedPDUs) on CIDs nothing claims") }
        if t.reassemblyDropped > 0 { rest.append("\(t.reassemblyDropped) lost in reassembly") }
        if t.cutAtEnd > 0 { rest.append("\(t.cutAtEnd) cut by the end of the capture or a disconnection") }
        if t.cutByCapturer > 0 { rest.append("\(t.cutByCapturer) cut by the capturer") }
        if let e = t.encryptedUndecrypted, e > 0 { rest.append("\(e) LL PDUs encrypted, not decrypted") }
        if !rest.isEmpty { s += " (" + rest.joined(separator: ", ") + ")" }
        let w = warnings.count
        s += w == 0 ? "; no connection lost a large share" : "; \(w) connection\(w == 1 ? "" : "s") with a warning"
        return s
    }

    static func frames(_ list: [Int]) -> String {
        list.prefix(5).map(String.init).joined(separator: ", ") + (list.count > 5 ? ", …" : "")
    }

    /// L2CAP's first dynamically allocated CID (Core Spec Vol 3, Part A, 2.1); below it every channel is fixed.
    static let firstDynamicCID: UInt16 = 0x0040

    /// The note for one connection's traffic on fixed channels no decoder reads (a platform's own protocol on a CID
    /// the Core reserves, such as Apple's 0x003A), or nil. Info: nothing of it is missing, blescope does not read it.
    static func fixedChannelNote(_ c: DecodeCounts, connection: Connection) -> String? {
        let fixed = c.unclaimedByCID.filter { $0.value.pdus > fewPDUs && $0.key < firstDynamicCID }.sorted { $0.key < $1.key }
        guard !fixed.isEmpty else { return nil }
        let list = fixed.map { cid, t in
            let name =
                PlatformTable.vendorFixedChannel(cid) ?? "a fixed channel the Core reserves (0x0008–0x003E), so a vendor's own protocol"
            return "CID \(hex(cid, width: 4)) (\(name)) \(t.pdus) PDUs, \(t.bytes) bytes (frames \(t.firstFrame)–\(t.lastFrame))"
        }
        return "connection #\(connection.number) (handle \(hex(connection.handle, width: 4))): "
            + list.joined(separator: ", ")
            + " not decoded; a fixed channel is never opened by signalling, so nothing of it is missing from the capture"
    }

    /// The warning for one connection, or nil. Reasons are joined into one message, most serious first.
    static func judge(_ c: DecodeCounts, connection: Connection) -> (String?, Int?) {
        var reasons: [String] = []
        var firstFrame: Int? = nil
        func note(_ frame: Int?) { if let frame { firstFrame = min(firstFrame ?? frame, frame) } }
        // Traffic left encrypted is said once, by the link layer's own warning (ll.encrypted-no-key, ll.mic-failed, which
        // name the frames and the keys tried); here it is counted, and named as the cause of what it broke.
        let lost = c.reassemblyDropped + c.cutByCapturer
        if c.attempted > 0, Double(lost) / Double(c.attempted) > incompleteShare {
            let share = String(fractionDigits: 1, Double(lost) * 100 / Double(c.attempted))
            let cause: String
            if let e = c.encryptedUndecrypted, e > 0 {
                cause = "fragments of PDUs carried in encrypted link-layer packets that were not decrypted"
            } else if c.cutByCapturer > c.reassemblyDropped {
                cause = "the capturer truncated ACL packets (Android's filtered snoop log keeps a few bytes of each)"
            } else if connection.inferred && c.reassemblyDropped <= 2 {
                cause = "the capture started in the middle of a PDU"
            } else {
                cause = "packets missing from the capture (the snoop log or sniffer dropped fragments)"
            }
            reasons.append(
                "\(lost) of \(c.attempted) L2CAP PDUs (\(share) %) incomplete, frames \(frames(c.dropFrames)); likely cause: \(cause)")
            note(c.dropFrames.first)
        }
        // A fixed channel is never opened by signalling: no Connection Request is missing for it (``fixedChannelNote``).
        let busy = c.unclaimedByCID.filter { $0.value.pdus > fewPDUs && $0.key >= firstDynamicCID }.sorted { $0.key < $1.key }
        if !busy.isEmpty {
            let list = busy.map {
                "CID \(hex($0.key, width: 4)) \($0.value.pdus) PDUs (frames \($0.value.firstFrame)–\($0.value.lastFrame))"
            }
            let total = busy.reduce(0) { $0 + $1.value.pdus }
            let cause =
                connection.inferred
                ? "the channels were opened before the capture started (no Connection Request in the capture), so their protocol is unknown"
                : "no Connection Request for these CIDs in the capture (opened before it, or signalling blescope could not read)"
            reasons.append(
                "\(total) of \(c.attempted) L2CAP PDUs on CIDs no decoder claims: " + list.joined(separator: ", ") + "; likely cause: "
                    + cause)
            note(busy.map(\.value.firstFrame).min())
        }
        guard !reasons.isEmpty else { return (nil, nil) }
        // An inferred connection's link type is not known; BR/EDR dynamic CIDs go beyond LE's 0x0040–0x007F.
        let kind =
            !connection.inferred
            ? (connection.isLE ? "LE" : "BR/EDR")
            : c.unclaimedByCID.keys.contains(where: { $0 > 0x007F }) || connection.isBREDR ? "BR/EDR by its CIDs" : "link type unknown"
        return (
            "connection #\(connection.number) (handle \(hex(connection.handle, width: 4)), \(kind)\(connection.inferred ? ", inferred" : "")): "
                + reasons.joined(separator: "; "), firstFrame
        )
    }
}
