import BLECore
import BLESecurity
import Testing

@Suite struct SHA256Tests {
    /// FIPS 180-2 Appendix B examples and the NIST "million a" vector.
    @Test(arguments: [
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
        (
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
        ),
    ])
    func fipsVectors(_ input: String, _ digest: String) {
        #expect(SHA256.hexDigest(Array(input.utf8)) == digest)
    }

    @Test func millionA() {
        var h = SHA256()
        let chunk = [UInt8](repeating: 0x61, count: 1000)
        for _ in 0..<1000 { h.update(chunk) }
        #expect(hexString(h.finalize()) == "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test(arguments: [1, 55, 56, 63, 64, 65, 127])
    func streamingEqualsOneShot(_ split: Int) {
        let data = (0..<300).map { UInt8(truncatingIfNeeded: $0 * 13) }
        var h = SHA256()
        h.update(data[0..<split])
        h.update(data[split...])
        #expect(h.finalize() == SHA256.hash(data))
    }

    /// A copy continues on its own (the libcrypto context is copied on write), and non-contiguous sequences hash too.
    @Test func copiesAreIndependent() {
        var a = SHA256()
        a.update(Array("ab".utf8))
        var b = a
        a.update(Array("c".utf8))
        b.update(Array("c".utf8).lazy.map { $0 })
        #expect(a.finalize() == b.finalize())
        #expect(SHA256.hexDigest(Array("abc".utf8).lazy.map { $0 }) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }
}
