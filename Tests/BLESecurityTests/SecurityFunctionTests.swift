import BLECore
import BLESecurity
import Testing

/// Core Spec Vol 3, Part H, Appendix D sample data and 2.2.x examples (as quoted in google/bumble's
/// tests/smp_test.py), RFC 4493 for AES-CMAC. The spec prints values most significant octet first;
/// the API takes wire order, so every value goes through `wire`/`key` (reversal).
@Suite struct SecurityFunctionTests {
    @Test func key128Notation() {
        let k = Key128(hex: "0F241772AC270CAFEE654186F0A65D5F")!
        #expect(k.bytes.first == 0x5F && k.bytes.last == 0x0F)
        #expect(k.hex == "0F241772AC270CAFEE654186F0A65D5F")
        #expect(Key128(hex: "0x0f 24 17 72 ac 27 0c af ee 65 41 86 f0 a6 5d 5f") == k)
        #expect(Key128(hex: "0F24") == nil)
        #expect(Key128(123456).bytes.prefix(4) == [0x40, 0xE2, 0x01, 0x00])
        #expect(Key128(wire: k.bytes) == k && Key128(msbFirst: k.msbFirst) == k)
    }

    /// FIPS-197 Appendix C.1 through e (which takes wire order: reverse both).
    @Test func eIsAES128() {
        let k = Key128(msbFirst: raw("000102030405060708090a0b0c0d0e0f"))!
        let p = Key128(msbFirst: raw("00112233445566778899aabbccddeeff"))!
        #expect(SecurityFunction.e(k, p).msbFirst == raw("69c4e0d86a7b0430d8cdb78070b4c55a"))
    }

    /// Core Spec Vol 3, Part H, D.7 (ah) and 2.2.2.
    @Test func ah() {
        let irk = key("ec0234a357c8ad05341010a60a397d9b")
        #expect(SecurityFunction.ah(irk: irk, prand: wire("708194")) == wire("0dfbaa"))
        // The RPA 70:81:94:0D:FB:AA (printed most significant first) resolves; another hash does not.
        #expect(SecurityFunction.resolvesPrivateAddress(wire("7081940dfbaa"), irk: irk))
        #expect(!SecurityFunction.resolvesPrivateAddress(wire("7081940dfbab"), irk: irk))
        #expect(!SecurityFunction.resolvesPrivateAddress(wire("7081940dfbaa"), irk: key("00000000000000000000000000000001")))
        #expect(!SecurityFunction.resolvesPrivateAddress(wire("f081940dfbaa"), irk: irk))  // static random, not an RPA
    }

    /// Core Spec Vol 3, Part H, 2.2.3 example.
    @Test func c1() {
        let r = SecurityFunction.c1(
            k: .zero, r: key("5783D52156AD6F0E6388274EC6702EE0"),
            preq: wire("07071000000101"), pres: wire("05000800000302"),
            initiator: PairingAddress(wire("A1A2A3A4A5A6"), isRandom: true),
            responder: PairingAddress(wire("B1B2B3B4B5B6"), isRandom: false))
        #expect(r == key("1e1e3fef878988ead2a74dc5bef13b86"))
    }

    /// Core Spec Vol 3, Part H, 2.2.4 example.
    @Test func s1() {
        let r = SecurityFunction.s1(
            k: .zero, r1: key("000F0E0D0C0B0A091122334455667788"),
            r2: key("010203040506070899AABBCCDDEEFF00"))
        #expect(r == key("9a1fe1f0e8b0f49b5b4216ae796da062"))
    }

    /// RFC 4493 section 4 (Core Spec Vol 3, Part H, D.1): examples 1–4.
    @Test(arguments: [
        ("", "bb1d6929e95937287fa37d129b756746"),
        ("6bc1bee22e409f96e93d7e117393172a", "070a16b46b4d4144f79bdd9dd04a287c"),
        ("6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411", "dfa66747de9ae63030ca32611497c827"),
        (
            "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710",
            "51f0bebf7e3b9d92fc49741779363cfe"
        ),
    ])
    func aesCMAC(_ message: String, _ tag: String) {
        #expect(SecurityFunction.aesCMAC(key: raw("2b7e151628aed2a6abf7158809cf4f3c"), message: raw(message)) == raw(tag))
    }

