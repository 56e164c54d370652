import BLECapture
import BLECore
import BLEProtocols
import BLESecurity

// MARK: - Keys

/// Where a long-term (or short-term) key came from: shown next to every decrypted connection so a reader
/// knows which claim the decryption rests on.
public enum LinkKeySource: Hashable, Sendable, CustomStringConvertible {
    /// `--ltk HEX` on the command line.
    case commandLine
    /// A key file (`--keys FILE`), with its path.
    case keyFile(String)
    /// An HCI log of the phone (`--keys-from`): LE Enable Encryption or LE Long Term Key Request Reply at that frame.
    case phoneLog(path: String, frame: Int)
    /// LE legacy pairing seen in this capture: the STK from the TK found against the confirm values
    /// (TK 0 = Just Works, otherwise the passkey). Frame of the Pairing Random that completed the transcript.
    case legacyPairing(passkey: UInt32, frame: Int)
    /// LE legacy pairing seen in this capture where c1 cannot check a TK (`cause`: no CONNECT_IND, so no addresses; or
    /// no Pairing Confirm values): the TK found by checking each candidate's STK against the MIC of the first encrypted
    /// PDU (`checkedFrame`). Frame of the Pairing Random; `confirmation` what a second encrypted PDU said.
    case legacyPairingMIC(passkey: UInt32, frame: Int, checkedFrame: Int, cause: LLMICSearchCause, confirmation: LLKeyConfirmation)
    /// LE Secure Connections where one side used the specification's debug key pair (Core Spec Vol 3, Part H, 2.3.5.6.1).
    case secureConnectionsDebugKey(frame: Int)
    /// SMP Encryption Information distributed earlier in this capture (decrypted), at that frame.
    case distributed(frame: Int)

    public var description: String {
        switch self {
        case .commandLine: "--ltk"
        case .keyFile(let path): "key file \(path)"
        case let .phoneLog(path, frame): "phone log \(path) frame \(frame)"
        case let .legacyPairing(passkey, frame):
            passkey == 0
                ? "LE legacy Just Works pairing (TK 0) at frame \(frame)"
                : "LE legacy passkey pairing (passkey \(String(passkey).leftPadded(to: 6, with: "0")), found by search) at frame \(frame)"
        case .secureConnectionsDebugKey(let frame): "LE Secure Connections with the debug key pair at frame \(frame)"
        case .distributed(let frame): "SMP Encryption Information at frame \(frame)"
        case let .legacyPairingMIC(passkey, frame, checked, cause, confirmation):
            (passkey == 0
                ? "TK 0 (Just Works)" : "passkey \(String(passkey).leftPadded(to: 6, with: "0")) (found by search)")
                + " of the LE legacy pairing at frame \(frame), checked against the MIC of frame \(checked)"
                + " because \(cause)" + confirmation.description
        }
    }

    /// Short machine-readable name for JSON.
    public var kind: String {
        switch self {
        case .commandLine: "ltk-option"
        case .keyFile: "key-file"
        case .phoneLog: "phone-log"
        case .legacyPairing(let passkey, _): passkey == 0 ? "legacy-just-works" : "legacy-passkey"
        case .legacyPairingMIC(let passkey, _, _, _, _): passkey == 0 ? "legacy-just-works-mic" : "legacy-passkey-mic"
        case .secureConnectionsDebugKey: "lesc-debug-key"
        case .distributed: "smp-distributed"
        }
    }
}

/// A key that can start encryption on an LE link: the LTK (or STK) and, where known, what selects it
/// (EDIV and Rand of LL_ENC_REQ, Core Spec Vol 6, Part B, 2.4.2.4) and the device it belongs to.
public struct LinkKey: Hashable, Sendable {
    /// 16 bytes, least significant octet first (the order of HCI and SMP; keys print most significant first).
    public var ltk: [UInt8]
    public var ediv: UInt16?
    public var rand: UInt64?
    /// The peer's (identity or public) address, 48 bits, when the key is tied to one.
    public var address: UInt64?
    public var source: LinkKeySource

    public init(ltk: [UInt8], ediv: UInt16? = nil, rand: UInt64? = nil, address: UInt64? = nil, source: LinkKeySource) {
        self.ltk = ltk
        self.ediv = ediv
        self.rand = rand
        self.address = address
        self.source = source
    }

    /// The key as sniffers and key files print it: most significant octet first, upper-case hex.
    public var displayText: String { ltk.reversed().map { hex($0).dropFirst(2) }.joined().uppercased() }

