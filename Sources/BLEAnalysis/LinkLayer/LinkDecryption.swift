import BLECapture
import BLECore
import BLEProtocols
import BLESecurity

// The per-packet side of LE link decryption (Core Spec Vol 6, Part E): which key opens a link (the search on its first
// PDU), the packet counter each direction has reached, and what a capturer that decrypted before writing left of the
// MIC. The per-link state it reads and moves (session key inputs, phase, counters) is LLEncryptionState.

extension LinkLayerTracker {
    /// How many packets past the expected counter a decryption tries: the capture may have missed packets
    /// (the sniffer lost them), each of which advanced the sender's counter.
    static let counterSearchWindow: UInt64 = 8

    /// The payload of an encrypted PDU as plaintext, or why not.
    static func decrypt(
        _ c: inout Conn, _ air: LLAirPacket, llid: UInt8, payload: UnsafeRawBufferPointer, direction: Direction,
        header0: UInt8, frame: Int, keys: LinkKeyStore?, buffer: LLPlaintextBuffer
    ) -> LLDecryptOutcome {
        let centralToPeripheral = direction != .rx
        // The central's LL_PAUSE_ENC_RSP goes in the clear (Core Spec Vol 6, Part B, 5.1.3.2): its one octet proves nothing
        // of how the capture wrote the encrypted PDUs (audit49's pause.pcap: the restart's ciphertext read as L2CAP).
        if llid == 3, payload.count == 1, payload[0] == LLControlOpcode.pauseEncRsp.rawValue { return .plaintext(payload) }
        // An encrypted PDU carries at least one byte and the 4-byte MIC: a shorter one on a capture without flags
        // was written in the clear (crackle writes the links it decrypted that way, MIC removed).
        if !air.reportsEncryption, !air.decryptedByCapturer, payload.count <= 4, c.stats.decryptedHere == 0 {
            c.encryption.clearAfterStart = true
        }
        if air.decryptedByCapturer || c.encryption.clearAfterStart {
            c.stats.decryptedByCapturer &+= 1
            // Keep our counters in step, in case we must take over where the capturer lost the link.
            if centralToPeripheral { c.encryption.counters.0 &+= 1 } else { c.encryption.counters.1 &+= 1 }
            return .plaintext(stripCapturerMIC(&c.encryption, llid: llid, payload: payload))
        }
        // Not decrypted by the capturer (or decrypted wrongly: nRF Sniffer flags encrypted without MIC ok
        // both for ciphertext it had no key for and for plaintext it got wrong). Try the keys we have.
        let capturerLostSync = air.mic == .invalid && c.stats.decryptedByCapturer > 0
        guard c.encryption.sessionKeyKnown, payload.count > 4 else { return capturerLostSync ? .micFailed : .noKey }
        // Without a direction from the capturer, or from one that lost the link (a bad MIC: the LESC debug-key capture's
        // nRF Sniffer flags the peripheral's 503 as the central's), the other direction is worth a try too (no array: this
        // runs per packet).
        let tries = air.direction == .unknown || c.encryption.capturerFailedMIC ? 2 : 1
        if c.encryption.cipher == nil && !c.encryption.keySearchDone {
            c.encryption.keySearchDone = true
            for t in 0..<tries where c.encryption.cipher == nil {
                findKey(
                    &c, keys: keys, header0: header0, payload: payload,
                    centralToPeripheral: t == 0 ? centralToPeripheral : !centralToPeripheral,
                    buffer: buffer)
            }
            if c.encryption.cipher == nil {
                searchPairingByMIC(
                    &c, keys: keys, header0: header0, payload: payload, centralToPeripheral: centralToPeripheral,
                    eitherDirection: tries == 2, frame: frame)
            }
        }
        guard let cipher = c.encryption.cipher else { return capturerLostSync ? .micFailed : .noKey }
        if let opened = open(
            &c, cipher, header0: header0, payload: payload, centralToPeripheral: centralToPeripheral, tries: tries, skip: 0,
            width: counterSearchWindow, frame: frame, buffer: buffer)
        {
            return opened
        }
        // The MIC search's winner fails the next PDU: its MIC may have checked by chance. The search goes on from the
        // next TK with both PDUs; a new winner decrypts this one (the search cleared, so this recursion is one level).
        if c.encryption.micSearch != nil,
            resumeMICSearch(&c, keys: keys, header0: header0, payload: payload, eitherDirection: tries == 2, frame: frame)
        {
            return decrypt(
                &c, air, llid: llid, payload: payload, direction: direction, header0: header0, frame: frame, keys: keys,
                buffer: buffer)
        }
        // A confirmed key that fails past the window: the sniffer may have missed more of the sender's PDUs than it
        // spans (each moved the counter on). A wider search, on the 1st, 2nd, 4th, 8th… failure in a row and wider each
        // time (64 × that count, up to ``counterResyncLimit``), finds the counter again; a PDU no counter opens (bad bytes,
        // a key changed unseen) costs a link a few thousand tries in all, not that many per PDU.
        c.encryption.failuresInARow &+= 1
        let n = UInt64(c.encryption.failuresInARow)
        if c.encryption.micSearch == nil, n & (n &- 1) == 0,
            let opened = open(
                &c, cipher, header0: header0, payload: payload, centralToPeripheral: centralToPeripheral, tries: tries,
                skip: counterSearchWindow, width: min(64 * n, counterResyncLimit), frame: frame, buffer: buffer)
        {
            return opened
        }
        return .micFailed
    }

