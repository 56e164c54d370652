import COpenSSL

/// Session key and IV of an encrypted LE link (Core Spec Vol 6, Part B, 5.1.3.1 and Part E, 1;
/// sample data Vol 6, Part C, 1).
public enum LinkLayerEncryption {
    /// SK = e(LTK, SKD) with SKD = SKDm ‖ SKDs in wire order (SKDm the least significant half).
    ///
    /// - Parameters: `ltk` wire order (or the STK during legacy pairing); `skdm` the 8 octets of LL_ENC_REQ's
    ///   SKDm, `skds` those of LL_ENC_RSP's SKDs, exactly as carried (wire order). - Returns: SK, wire order.
    public static func sessionKey(ltk: Key128, skdm: [UInt8], skds: [UInt8]) -> Key128 {
        precondition(skdm.count == 8 && skds.count == 8, "SKDm and SKDs are 8 octets")
        return SecurityFunction.e(ltk, Key128(wire: skdm + skds)!)
    }

    /// IV = IVm ‖ IVs in wire order (IVm the least significant half): the 8 octets of the CCM nonce after the counter.
    ///
    /// - Parameters: `ivm` the 4 octets of LL_ENC_REQ, `ivs` those of LL_ENC_RSP, as carried.
    public static func iv(ivm: [UInt8], ivs: [UInt8]) -> [UInt8] {
        precondition(ivm.count == 4 && ivs.count == 4, "IVm and IVs are 4 octets")
        return ivm + ivs
    }
}

