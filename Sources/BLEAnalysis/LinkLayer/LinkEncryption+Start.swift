import BLECapture
import BLECore
import BLEProtocols

/// An encryption start the sniffer saw only half of: LL_ENC_REQ and LL_ENC_RSP, not the peripheral's one-octet
/// LL_START_ENC_REQ. What follows is ciphertext all the same, and read as plaintext a link's whole encrypted traffic
/// became phantom L2CAP (the corpus's Ubertooth capture of an iPhone and a shaver: 121 broken PDUs on connection 4).
extension LinkLayerTracker {
    /// Turns encryption on at `record` when its PDU can only be ciphertext (``LLEncryptionState/startWentUnseen``).
    static func inferUnseenStart(
        _ c: inout Conn, llid: UInt8, payload: UnsafeRawBufferPointer, _ record: CaptureRecord, _ emit: (LinkLayerOutput) -> Void
    ) {
        guard LLEncryptionState.startWentUnseen(c.encryption, llid: llid, payload: payload) else { return }
        c.encryption.phase = .encrypted
        c.encryption.startInferredAt = record.frame
        c.encryption.startResponses = 0
        c.encryptionSaid = false
        emit(.linkChanged(LLLinkChange(handle: c.info.handle, change: .keyGiven, frame: record.frame, timestamp: record.timestamp)))
    }
}

extension LLEncryptionState {
    /// After LL_ENC_RSP only a clear LL_START_ENC_REQ (1 octet), LL_REJECT_IND (2), LL_REJECT_EXT_IND (3) or
    /// LL_TERMINATE_IND (2) may come (Core Spec Vol 6, Part B, 5.1.3.1), or LL_ENC_REQ/LL_ENC_RSP again: a new PDU long
    /// enough to carry a MIC that is none of them is ciphertext, the central's LL_START_ENC_RSP (1 + 4 octets) in every
    /// real capture of it.
    static func startWentUnseen(_ e: LLEncryptionState, llid: UInt8, payload: UnsafeRawBufferPointer) -> Bool {
        guard e.phase == .requested, e.haveResponse, llid != 0, payload.count >= 5 else { return false }
        if llid == 3 {
            let opcode = payload[0]
            if (opcode == 0x03 && payload.count == 23) || (opcode == 0x04 && payload.count == 13) { return false }
        }
        return true
    }
}

/// A capturer that stopped flagging an encrypted link's packets after bad MICs (nRF Sniffer with no key for an LE Secure
/// Connections link: the NimBLE door lock's 10 bad MICs from 4096, then "Encrypted: No" from 4130 with no
/// LL_PAUSE_ENC_REQ): its first unflagged packet, the bad MICs before it, the non-empty PDUs after it read as ciphertext.
public struct LLUnflaggedCiphertext: Hashable, Sendable {
    public var from: Int
    public var afterBadMICs: Int
    public var pdus = 0

    var text: String {
        "the sniffer stopped flagging the link as encrypted at \(from) after \(afterBadMICs) bad MIC\(afterBadMICs == 1 ? "" : "s"); "
            + "its \(pdus) later PDU\(pdus == 1 ? " is" : "s are") counted as ciphertext"
    }
}

extension FindingKind {
    static func llEncryptedNoKey(
        _ count: Int, bytes: Int, from: Int, encryptedFrom: Int, keysTried: Int, note: LLKeySearchNote?, handle: UInt16,
        startInferred: Bool = false, unflagged: LLUnflaggedCiphertext? = nil
    ) -> FindingKind {
        .init(
            .llEncryptedNoKey,
            message:
                "link encrypted from frame \(encryptedFrom)"
                + (startInferred ? " (LL_START_ENC_REQ not captured, inferred from the first ciphertext)" : "")
                + ": encrypted, no key: \(count) PDUs, \(bytes) bytes on connection \(hex(handle, width: 4)) from frame \(from) could not be decrypted ("
                + LLEncryptionSummary.noKeyReason(keysTried: keysTried, note: note)
                + (unflagged.map { "; \($0.text)" } ?? "")
                + ") — their ATT, SMP and L2CAP traffic is missing from every analysis; pass --ltk HEX, --keys FILE or --keys-from PHONE_HCI_LOG, or capture the pairing"
        )
    }
    static func llEncryptionStartUnseen(_ count: Int, bytes: Int, from: Int, handle: UInt16) -> FindingKind {
        .init(
            .llEncryptedNoKey,
            message:
                "link already encrypted when the capture started (no LL_ENC_REQ/LL_ENC_RSP): encrypted, no key: \(count) PDUs, \(bytes) bytes from frame \(from) on connection \(hex(handle, width: 4)) could not be decrypted — their ATT, SMP and L2CAP traffic is missing from every analysis; capture from before the connection's encryption starts"
        )
    }
    static func llMICFailures(_ count: Int, from: Int, handle: UInt16, capturer: Bool) -> FindingKind {
        .init(
            .llMICFailed,
            message: "\(count) encrypted PDUs on connection \(hex(handle, width: 4)) failed their MIC from frame \(from)"
                + (capturer
                    ? " (the capturer's verdict: it lost the packet counter, usually after missing a packet, or used the wrong key)"
                    : " (wrong key, or the capture missed packets beyond the counter search)")
                + ": kept out of the decode")
    }
}
