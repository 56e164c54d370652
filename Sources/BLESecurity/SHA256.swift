import BLECore
import COpenSSL

/// SHA-256 (FIPS 180-4) through libcrypto's EVP: one-shot `SHA256.hash(bytes)` or streaming
/// `var h = SHA256(); h.update(bytes); h.finalize()`. A copy of a hasher continues independently.
public struct SHA256: Sendable {
    /// Unchecked Sendable: `ctx` is changed only through `unique()`, which copies a box that another hasher shares
    /// (copy on write), so threads sharing a box only read it.
    private final class Box: @unchecked Sendable {
        let ctx: OpaquePointer
        init() {
            guard let c = EVP_MD_CTX_new(), EVP_DigestInit_ex(c, EVP_sha256(), nil) == 1 else {
                fatalError("libcrypto: cannot create a SHA-256 context")
            }
            ctx = c
        }
        init(copying other: Box) {
            guard let c = EVP_MD_CTX_new(), EVP_MD_CTX_copy_ex(c, other.ctx) == 1 else {
                fatalError("libcrypto: cannot copy a SHA-256 context")
            }
            ctx = c
        }
        deinit { EVP_MD_CTX_free(ctx) }
    }

    private var box = Box()

    public init() {}

    private mutating func unique() -> OpaquePointer {
        if !isKnownUniquelyReferenced(&box) { box = Box(copying: box) }
        return box.ctx
    }

    /// Adds bytes to the message.
    public mutating func update<C: Sequence>(_ bytes: C) where C.Element == UInt8 {
        let ctx = unique()
        let done: Void? = bytes.withContiguousStorageIfAvailable { b in
            _ = EVP_DigestUpdate(ctx, b.baseAddress, b.count)
        }
        if done == nil {
            let a = Array(bytes)
            a.withUnsafeBufferPointer { _ = EVP_DigestUpdate(ctx, $0.baseAddress, $0.count) }
        }
    }

    /// The 32-byte digest; the hasher should not be used afterwards.
    public mutating func finalize() -> [UInt8] {
        let ctx = unique()
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        EVP_DigestFinal_ex(ctx, &out, &length)
        return out
    }

    /// The digest of `bytes` in one call.
    public static func hash<C: Sequence>(_ bytes: C) -> [UInt8] where C.Element == UInt8 {
        var out = [UInt8](repeating: 0, count: 32)
        let run: (UnsafeBufferPointer<UInt8>) -> Void = { b in
            var length: UInt32 = 0
            _ = EVP_Digest(b.baseAddress, b.count, &out, &length, EVP_sha256(), nil)
        }
        if bytes.withContiguousStorageIfAvailable(run) == nil { Array(bytes).withUnsafeBufferPointer(run) }
        return out
    }

    /// The digest as lowercase hex.
    public static func hexDigest<C: Sequence>(_ bytes: C) -> String where C.Element == UInt8 {
        hexString(hash(bytes))
    }
}