    static let u = wire("20b003d2f297be2c5e2c83a7e9f9a5b9eff49111acf4fddbcc0301480e359de6")
    static let v = wire("55188b3d32f6bb9a900afcfbeed4e72a59cb9ac2f19d7cfb6b4fdd49f47fc5fd")
    static let na = key("d5cb8454d177733effffb2ec712baeab")
    static let nb = key("a6e8e7cc25a75f6e216583f7ff3dc4cf")
    static let a1 = PairingAddress(wire("56123737bfce"), isRandom: false)  // A1 = 0x00 561237 37bfce
    static let a2 = PairingAddress(wire("a713702dcfc1"), isRandom: false)  // A2 = 0x00 a71370 2dcfc1

    /// Core Spec Vol 3, Part H, D.2.
    @Test func f4() {
        #expect(SecurityFunction.f4(u: Self.u, v: Self.v, x: Self.na, z: 0) == key("f2c916f107a9bd1cf1eda1bea974872d"))
    }

    /// Core Spec Vol 3, Part H, D.3.
    @Test func f5() {
        let dhKey = wire("ec0234a357c8ad05341010a60a397d9b99796b13b4f866f1868d34f373bfa698")
        let (macKey, ltk) = SecurityFunction.f5(w: dhKey, n1: Self.na, n2: Self.nb, a1: Self.a1, a2: Self.a2)
        #expect(macKey == key("2965f176a1084a02fd3f6a20ce636e20"))
        #expect(ltk == key("6986791169d7cd23980522b594750a38"))
    }

    /// Core Spec Vol 3, Part H, D.4.
    @Test func f6() {
        let e = SecurityFunction.f6(
            w: key("2965f176a1084a02fd3f6a20ce636e20"), n1: Self.na, n2: Self.nb,
            r: key("12a3343bb453bb5408da42d20c2d0fc8"), ioCap: wire("010102"),
            a1: Self.a1, a2: Self.a2)
        #expect(e == key("e3c473989cd0e8c5d26c0b09da958f61"))
    }

    /// Core Spec Vol 3, Part H, D.5.
    @Test func g2() {
        let g = SecurityFunction.g2(u: Self.u, v: Self.v, x: Self.na, y: Self.nb)
        #expect(g == 0x2F9ED5BA)
        #expect(g % 1_000_000 == 0x2F9ED5BA % 1_000_000)
    }

    /// Core Spec Vol 3, Part H, D.6 (h6) and D.8 (h7).
    @Test func h6h7() {
        let w = key("ec0234a357c8ad05341010a60a397d9b")
        #expect(SecurityFunction.h6(w: w, keyID: raw("6c656272")) == key("2d9ae102e76dc91ce8d3a9e280b16399"))
        #expect(SecurityFunction.h7(salt: key("000000000000000000000000746D7031"), w: w) == key("fb173597c6a3c0ecd2998c2a75a57011"))
    }

    /// P-256 ECDH with the spec's key pairs (Core Spec Vol 3, Part H, 2.3.5.6.1 debug key = A; D.1 data set 1).
    @Test func ecdhDebugKey() {
        let bx = wire("1ea1f0f01faf1d9609592284f19e4c0047b58afd8615a69f559077b22faaa190")
        let by = wire("4c55f33e429dad377356703a9ab85160472d1130e28e36765f89aff915b1214a")
        let dh = SecureConnections.dhKey(privateKey: SecureConnections.debugPrivateKey, peerX: bx, peerY: by)
        #expect(dh == wire("ec0234a357c8ad05341010a60a397d9b99796b13b4f866f1868d34f373bfa698"))
        let privateB = wire("55188b3d32f6bb9a900afcfbeed4e72a59cb9ac2f19d7cfb6b4fdd49f47fc5fd")
        #expect(
            SecureConnections.dhKey(
                privateKey: privateB, peerX: SecureConnections.debugPublicKeyX,
                peerY: SecureConnections.debugPublicKeyY) == dh)
        // A point off the curve is refused.
        var badY = by
        badY[0] ^= 1
        #expect(SecureConnections.dhKey(privateKey: SecureConnections.debugPrivateKey, peerX: bx, peerY: badY) == nil)
    }
}