    /// `decrypted by blescope with STK … (how it was found)`.
    var decryptionText: String {
        let label = ediv == 0 && rand == 0 && source.kind.hasPrefix("legacy") ? "STK" : "LTK"
        return "decrypted by blescope with \(label) \(displayText) (\(source))"
    }
}

/// An identity resolving key and the identity address it resolves to (SMP Identity Information +
/// Identity Address Information, or a key file).
public struct IdentityKey: Hashable, Sendable {
    /// 16 bytes, least significant octet first.
    public var irk: [UInt8]
    public var identity: LLDeviceAddress?
    public var source: LinkKeySource
    public init(irk: [UInt8], identity: LLDeviceAddress?, source: LinkKeySource) {
        self.irk = irk
        self.identity = identity
        self.source = source
    }
}

// MARK: - Decryption state of one connection

/// How a capturer that decrypted a packet left its MIC: nRF Sniffer firmware and bsniffhub write the
/// plaintext with the LL length reduced by the 4 MIC bytes; other writers keep the MIC after the payload
/// (and in the length). Learned per connection from packets whose size proves it (a control PDU of fixed
/// size, a complete L2CAP PDU), never assumed from the flags alone.
enum CapturerMICTrailer: UInt8 {
    case unknown, absent, present
}

/// What the link layer did with one encrypted data PDU.
enum LLDecryptOutcome {
    /// Plaintext (decrypted by the capturer or here), borrowed until the next packet.
    case plaintext(UnsafeRawBufferPointer)
    /// Plaintext, and the packet went the other way than the capture's timing suggested (LT 251/256/PPI carry
    /// no direction; the nonce's direction bit settles it).
    case plaintextOtherDirection(UnsafeRawBufferPointer)
    /// Encrypted and no key decrypts it.
    case noKey
    /// The MIC did not check (capturer's verdict or ours): the bytes are not the PDU.
    case micFailed
}

/// Decrypts one LE link per Core Spec Vol 6, Part E: session key from LL_ENC_REQ/LL_ENC_RSP, AES-CCM
/// per data PDU with a packet counter per direction that starts at 0 when encryption starts and counts
/// new (not retransmitted) non-empty PDUs.
///
/// A state machine fed by the link-layer tracker: ``noteControl(_:direction:frame:)`` for LL control
/// PDUs in the clear or decrypted, ``open(_:)`` for every non-empty PDU once encryption is on.
struct LLEncryptionState {
    enum Phase: UInt8 {
        /// No encryption procedure seen (or paused).
        case clear
        /// LL_ENC_REQ / LL_ENC_RSP seen, LL_START_ENC_REQ not yet: still in the clear.
        case requested
        /// LL_START_ENC_REQ seen: every non-empty PDU from here on is encrypted.
        case encrypted
    }

    var phase = Phase.clear
    var rand: UInt64 = 0
    var ediv: UInt16 = 0
    var skdCentral: UInt64 = 0
    var ivCentral: UInt32 = 0
    var skdPeripheral: UInt64 = 0
    var ivPeripheral: UInt32 = 0
    var haveRequest = false
    var haveResponse = false
    /// First frame sent encrypted (LL_START_ENC_REQ + 1 on raw captures, or the capturer's first encrypted packet).
    var encryptedFrom: Int?
    /// The start was announced (first encrypted PDU, or the second of the LL_START_ENC_RSPs counted since LL_START_ENC_REQ).
    var startAnnounced = false, startResponses = 0
    var cipher: LLPacketCipher?
    var keySearchDone = false
    var keysTried = 0
    var key: LinkKey?
    /// A key found by the MIC search, until a second encrypted PDU confirms it.
    var micSearch: LLMICSearchProgress?
    /// Why no key was found, when a pairing was seen and searched (or could not be).
    var searchNote: LLKeySearchNote?
    /// Next packet counter per direction (0 central → peripheral, 1 peripheral → central).
    var counters: (UInt64, UInt64) = (0, 0)
    var micTrailer = CapturerMICTrailer.unknown
    /// A capture without encryption flags whose packets after the encryption start are plaintext: a tool
    /// (crackle, a sniffer) decrypted them before writing. Proved by a non-empty PDU too short to carry a MIC.
    var clearAfterStart = false
    /// The capturer flagged a packet encrypted with a bad MIC (it had no key, or lost the counter): its flag on later
    /// packets no longer says whether they are plaintext.
    var capturerFailedMIC = false
    /// Packets the capturer flagged encrypted with a bad MIC, and where it stopped flagging the encrypted link at all
    /// (``LLUnflaggedCiphertext``).
    var capturerBadMICs = 0
    var unflagged: LLUnflaggedCiphertext?
    /// The frame of the first ciphertext when LL_START_ENC_REQ itself was not captured (``startWentUnseen``).
    var startInferredAt: Int?