    /// The widest counter search after failures in a row: 4096 PDUs past the expected counter (a sniffer deaf to one
    /// side for ~40 s of a link sending 100 PDUs a second).
    static let counterResyncLimit: UInt64 = 4096

    /// Opens `payload` at a counter from `skip` to `skip + width` past the one expected of each direction tried (the
    /// said one first, then, with `tries` 2, the other); the counters move past it and the link's failures in a row end.
    private static func open(
        _ c: inout Conn, _ cipher: any LLPacketCipher, header0: UInt8, payload: UnsafeRawBufferPointer, centralToPeripheral: Bool,
        tries: Int, skip: UInt64, width: UInt64, frame: Int, buffer: LLPlaintextBuffer
    ) -> LLDecryptOutcome? {
        for t in 0..<tries {
            let d = t == 0 ? centralToPeripheral : !centralToPeripheral
            let expected = d ? c.encryption.counters.0 : c.encryption.counters.1
            for counter in (expected + skip)..<(expected + skip + width) {
                guard
                    cipher.decrypt(
                        header0: header0, payload: payload, packetCounter: counter, centralToPeripheral: d,
                        into: &buffer.scratch)
                else { continue }
                c.encryption.missedPDUs += Int(counter - expected)
                if d { c.encryption.counters.0 = counter + 1 } else { c.encryption.counters.1 = counter + 1 }
                c.encryption.failuresInARow = 0
                c.stats.decryptedHere &+= 1
                c.encryption.confirmMICSearch(frame: frame)
                buffer.scratch.withUnsafeBytes { buffer.bytes.copyMemory(from: $0) }
                let p = buffer.lend(buffer.scratch.count)
                return d == centralToPeripheral ? .plaintext(p) : .plaintextOtherDirection(p)
            }
        }
        return nil
    }

    /// Tries every candidate key on the first encrypted PDU blescope must open itself; the one whose MIC checks is the
    /// link's key. The packet counters start where the link's own count has them: 0 at the encryption start, or past
    /// the PDUs a capturer decrypted before it lost the link (the LESC debug-key capture: the nRF Sniffer opened 20 PDUs,
    /// then failed the MIC of 503, the peripheral's counter 10, and of every PDU after).
    static func findKey(
        _ c: inout Conn, keys: LinkKeyStore?, header0: UInt8, payload: UnsafeRawBufferPointer,
        centralToPeripheral: Bool, buffer: LLPlaintextBuffer
    ) {
        guard let keys else { return }
        let e = c.encryption
        // SKD and IV as LL_ENC_REQ/RSP carried them (wire order).
        func wire<T: FixedWidthInteger>(_ v: T) -> [UInt8] { var w = ByteWriter(); w.write(littleEndian: v); return w.bytes }
        let skdm = wire(e.skdCentral), skds = wire(e.skdPeripheral)
        let iv = LinkLayerEncryption.iv(ivm: wire(e.ivCentral), ivs: wire(e.ivPeripheral))
        let candidates = keys.candidates(
            handle: c.info.handle, ediv: e.ediv, rand: e.rand, central: c.info.central,
            peripheral: c.info.peripheral)
        c.encryption.keysTried = min(candidates.count, 256)
        let first = centralToPeripheral ? e.counters.0 : e.counters.1
        for candidate in candidates.prefix(256) {
            guard let ltk = Key128(wire: candidate.ltk) else { continue }
            let cipher = LLCipher(sessionKey: LinkLayerEncryption.sessionKey(ltk: ltk, skdm: skdm, skds: skds), iv: iv)
            for counter in first..<(first + counterSearchWindow)
            where cipher.decrypt(
                header0: header0, payload: payload, packetCounter: counter,
                centralToPeripheral: centralToPeripheral, into: &buffer.scratch)
            {
                c.encryption.cipher = cipher
                c.encryption.key = candidate
                return
            }
        }
    }

    /// Removes the MIC a capturer left after a payload it decrypted, when the packet or the connection shows it is there.
    static func stripCapturerMIC(_ e: inout LLEncryptionState, llid: UInt8, payload: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        if let evidence = capturerKeptMIC(llid: llid, payload: payload) { e.micTrailer = evidence ? .present : .absent }
        guard e.micTrailer == .present, payload.count >= 4 else { return payload }
        return UnsafeRawBufferPointer(rebasing: payload[0..<(payload.count - 4)])
    }

    /// What one decrypted packet proves about a trailing MIC: a control PDU whose opcode has a fixed size, or a
    /// start fragment whose L2CAP length accounts for every byte; nil when the packet cannot tell.
    static func capturerKeptMIC(llid: UInt8, payload: UnsafeRawBufferPointer) -> Bool? {
        switch llid {
        case 3:
            guard let first = payload.first, let info = LLControlOpcode(rawValue: first).info, info.fixed else { return nil }
            if payload.count == 1 + info.size { return false }
            if payload.count == 1 + info.size + 4 { return true }
            return nil
        case 2:
            guard payload.count >= 4 else { return nil }
            let length = Int(payload[0]) | Int(payload[1]) << 8
            if length + 4 == payload.count { return false }
            if length + 8 == payload.count { return true }
            return nil
        default:
            return nil
        }
    }
}

extension LLCipher: LLPacketCipher {}
