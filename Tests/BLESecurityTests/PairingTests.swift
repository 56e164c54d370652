import BLECore
import BLESecurity
import Testing

/// Legacy pairing cracking on exchanges built from known TKs, and LE Secure Connections with the debug key
/// on exchanges built from the spec's sample values.
@Suite struct PairingTests {
    static let preq = raw("01 03 00 01 10 07 07")  // Pairing Request as on the wire (opcode first)
    static let pres = raw("02 00 00 05 10 07 07")
    static let initiator = PairingAddress(text: "04:EE:03:4A:8A:2F", isRandom: false)!
    static let responder = PairingAddress(text: "F6:77:3C:47:6D:50", isRandom: true)!
    static let mrand = key("5783D52156AD6F0E6388274EC6702EE0")
    static let srand = key("A6E8E7CC25A75F6E216583F7FF3DC4CF")

    static func exchange(tk: Key128) -> LegacyPairingExchange {
        func confirm(_ r: Key128) -> Key128 {
            SecurityFunction.c1(k: tk, r: r, preq: preq, pres: pres, initiator: initiator, responder: responder)
        }
        return LegacyPairingExchange(
            pairingRequest: preq, pairingResponse: pres, initiator: initiator, responder: responder,
            mrand: mrand, srand: srand, mconfirm: confirm(mrand), sconfirm: confirm(srand))
    }

    @Test func cracksJustWorks() throws {
        let keys = try #require(LegacyPairingCracker.crack(Self.exchange(tk: .zero)))
        #expect(keys.tk == .zero && keys.passkey == nil)
        #expect(keys.stk == SecurityFunction.s1(k: .zero, r1: Self.srand, r2: Self.mrand))
    }

    @Test(arguments: [123456, 999999, 1])
    func cracksPasskey(_ passkey: Int) throws {
        let tk = Key128(UInt64(passkey))
        let keys = try #require(LegacyPairingCracker.crack(Self.exchange(tk: tk)))
        #expect(keys.passkey == UInt32(passkey) && keys.tk == tk)
        #expect(keys.stk == SecurityFunction.s1(k: tk, r1: Self.srand, r2: Self.mrand))
    }

    /// A search over the first `limit` TKs: passkey 10 is the eleventh (TK 0 first).
    @Test func aBoundedSearch() {
        let x = Self.exchange(tk: Key128(10))
        let short = LegacyPairingCracker.search(x, limit: 10)
        #expect(short.keys == nil && short.tried == 10)
        let enough = LegacyPairingCracker.search(x, limit: 11)
        #expect(enough.keys?.passkey == 10 && enough.tried == 11)
        #expect(LegacyPairingCracker.search(x, limit: 0).tried == 0)
    }

    @Test func outOfBandTKIsNotFound() {
        #expect(LegacyPairingCracker.crack(Self.exchange(tk: key("00000000000000000000000000100000"))) == nil)
        // A wrong address type makes every candidate fail, as it should.
        var x = Self.exchange(tk: .zero)
        x.responder.isRandom = false
        #expect(LegacyPairingCracker.crack(x) == nil)
    }

    /// Initiator with private key B of the spec's data set, responder with the debug key: the derivation
    /// from the clear PDUs matches the one from both private keys, and both DHKey checks verify.
    @Test func secureConnectionsDebugKey() throws {
        let privateB = wire("55188b3d32f6bb9a900afcfbeed4e72a59cb9ac2f19d7cfb6b4fdd49f47fc5fd")
        let bx = wire("1ea1f0f01faf1d9609592284f19e4c0047b58afd8615a69f559077b22faaa190")
        let by = wire("4c55f33e429dad377356703a9ab85160472d1130e28e36765f89aff915b1214a")
        let dh = try #require(
            SecureConnections.dhKey(
                privateKey: privateB, peerX: SecureConnections.debugPublicKeyX,
                peerY: SecureConnections.debugPublicKeyY))
        let na = key("d5cb8454d177733effffb2ec712baeab"), nb = key("a6e8e7cc25a75f6e216583f7ff3dc4cf")
        let (macKey, ltk) = SecurityFunction.f5(w: dh, n1: na, n2: nb, a1: Self.initiator, a2: Self.responder)
        let ea = SecurityFunction.f6(
            w: macKey, n1: na, n2: nb, r: .zero, ioCap: Array(Self.preq[1...3]), a1: Self.initiator, a2: Self.responder)
        let eb = SecurityFunction.f6(
            w: macKey, n1: nb, n2: na, r: .zero, ioCap: Array(Self.pres[1...3]), a1: Self.responder, a2: Self.initiator)
        var x = SecureConnectionsExchange(
            pairingRequest: Self.preq, pairingResponse: Self.pres,
            initiator: Self.initiator, responder: Self.responder,
            initiatorPublicKeyX: bx, initiatorPublicKeyY: by,
            responderPublicKeyX: SecureConnections.debugPublicKeyX,
            responderPublicKeyY: SecureConnections.debugPublicKeyY,
            na: na, nb: nb, ea: ea, eb: eb)
        let keys = try #require(SecureConnections.deriveWithDebugKey(x))
        #expect(keys.dhKey == dh && keys.macKey == macKey && keys.ltk == ltk)
        #expect(keys.eaMatches == true && keys.ebMatches == true)
        // The debug key on the initiator's side works as well (roles swapped).
        swap(&x.initiatorPublicKeyX, &x.responderPublicKeyX)
        swap(&x.initiatorPublicKeyY, &x.responderPublicKeyY)
        #expect(SecureConnections.deriveWithDebugKey(x)?.dhKey == dh)
        // Neither side with the debug key: nothing to derive.
        x.initiatorPublicKeyX = bx; x.initiatorPublicKeyY = by
        #expect(SecureConnections.deriveWithDebugKey(x) == nil)
    }
}