    /// Counts for the connection's summary.
    var firstUndecryptedFrame: Int?
    var firstMICFailureFrame: Int?
    /// Packets whose counter had to move forward: the capture missed that many encrypted PDUs.
    var missedPDUs = 0
    /// PDUs in a row the link's key failed to open (0 after each it opened): paces the wider counter search.
    var failuresInARow: UInt32 = 0

    var isOn: Bool { phase == .encrypted }
}

/// Encrypts and decrypts the data PDUs of one direction pair. The implementation is AES-CCM from
/// ``BLESecurity`` (`LLCipher`); the protocol keeps the link-layer tracker testable and free of key material.
protocol LLPacketCipher: AnyObject {
    /// Decrypts `payload` (ciphertext then the 4-byte MIC) into `output`; false when the MIC does not check.
    func decrypt(
        header0: UInt8, payload: UnsafeRawBufferPointer, packetCounter: UInt64, centralToPeripheral: Bool,
        into output: inout [UInt8]
    ) -> Bool
}

extension String {
    package func leftPadded(to width: Int, with pad: Character) -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}

extension LLEncryptionState {
    mutating func noteRequest(rand: UInt64, ediv: UInt16, skdCentral: UInt64, ivCentral: UInt32) {
        self.rand = rand
        self.ediv = ediv
        self.skdCentral = skdCentral
        self.ivCentral = ivCentral
        haveRequest = true
        haveResponse = false
        // A new procedure (first start, or a restart after a pause): new session key, counters from 0.
        cipher = nil
        keySearchDone = false
        key = nil
        micSearch = nil
        searchNote = nil
        counters = (0, 0)
        failuresInARow = 0
        if phase == .clear { phase = .requested }
    }

    mutating func noteResponse(skdPeripheral: UInt64, ivPeripheral: UInt32) {
        self.skdPeripheral = skdPeripheral
        self.ivPeripheral = ivPeripheral
        haveResponse = true
    }

    /// The encryption pause procedure ended (Core Spec Vol 6, Part B, 5.1.3.2): the link is in the clear again.
    mutating func pause() {
        phase = .clear
        cipher = nil
        counters = (0, 0)
        clearAfterStart = false  // the restart's first PDU tells again how the capture wrote its ciphertext
    }

    var sessionKeyKnown: Bool { haveRequest && haveResponse }

}

/// A fixed buffer that outlives the call that fills it, so decrypted bytes can be lent on to L2CAP like
/// the record's own bytes (valid until the next packet).
final class LLPlaintextBuffer {
    let bytes: UnsafeMutableRawBufferPointer
    var scratch: [UInt8] = []
    /// Receives each record blescope decrypted, rewritten as the capturer would have written it decrypted
    /// (`convert --decrypt`); nil on analysis passes.
    var rewritten: ((Int, [UInt8]) -> Void)?
    init() {
        bytes = .allocate(byteCount: 512, alignment: 8)
        scratch.reserveCapacity(512)
    }
    deinit { bytes.deallocate() }

    func lend(_ count: Int) -> UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[0..<count]) }
}

/// How a connection's encryption went, for reports and the one finding that says what is missing.
public struct LLEncryptionSummary: Hashable, Sendable {
    /// First encrypted frame.
    public var encryptedFrom: Int
    /// LL_ENC_REQ and LL_ENC_RSP were both seen (a key could work).
    public var startSeen: Bool
    /// The key that decrypted the link here, nil when none did (or the capturer decrypted it).
    public var key: LinkKey?
    public var firstUndecryptedFrame: Int?
    public var firstMICFailureFrame: Int?
    /// Encrypted PDUs the capture missed (the packet counter moved on by more than one).
    public var missedPDUs: Int
    /// Keys tried on the first encrypted PDU blescope had to decrypt itself.
    public var keysTried: Int
    /// Why no key was found for a pairing seen on the link (searched, or not searchable).
    public var keySearch: LLKeySearchNote?
    /// LL_START_ENC_REQ was not captured: the encryption start is inferred from the first ciphertext.
    public var startInferred = false
    /// Where the capturer stopped flagging the encrypted link's packets, and what was counted as ciphertext after.
    public var unflagged: LLUnflaggedCiphertext?

    /// `decrypted by blescope with STK … (how it was found)`; nil when blescope decrypted nothing here.
    public var decryptionText: String? { key?.decryptionText }

