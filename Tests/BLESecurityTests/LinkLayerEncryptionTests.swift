import BLECore
import BLESecurity
import Testing

/// Core Spec Vol 6, Part C, 1 (encryption sample data): LTK, SKDm/SKDs, IVm/IVs → SK, and the four
/// sample packets with their MICs (1.2: LL_START_ENC_RSP both ways, then one 27-octet data PDU each way).
@Suite struct LinkLayerEncryptionTests {
    static let ltk = key("4C68384139F574D836BCF34E9DFB01BF")
    static let skdm = wire("ACBDCEDFE0F10213")  // LL_ENC_REQ carries 13 02 F1 E0 DF CE BD AC
    static let skds = wire("0213243546576879")
    static let ivm = wire("BADCAB24")
    static let ivs = wire("DEAFBABE")
    static let sk = key("99AD1B5226A37E3E058E3B8E27C2C666")

    static var cipher: LLCipher { LLCipher(sessionKey: sk, iv: LinkLayerEncryption.iv(ivm: ivm, ivs: ivs)) }

    /// (header0, plaintext, ciphertext + MIC as sent, packet counter, central → peripheral)
    static let packets: [(UInt8, [UInt8], [UInt8], UInt64, Bool)] = [
        (0x0F, [0x06], raw("9FCDA7F448"), 0, true),
        (0x07, [0x06], raw("A34C13A415"), 0, false),
        (
            0x0E, raw("1700636465666768696A6B6C6D6E6F7071313233343536373839 30"),
            raw("7A70D66415226DF26B17839A060405596BD6564F796B5B9CE6FF32F75A6D33"), 1, true
        ),
        (
            0x06, raw("17003736353433323130414243444546474849 4A4B4C4D4E4F5051"),
            raw("F38881E7BD94C9C369B9A66846DD4786AA8C39CE540D0DAE3ADCDF89B96088"), 1, false
        ),
    ]

    @Test func sessionKeyAndIV() {
        #expect(LinkLayerEncryption.sessionKey(ltk: Self.ltk, skdm: Self.skdm, skds: Self.skds) == Self.sk)
        #expect(Self.sk.bytes.first == 0x66)  // wire order: least significant octet first
        #expect(LinkLayerEncryption.iv(ivm: Self.ivm, ivs: Self.ivs) == raw("24ABDCBABEBAAFDE"))
        // Swapping the halves gives another key: the byte order matters.
        #expect(LinkLayerEncryption.sessionKey(ltk: Self.ltk, skdm: Self.skds, skds: Self.skdm) != Self.sk)
    }

    @Test func samplePacketsEncrypt() {
        let c = Self.cipher
        for (h, plain, air, counter, c2p) in Self.packets {
            #expect(c.encrypt(header0: h, plaintext: plain, packetCounter: counter, centralToPeripheral: c2p) == air)
        }
    }

    @Test func samplePacketsDecrypt() {
        let c = Self.cipher
        for (h, plain, air, counter, c2p) in Self.packets {
            #expect(c.decrypt(header0: h, payload: air, packetCounter: counter, centralToPeripheral: c2p) == plain)
            // NESN, SN and MD are not authenticated: a retransmission with other bits still checks.
            #expect(c.decrypt(header0: h ^ 0x1C, payload: air, packetCounter: counter, centralToPeripheral: c2p) == plain)
        }
    }

    @Test func failures() {
        let c = Self.cipher
        let (h, _, air, counter, c2p) = Self.packets[2]
        for bit in [0, 7, 8 * 26 + 3, 8 * 27, 8 * 30 + 7] {  // ciphertext and MIC bits
            var flipped = air
            flipped[bit / 8] ^= 1 << (bit % 8)
            #expect(c.decrypt(header0: h, payload: flipped, packetCounter: counter, centralToPeripheral: c2p) == nil)
        }
        #expect(c.decrypt(header0: h, payload: air, packetCounter: counter + 1, centralToPeripheral: c2p) == nil)
        #expect(c.decrypt(header0: h, payload: air, packetCounter: counter, centralToPeripheral: !c2p) == nil)
        #expect(c.decrypt(header0: 0x0D, payload: air, packetCounter: counter, centralToPeripheral: c2p) == nil)  // LLID 1
        #expect(c.decrypt(header0: h, payload: Array(air.prefix(4)), packetCounter: counter, centralToPeripheral: c2p) == nil)
        // After failures the cipher still works, and the output buffer is reused.
        var out: [UInt8] = [1, 2, 3]
        let ok = air.withUnsafeBytes { c.decrypt(header0: h, payload: $0, packetCounter: counter, centralToPeripheral: c2p, into: &out) }
        #expect(ok && out == Self.packets[2].1)
    }

    @Test(arguments: [1, 27, 251])
    func roundTrip(_ length: Int) {
        var rng = SystemRandomNumberGenerator()
        let seed = UInt64.random(in: 0...UInt64.max, using: &rng)
        print("LLCipher round trip seed \(seed)")
        var state = seed
        func next() -> UInt8 { state = state &* 6364136223846793005 &+ 1442695040888963407; return UInt8(truncatingIfNeeded: state >> 33) }
        let c = Self.cipher
        let plain = (0..<length).map { _ in next() }
        for counter: UInt64 in [0, 1, 0x7F_FFFF_FFFF] {
            for c2p in [true, false] {
                let air = c.encrypt(header0: 0x02, plaintext: plain, packetCounter: counter, centralToPeripheral: c2p)
                #expect(air.count == length + 4)
                #expect(c.decrypt(header0: 0x02, payload: air, packetCounter: counter, centralToPeripheral: c2p) == plain)
                #expect(c.decrypt(header0: 0x02, payload: air, packetCounter: counter ^ 1, centralToPeripheral: c2p) == nil)
            }
        }
    }
}
