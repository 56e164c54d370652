import COpenSSL

/// AES-128 on single 16-octet blocks through OpenSSL's EVP (ECB, no padding), one reusable context.
///
/// Not thread-safe: one instance per thread. Keys and blocks here are in FIPS-197 order
/// (most significant octet first); the security functions convert from wire order.
final class AESBlockCipher {
    private let ctx: OpaquePointer

    init() {
        guard let c = EVP_CIPHER_CTX_new(), EVP_EncryptInit_ex(c, EVP_aes_128_ecb(), nil, nil, nil) == 1 else {
            fatalError("libcrypto: cannot create an AES-128-ECB context")
        }
        EVP_CIPHER_CTX_set_padding(c, 0)
        ctx = c
    }

    deinit { EVP_CIPHER_CTX_free(ctx) }

    /// Sets the key (16 octets, FIPS-197 order): one key schedule.
    @inline(__always)
    func setKey(_ key: UnsafePointer<UInt8>) {
        EVP_EncryptInit_ex(ctx, nil, nil, key, nil)
    }

    /// Encrypts one block with the current key; `input` and `output` are 16 octets and may be the same.
    @inline(__always)
    func encryptBlock(_ input: UnsafePointer<UInt8>, _ output: UnsafeMutablePointer<UInt8>) {
        var outLength: Int32 = 0
        EVP_EncryptUpdate(ctx, output, &outLength, input, 16)
    }

    /// Encrypts `count` independent blocks (ECB) in one call, which lets libcrypto pipeline them.
    @inline(__always)
    func encryptBlocks(_ input: UnsafePointer<UInt8>, _ output: UnsafeMutablePointer<UInt8>, count: Int) {
        var outLength: Int32 = 0
        EVP_EncryptUpdate(ctx, output, &outLength, input, Int32(16 * count))
    }

    /// AES-128(key, block), both and the result in FIPS-197 order (most significant octet first).
    func encrypt(key: [UInt8], block: [UInt8]) -> [UInt8] {
        precondition(key.count == 16 && block.count == 16)
        var out = [UInt8](repeating: 0, count: 16)
        key.withUnsafeBufferPointer { setKey($0.baseAddress!) }
        block.withUnsafeBufferPointer { b in out.withUnsafeMutableBufferPointer { encryptBlock(b.baseAddress!, $0.baseAddress!) } }
        return out
    }
}

/// AES-CMAC (RFC 4493, NIST SP 800-38B) with AES-128 through OpenSSL's EVP_MAC "CMAC".
final class AESCMAC {
    private let mac: OpaquePointer
    private let ctx: OpaquePointer

    init() {
        guard let m = EVP_MAC_fetch(nil, "CMAC", nil), let c = EVP_MAC_CTX_new(m) else {
            fatalError("libcrypto: no CMAC implementation")
        }
        mac = m
        ctx = c
    }

    deinit {
        EVP_MAC_CTX_free(ctx)
        EVP_MAC_free(mac)
    }

    /// AES-CMAC_key(message): key and the 16-octet result in FIPS-197 order, message as given (first octet first).
    func mac(key: [UInt8], message: [UInt8]) -> [UInt8] {
        precondition(key.count == 16)
        var out = [UInt8](repeating: 0, count: 16)
        var outLength = 0
        let ok: Bool = "cipher".withCString { name in
            "AES-128-CBC".withCString { cipher in
                var params = [
                    OSSL_PARAM_construct_utf8_string(name, UnsafeMutablePointer(mutating: cipher), 0),
                    OSSL_PARAM_construct_end(),
                ]
                return key.withUnsafeBufferPointer { k in
                    EVP_MAC_init(ctx, k.baseAddress, 16, &params) == 1
                }
            }
        }
        guard ok,
            message.withUnsafeBufferPointer({ EVP_MAC_update(ctx, $0.baseAddress, $0.count) }) == 1,
            EVP_MAC_final(ctx, &out, &outLength, 16) == 1, outLength == 16
        else { fatalError("libcrypto: CMAC failed") }
        return out
    }
}
