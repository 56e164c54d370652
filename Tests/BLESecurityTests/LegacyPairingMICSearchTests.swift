import BLECore
import BLESecurity
import Testing

/// The TK search of a legacy pairing against a MIC, on PDUs sealed by `LLCipher` (libcrypto's AES-CCM, itself held to
/// the spec's sample packets in `LinkLayerEncryptionTests`) under the session key of a known TK: the search's own
/// CCM check must agree with it for every length, header and nonce.
@Suite struct LegacyPairingMICSearchTests {
    static let mrand = key("5783D52156AD6F0E6388274EC6702EE0")
    static let srand = key("A6E8E7CC25A75F6E216583F7FF3DC4CF")
    // LL_ENC_REQ / LL_ENC_RSP fields as carried (the spec's sample data set, Vol 6, Part C, 1).
    static let skdm = wire("ACBDCEDFE0F10213"), skds = wire("0213243546576879")
    static let ivm = wire("BADCAB24"), ivs = wire("DEAFBABE")

    static func search() -> LegacyPairingMICSearch {
        LegacyPairingMICSearch(mrand: mrand, srand: srand, skdm: skdm, skds: skds, ivm: ivm, ivs: ivs)
    }

    /// The link's cipher for a TK, built the long way: STK = s1(TK, Srand, Mrand), SK = e(STK, SKD).
    static func cipher(tk: UInt64) -> LLCipher {
        let stk = SecurityFunction.s1(k: Key128(tk), r1: srand, r2: mrand)
        return LLCipher(
            sessionKey: LinkLayerEncryption.sessionKey(ltk: stk, skdm: skdm, skds: skds), iv: LinkLayerEncryption.iv(ivm: ivm, ivs: ivs))
    }

    static func sealed(tk: UInt64, header0: UInt8, _ plaintext: [UInt8], counter: UInt64 = 0, central: Bool = true) -> SealedLLPDU {
        SealedLLPDU(
            header0: header0,
            payload: cipher(tk: tk).encrypt(header0: header0, plaintext: plaintext, packetCounter: counter, centralToPeripheral: central),
            packetCounter: counter, centralToPeripheral: central)
    }

    /// LL_START_ENC_RSP (LLID 3, one octet 0x06), the first encrypted PDU of a link.
    static let startEncRsp: [UInt8] = [0x06]

    @Test func justWorksIsTheFirstCandidate() throws {
        let outcome = Self.search().search(pdus: [Self.sealed(tk: 0, header0: 0x03, Self.startEncRsp)])
        let keys = try #require(outcome.keys)
        #expect(outcome.tried == 1 && outcome.candidate == 0 && keys.passkey == nil && keys.tk == .zero)
        #expect(keys.stk == SecurityFunction.s1(k: .zero, r1: Self.srand, r2: Self.mrand))
    }

    /// Passkeys are tried in order after TK 0: passkey n is the (n + 1)th candidate.
    @Test func passkeyIsFoundInOrder() throws {
        let outcome = Self.search().search(pdus: [Self.sealed(tk: 123_456, header0: 0x07, Self.startEncRsp, central: false)])
        let keys = try #require(outcome.keys)
        #expect(keys.passkey == 123_456 && outcome.tried == 123_457 && keys.tk == Key128(123_456))
        let session = Self.search().sessionKey(keys)
        let expected = LinkLayerEncryption.sessionKey(
            ltk: SecurityFunction.s1(k: Key128(123_456), r1: Self.srand, r2: Self.mrand), skdm: Self.skdm, skds: Self.skds)
        #expect(session == expected)
    }

    /// Payloads of every block layout (1, a block less one, a block, a block and one, LL 27 and 251 octets), headers
    /// with NESN/SN/MD set (not authenticated) and counters other than 0, in both directions.
    @Test(arguments: [1, 15, 16, 17, 27, 251])
    func agreesWithLibcryptoOnEveryLength(_ length: Int) throws {
        let plaintext = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 5) }
        for (header0, counter, central) in [(UInt8(0x02), UInt64(0), true), (0x1E, 5, false), (0x01, 0x7F_FFFF_FFFF, true)] {
            let pdu = Self.sealed(tk: 42, header0: header0, plaintext, counter: counter, central: central)
            let outcome = Self.search().search(limit: 100, pdus: [pdu])
            #expect(outcome.keys?.passkey == 42 && outcome.tried == 43, "length \(length), header \(header0), counter \(counter)")
        }
    }

    /// A flipped bit anywhere (ciphertext or MIC), the other direction's nonce or another counter: no candidate checks.
    @Test func aDamagedPDUOrWrongNonceChecksNothing() {
        let good = Self.sealed(tk: 7, header0: 0x03, Self.startEncRsp)
        var damaged: [SealedLLPDU] = []
        for bit in [0, 8, 39] {
            var d = good
            d.payload[bit / 8] ^= 1 << (bit % 8)
            damaged.append(d)
        }
        var otherDirection = good
        otherDirection.centralToPeripheral = false
        var otherCounter = good
        otherCounter.packetCounter = 1
        var otherHeader = good
        otherHeader.header0 = 0x02  // LLID is authenticated
        for pdu in damaged + [otherDirection, otherCounter, otherHeader] {
            let outcome = Self.search().search(limit: 1000, pdus: [pdu])
            #expect(outcome.keys == nil && outcome.tried == 1000 && outcome.candidate == 1000)
        }
    }

    /// With the direction unknown, the PDU is offered once per direction; the outcome says which held.
    @Test func eitherDirection() throws {
        let pdu = Self.sealed(tk: 3, header0: 0x03, Self.startEncRsp, central: false)
        var guess = pdu
        guess.centralToPeripheral = true
        #expect(Self.search().search(limit: 10, pdus: [guess]).keys == nil)
        let outcome = Self.search().search(limit: 10, pdus: [guess, pdu])
        #expect(outcome.keys?.passkey == 3 && outcome.pdu == 1)
    }

    /// `accept` turning a winner down sends the search on; `from` resumes after a winner; `limit` bounds the work.
    @Test func acceptFromAndLimit() {
        let pdu = Self.sealed(tk: 500, header0: 0x03, Self.startEncRsp)
        var asked: [UInt32?] = []
        let refused = Self.search().search(limit: 2000, pdus: [pdu]) {
            asked.append($0.passkey); return false
        }
        #expect(asked == [500] && refused.keys == nil && refused.tried == 2000)
        #expect(Self.search().search(from: 501, limit: 2000, pdus: [pdu]).keys == nil)
        #expect(Self.search().search(from: 400, limit: 100, pdus: [pdu]).keys == nil)
        let found = Self.search().search(from: 400, limit: 101, pdus: [pdu])
        #expect(found.keys?.passkey == 500 && found.tried == 101)
        // Past the last passkey there is nothing to try.
        #expect(Self.search().search(from: 999_999, limit: 10, pdus: [pdu]).tried == 1)
        #expect(Self.search().search(from: 0, limit: 0, pdus: [pdu]).tried == 0)
        // A PDU with no room for a MIC checks nothing.
        #expect(
            Self.search().search(pdus: [SealedLLPDU(header0: 3, payload: [1, 2, 3, 4], packetCounter: 0, centralToPeripheral: true)]).tried
                == 0)
    }
}
