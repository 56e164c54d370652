/// One encrypted data channel PDU as the air carried it, with what its CCM nonce needs
/// (Core Spec Vol 6, Part E, 2): the key search checks its MIC.
public struct SealedLLPDU: Hashable, Sendable {
    /// The first octet of the data PDU header (masked with 0xE3 for the additional data).
    public var header0: UInt8
    /// The encrypted payload followed by its 4-octet MIC, as carried.
    public var payload: [UInt8]
    /// The 39-bit packet counter of its direction: 0 for the first encrypted PDU of that direction.
    public var packetCounter: UInt64
    public var centralToPeripheral: Bool

    public init(header0: UInt8, payload: [UInt8], packetCounter: UInt64, centralToPeripheral: Bool) {
        self.header0 = header0
        self.payload = payload
        self.packetCounter = packetCounter
        self.centralToPeripheral = centralToPeripheral
    }
}

/// Finds the TK of an LE legacy pairing when its addresses are unknown (an air capture that joined the connection
/// after its CONNECT_IND): c1 needs both addresses and their types to check a TK against the confirm values, but
/// the STK does not. For each candidate TK, STK = s1(TK, Srand, Mrand) (Core Spec Vol 3, Part H, 2.2.4), the
/// session key SK = e(STK, SKDm ‖ SKDs) of the encryption that follows the pairing (Vol 6, Part B, 5.1.3.1: EDIV and
/// Rand 0, the STK as the key), and the candidate holds when the first encrypted PDU's MIC checks under SK (AES-CCM,
/// Vol 6, Part E, 2). Candidates in the order of ``LegacyPairingCracker``: TK 0 (Just Works, the same TK as passkey
/// 000000) first, then the passkeys 1…999,999 (Vol 3, Part H, 2.3.5.3).
///
/// Cost per candidate: three AES key schedules (TK, STK, SK) and, for a 1-octet PDU (LL_START_ENC_RSP, the first
/// encrypted PDU of either side), five AES blocks (S0, S1 and the CBC-MAC's three), the first three in one call.
/// The CCM check is done here on single blocks through one reused context (an `LLCipher` per candidate would set up
/// a libcrypto CCM context a million times).
///
/// A wrong key passes a 4-octet MIC with probability 2^-32: over a full search (10^6 candidates) one passes by chance
/// with odds of about 2.3 × 10^-4, enough to matter over many captures. So a caller checks the winner on a second
/// encrypted PDU when there is one (`accept`), which takes those odds to 2^-64 per candidate, and resumes the search
/// after a winner that fails there (`from`).
public final class LegacyPairingMICSearch {
    /// TKs a full search tries: 0 (Just Works and passkey 000000) through 999,999.
    public static let candidateCount = 1_000_000

    private let aes = AESBlockCipher()
    /// Srand' ‖ Mrand' (s1's r'), SKDm ‖ SKDs, FIPS-197 order.
    private let s1Block: [UInt8]
    private let skdBlock: [UInt8]
    private let skdm: [UInt8], skds: [UInt8], iv: [UInt8]

    /// - Parameters: `mrand` and `srand` the Pairing Random values (wire order); `skdm`, `ivm` from LL_ENC_REQ and
    ///   `skds`, `ivs` from LL_ENC_RSP (8 and 4 octets, as carried).
    public init(mrand: Key128, srand: Key128, skdm: [UInt8], skds: [UInt8], ivm: [UInt8], ivs: [UInt8]) {
        precondition(skdm.count == 8 && skds.count == 8 && ivm.count == 4 && ivs.count == 4)
        s1Block = Key128(wire: mrand.bytes[0..<8] + srand.bytes[0..<8])!.msbFirst
        skdBlock = Key128(wire: skdm + skds)!.msbFirst
        self.skdm = skdm
        self.skds = skds
        iv = ivm + ivs
    }

    /// What a search found, and how far it went.
    public struct Outcome: Hashable, Sendable {
        /// TK and STK of the first candidate whose MIC checked and that `accept` took; nil when none did.
        public var keys: LegacyPairingKeys?
        /// Which of the PDUs given checked (the direction that held, when it was not known).
        public var pdu: Int
        /// The winner's TK as a number (0 = Just Works); where the search stopped when nothing won.
        public var candidate: UInt32
        /// Candidates tried.
        public var tried: Int
    }

    /// Tries the TKs `from`, `from + 1`, … (at most `limit` of them, and none past 999,999) against a PDU's MIC.
    ///
    /// - Parameters:
    ///   - pdus: the first encrypted PDU (its counter 0 when it is the first of its direction), more than once when its
    ///     direction is not known (one per direction); a candidate holds when the MIC of any of them checks.
    ///   - accept: asked about each candidate whose MIC checks (a second PDU to confirm it); false goes on searching.
    public func search(
        from: UInt32 = 0, limit: Int = candidateCount, pdus: [SealedLLPDU],
        accept: (LegacyPairingKeys) -> Bool = { _ in true }
    ) -> Outcome {
        let end = UInt32(min(Int(from) + max(0, limit), Self.candidateCount))
        guard from < end, !pdus.isEmpty, pdus.allSatisfy({ $0.payload.count > 4 }) else {
            return Outcome(keys: nil, pdu: 0, candidate: from, tried: 0)
        }
        let checks = pdus.map { CCMCheck(pdu: $0, iv: iv) }
        // TK, STK and SK side by side, FIPS-197 order.
        let keys = UnsafeMutablePointer<UInt8>.allocate(capacity: 48)
        defer { keys.deallocate() }
        keys.initialize(repeating: 0, count: 48)
        let tk = keys, stk = keys + 16, sk = keys + 32
        var candidate = from
        while candidate < end {
            tk[15] = UInt8(truncatingIfNeeded: candidate)
            tk[14] = UInt8(truncatingIfNeeded: candidate >> 8)
            tk[13] = UInt8(truncatingIfNeeded: candidate >> 16)
            aes.setKey(tk)
            aes.encryptBlock(s1Block, stk)
            aes.setKey(stk)
            aes.encryptBlock(skdBlock, sk)
            aes.setKey(sk)
            for (index, check) in checks.enumerated() where check.verify(aes) {
                let found = Self.keys(candidate, stk: Array(UnsafeBufferPointer(start: stk, count: 16)))
                if accept(found) { return Outcome(keys: found, pdu: index, candidate: candidate, tried: Int(candidate - from) + 1) }
            }
            candidate += 1
        }
        return Outcome(keys: nil, pdu: 0, candidate: end, tried: Int(end - from))
    }