    /// Why the PDUs stayed encrypted, for the findings: the search's verdict when a pairing was seen, otherwise the keys tried.
    static func noKeyReason(keysTried: Int, note: LLKeySearchNote?) -> String {
        if let note { return note.description }
        return keysTried == 0 ? "no key" : "none of the \(keysTried) keys tried checks their MIC"
    }
}

extension LLEncryptionState {
    var summary: LLEncryptionSummary? {
        guard let encryptedFrom else { return nil }
        // Summed up when the link ends: a MIC search's winner still waiting for a second PDU never got one.
        var key = key
        if micSearch != nil, let source = key?.source { key?.source = source.confirmed(.noSecondPDU) }
        return LLEncryptionSummary(
            encryptedFrom: encryptedFrom, startSeen: sessionKeyKnown, key: key,
            firstUndecryptedFrame: firstUndecryptedFrame, firstMICFailureFrame: firstMICFailureFrame,
            missedPDUs: missedPDUs, keysTried: keysTried, keySearch: searchNote, startInferred: startInferredAt != nil,
            // Said only where it changed a count: a flag that stopped on the link's last packets counts nothing (the
            // legacy out-of-band test capture: unflagged at 24, no PDU after).
            unflagged: unflagged.flatMap { $0.pdus > 0 ? $0 : nil })
    }
}

extension LLEncryptionState {
    func stateText(_ stats: LinkLayerStats) -> String {
        if clearAfterStart { return "decrypted before it was written (plaintext after the encryption start, no MIC)" }
        if stats.decryptedByCapturer > 0 { return "decrypted by the capturer" }
        if let text = key?.decryptionText { return text }
        if stats.micFailures > 0 { return "not decrypted: MIC failed" }
        if !sessionKeyKnown { return "not decrypted: the encryption start (LL_ENC_REQ/LL_ENC_RSP) is not in the capture" }
        if let startInferredAt, key == nil {
            return "not decrypted: LL_START_ENC_REQ not captured, encrypted from frame \(startInferredAt) (inferred)"
        }
        if let searchNote { return "not decrypted: \(searchNote)" }
        return "not decrypted: no key (--ltk, --keys, --keys-from)"
    }
}

/// A decrypted air packet written back as its capturer would have written it after decrypting: payload in the
/// clear, the MIC removed from the payload and the LL length, the CRC recomputed over the new PDU, and the
/// pseudo-header flags saying "decrypted, MIC checked and valid" (nRF Sniffer: encrypted + MIC ok, the
/// convention Wireshark reads; LT 256: decrypted + MIC checked + MIC valid). Frame numbers stay as they were.
enum LLDecryptedRecord {
    static func rewrite(_ record: CaptureRecord, _ air: LLAirPacket, plaintext: UnsafeRawBufferPointer, crcInit: UInt32?) -> [UInt8] {
        let original = record.bytes
        let aa = air.packet.offset
        var out = Array(original[0..<(aa + 4)])
        var pdu: [UInt8] = [air.packet.header0, UInt8(truncatingIfNeeded: plaintext.count)]
        if let cte = air.packet.cteInfo { pdu.append(cte) }
        pdu.append(contentsOf: plaintext)
        out += pdu
        let crc = crcInit.map { LLCRC.compute(crcInit: $0, over: pdu) } ?? air.packet.crc
        out += [UInt8(truncatingIfNeeded: crc), UInt8(truncatingIfNeeded: crc >> 8), UInt8(truncatingIfNeeded: crc >> 16)]
        let removed = air.packet.payload.count - plaintext.count
        switch record.linkType {
        case LLAirPacket.linkTypeNordicBLE:
            var r = ByteReader(original)
            if let h = try? NordicBLEHeader(parsing: &r), h.protocolVersion >= 2 {
                let flags = aa - Int(h.eventPacketLength) + 1
                if flags > 0 && flags < out.count { out[flags] |= 0x0C }
                let length = (Int(out[1]) | Int(out[2]) << 8) - removed
                out[1] = UInt8(truncatingIfNeeded: length)
                out[2] = UInt8(truncatingIfNeeded: length >> 8)
            }
        case LLAirPacket.linkTypeLELLWithPHDR where out.count >= 10:
            var flags = UInt16(out[8]) | UInt16(out[9]) << 8
            flags |= LERFFlags.decrypted.rawValue | LERFFlags.micChecked.rawValue | LERFFlags.micValid.rawValue
            out[8] = UInt8(truncatingIfNeeded: flags)
            out[9] = UInt8(truncatingIfNeeded: flags >> 8)
        default:
            break
        }
        return out
    }
}