/// AES-CCM of LE data channel PDUs (Core Spec Vol 6, Part E, 2): 13-octet nonce = the 39-bit packet counter
/// (least significant octet first) with the direction bit (1 = central → peripheral) as the most significant
/// bit of octet 4, then the 8-octet IV; a 4-octet MIC; additional data = the first header octet & 0xE3
/// (NESN, SN and MD masked). One libcrypto context per direction of use, reused for every packet
/// (no allocation per packet). Not thread-safe: one cipher per thread.
public final class LLCipher {
    private let key: [UInt8]  // SK, FIPS-197 order
    private let iv: [UInt8]
    private var decryptContext: OpaquePointer?
    private var encryptContext: OpaquePointer?
    private var nonce = [UInt8](repeating: 0, count: 13)
    /// Plaintext is decrypted here first, then appended to the caller's array (one memcpy, no allocation).
    private var scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: 256)
    private var scratchCapacity = 256

    /// - Parameters: `sessionKey` SK in wire order (as `LinkLayerEncryption.sessionKey` returns it);
    ///   `iv` the 8 octets IVm ‖ IVs, wire order.
    public init(sessionKey: Key128, iv: [UInt8]) {
        precondition(iv.count == 8, "the IV is 8 octets")
        key = sessionKey.msbFirst
        self.iv = iv
    }

    deinit {
        scratch.deallocate()
        if let c = decryptContext { EVP_CIPHER_CTX_free(c) }
        if let c = encryptContext { EVP_CIPHER_CTX_free(c) }
    }

    /// A context with AES-128-CCM, 13-octet nonce, 4-octet tag and SK set (one key schedule per cipher).
    private static func makeContext(key: [UInt8], encrypt: Bool) -> OpaquePointer {
        guard let c = EVP_CIPHER_CTX_new(),
            EVP_CipherInit_ex(c, EVP_aes_128_ccm(), nil, nil, nil, encrypt ? 1 : 0) == 1,
            EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_IVLEN, 13, nil) == 1,
            EVP_CIPHER_CTX_ctrl(c, EVP_CTRL_AEAD_SET_TAG, 4, nil) == 1,
            key.withUnsafeBufferPointer({ EVP_CipherInit_ex(c, nil, nil, $0.baseAddress, nil, -1) }) == 1
        else { fatalError("libcrypto: cannot set up AES-128-CCM") }
        return c
    }

    private func setNonce(packetCounter: UInt64, centralToPeripheral: Bool) {
        for i in 0..<5 { nonce[i] = UInt8(truncatingIfNeeded: packetCounter >> (8 * UInt64(i))) }
        nonce[4] = nonce[4] & 0x7F | (centralToPeripheral ? 0x80 : 0)
        for i in 0..<8 { nonce[5 + i] = iv[i] }
    }

    /// Decrypts one data channel PDU payload and checks its MIC (Core Spec Vol 6, Part E, 2).
    ///
    /// - Parameters:
    ///   - header0: the first octet of the data PDU header (LLID, NESN, SN, MD, CP…); masked with 0xE3 here.
    ///   - payload: the encrypted payload followed by its 4-octet MIC (the LL length counts both).
    ///   - packetCounter: the 39-bit counter of this direction (0 for the first encrypted PDU; a retransmission keeps it).
    ///   - centralToPeripheral: the direction bit of the nonce.
    ///   - into: replaced by the plaintext without the MIC (left empty on failure).
    /// - Returns: true when the MIC checks; false on a MIC failure or a payload of 4 octets or fewer.
    public func decrypt(
        header0: UInt8, payload: UnsafeRawBufferPointer, packetCounter: UInt64,
        centralToPeripheral: Bool, into output: inout [UInt8]
    ) -> Bool {
        output.removeAll(keepingCapacity: true)
        guard payload.count > 4, let input = payload.baseAddress else { return false }
        let ctx = decryptContext ?? LLCipher.makeContext(key: key, encrypt: false)
        decryptContext = ctx
        setNonce(packetCounter: packetCounter, centralToPeripheral: centralToPeripheral)
        let length = payload.count - 4
        let mic = UnsafeMutableRawPointer(mutating: input + length)
        var aad = header0 & 0xE3
        var outLength: Int32 = 0
        guard EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 4, mic) == 1,
            nonce.withUnsafeBufferPointer({ EVP_DecryptInit_ex(ctx, nil, nil, nil, $0.baseAddress) }) == 1,
            EVP_DecryptUpdate(ctx, nil, &outLength, nil, Int32(length)) == 1,
            EVP_DecryptUpdate(ctx, nil, &outLength, &aad, 1) == 1
        else { return false }
        if length > scratchCapacity {
            scratch.deallocate()
            scratch = UnsafeMutablePointer<UInt8>.allocate(capacity: length)
            scratchCapacity = length
        }
        guard EVP_DecryptUpdate(ctx, scratch, &outLength, input.assumingMemoryBound(to: UInt8.self), Int32(length)) > 0 else {
            return false
        }
        output.append(contentsOf: UnsafeBufferPointer(start: scratch, count: length))
        return true
    }

    /// Convenience over `decrypt(header0:payload:…)` for an array; nil when the MIC fails.
    public func decrypt(header0: UInt8, payload: [UInt8], packetCounter: UInt64, centralToPeripheral: Bool) -> [UInt8]? {
        var out: [UInt8] = []
        let ok = payload.withUnsafeBytes {
            decrypt(header0: header0, payload: $0, packetCounter: packetCounter, centralToPeripheral: centralToPeripheral, into: &out)
        }
        return ok ? out : nil
    }

    /// Encrypts one data channel PDU payload (Core Spec Vol 6, Part E, 2), as a link layer sends it.
    ///
    /// - Parameters: as for `decrypt`; `plaintext` at least one octet (empty PDUs are never encrypted).
    /// - Returns: the ciphertext followed by the 4-octet MIC.
    public func encrypt(header0: UInt8, plaintext: [UInt8], packetCounter: UInt64, centralToPeripheral: Bool) -> [UInt8] {
        precondition(!plaintext.isEmpty, "an empty PDU is not encrypted")
        let ctx = encryptContext ?? LLCipher.makeContext(key: key, encrypt: true)
        encryptContext = ctx
        setNonce(packetCounter: packetCounter, centralToPeripheral: centralToPeripheral)
        var aad = header0 & 0xE3
        var outLength: Int32 = 0
        var out = [UInt8](repeating: 0, count: plaintext.count + 4)
        let ok =
            nonce.withUnsafeBufferPointer({ EVP_EncryptInit_ex(ctx, nil, nil, nil, $0.baseAddress) }) == 1
            && EVP_EncryptUpdate(ctx, nil, &outLength, nil, Int32(plaintext.count)) == 1
            && EVP_EncryptUpdate(ctx, nil, &outLength, &aad, 1) == 1
            && out.withUnsafeMutableBufferPointer({ o in
                plaintext.withUnsafeBufferPointer {
                    EVP_EncryptUpdate(ctx, o.baseAddress, &outLength, $0.baseAddress, Int32(plaintext.count))
                }
            }) == 1
            && out.withUnsafeMutableBufferPointer({ EVP_EncryptFinal_ex(ctx, $0.baseAddress! + plaintext.count, &outLength) }) == 1
            && out.withUnsafeMutableBufferPointer({ EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 4, $0.baseAddress! + plaintext.count) })
                == 1
        precondition(ok, "libcrypto: AES-CCM encryption failed")
        return out
    }
}