    /// SK of a found STK, wire order (as ``LinkLayerEncryption/sessionKey(ltk:skdm:skds:)`` gives it).
    public func sessionKey(_ keys: LegacyPairingKeys) -> Key128 {
        LinkLayerEncryption.sessionKey(ltk: keys.stk, skdm: skdm, skds: skds)
    }

    /// IVm ‖ IVs, wire order.
    public var initializationVector: [UInt8] { iv }

    private static func keys(_ candidate: UInt32, stk msbFirst: [UInt8]) -> LegacyPairingKeys {
        LegacyPairingKeys(tk: Key128(UInt64(candidate)), passkey: candidate == 0 ? nil : candidate, stk: Key128(msbFirst: msbFirst)!)
    }
}

/// The MIC check of AES-CCM for one fixed PDU under changing keys (RFC 3610 with the parameters of Core Spec Vol 6,
/// Part E, 2: L = 2, M = 4, 13-octet nonce, one octet of additional data). Blocks FIPS-197 order, in one allocation
/// made once per search.
private final class CCMCheck {
    /// Blocks that depend on the nonce only, contiguous so that one call encrypts them all: A0 (whose keystream S0
    /// masks the MIC), A1…An (the payload's keystream), then B0 (the CBC-MAC's first block).
    private let counterBlocks: UnsafeMutablePointer<UInt8>
    private let keystream: UnsafeMutablePointer<UInt8>
    /// B1: l(a) = 1 and the additional data octet; then the running CBC-MAC.
    private let aadBlock: UnsafeMutablePointer<UInt8>
    private let mac: UnsafeMutablePointer<UInt8>
    /// The ciphertext zero-padded to whole blocks, then the MIC.
    private let ciphertext: UnsafeMutablePointer<UInt8>
    private let length: Int
    private let blocks: Int
    private let storage: UnsafeMutablePointer<UInt8>

    init(pdu: SealedLLPDU, iv: [UInt8]) {
        length = pdu.payload.count - 4
        blocks = (length + 15) / 16
        let counterBytes = 16 * (blocks + 2)
        let size = 2 * counterBytes + 32 + 16 * blocks + 4
        storage = .allocate(capacity: size)
        storage.initialize(repeating: 0, count: size)
        counterBlocks = storage
        keystream = storage + counterBytes
        aadBlock = keystream + counterBytes
        mac = aadBlock + 16
        ciphertext = mac + 16
        var nonce = (0..<5).map { UInt8(truncatingIfNeeded: pdu.packetCounter >> (8 * UInt64($0))) }
        nonce[4] = nonce[4] & 0x7F | (pdu.centralToPeripheral ? 0x80 : 0)
        nonce += iv
        var a: [UInt8] = []
        for i in 0...blocks { a += [0x01] + nonce + [UInt8(i >> 8), UInt8(truncatingIfNeeded: i)] }
        // B0: flags 0x49 (additional data, M' = 1, L' = 1), the nonce, the payload length.
        a += [0x49] + nonce + [UInt8(length >> 8), UInt8(truncatingIfNeeded: length)]
        counterBlocks.update(from: a, count: a.count)
        aadBlock.update(from: [0x00, 0x01, pdu.header0 & 0xE3], count: 3)
        ciphertext.update(from: pdu.payload, count: length)
        (ciphertext + 16 * blocks).update(from: Array(pdu.payload[length...]), count: 4)
    }

    deinit { storage.deallocate() }

    /// True when the PDU's MIC checks under the session key `aes` holds.
    @inline(__always)
    func verify(_ aes: AESBlockCipher) -> Bool {
        aes.encryptBlocks(counterBlocks, keystream, count: blocks + 2)
        let b0 = keystream + 16 * (blocks + 1)
        for i in 0..<16 { mac[i] = b0[i] ^ aadBlock[i] }
        aes.encryptBlock(mac, mac)
        for block in 0..<blocks {
            // The plaintext under this key (the ciphertext masked by the keystream of A(block + 1)), zero-padded.
            let c = ciphertext + 16 * block, s = keystream + 16 * (block + 1)
            let count = min(16, length - 16 * block)
            for i in 0..<count { mac[i] ^= c[i] ^ s[i] }
            aes.encryptBlock(mac, mac)
        }
        let m = ciphertext + 16 * blocks
        return mac[0] ^ keystream[0] == m[0] && mac[1] ^ keystream[1] == m[1]
            && mac[2] ^ keystream[2] == m[2] && mac[3] ^ keystream[3] == m[3]
    }
}
