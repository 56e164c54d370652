import BLECore

/// The Security Manager's cryptographic toolbox (Core Spec Vol 3, Part H, 2.2).
///
/// Every argument and result is in WIRE ORDER (least significant octet first, as carried in SMP PDUs,
/// LL control PDUs and HCI); the spec's formulas are written most significant octet first, and each
/// function converts internally. Variable-length inputs (addresses, pairing PDUs) are wire order too.
/// Each call uses its own libcrypto context, so these are safe from any thread.
public enum SecurityFunction {
    /// Security function e: AES-128 of one block (Core Spec Vol 3, Part H, 2.2.1; Vol 2, Part E, 7.8.22 LE Encrypt).
    ///
    /// - Parameters: `key` and `plaintext` in wire order. - Returns: the encrypted block, wire order.
    public static func e(_ key: Key128, _ plaintext: Key128) -> Key128 {
        Key128(msbFirst: AESBlockCipher().encrypt(key: key.msbFirst, block: plaintext.msbFirst))!
    }

    /// Random address hash function ah (Core Spec Vol 3, Part H, 2.2.2): `e(k, 0…0 ‖ r) mod 2^24`.
    ///
    /// - Parameters: `irk` wire order; `prand` the 3 octets of `r`, wire order. - Returns: the 3-octet hash, wire order.
    public static func ah(irk: Key128, prand: [UInt8]) -> [UInt8] {
        precondition(prand.count == 3, "ah: prand is 3 octets")
        var block = [UInt8](repeating: 0, count: 16)
        block[0] = prand[0]; block[1] = prand[1]; block[2] = prand[2]
        return Array(e(irk, Key128(wire: block)!).bytes[0..<3])
    }

    /// Whether a resolvable private address was generated from `irk` (Core Spec Vol 6, Part B, 1.3.2.3;
    /// Vol 3, Part H, 2.2.2): hash = ah(IRK, prand).
    ///
    /// - Parameter address: 6 octets, wire order (the hash in octets 0–2, prand in 3–5, as in advertising PDUs
    ///   and HCI events). False if it is not 6 octets or not a resolvable private address (top two bits ≠ 01).
    public static func resolvesPrivateAddress(_ address: [UInt8], irk: Key128) -> Bool {
        guard address.count == 6, address[5] & 0xC0 == 0x40 else { return false }
        return ah(irk: irk, prand: Array(address[3..<6])) == Array(address[0..<3])
    }

    /// Confirm value generation function c1 for LE legacy pairing (Core Spec Vol 3, Part H, 2.2.3):
    /// `e(k, e(k, r ⊕ p1) ⊕ p2)` with `p1 = pres ‖ preq ‖ rat ‖ iat`, `p2 = 0³² ‖ ia ‖ ra`.
    ///
    /// - Parameters:
    ///   - k: the TK, wire order. - r: Mrand or Srand, wire order.
    ///   - preq, pres: the Pairing Request and Response PDUs, 7 octets each including the opcode, as on the wire.
    ///   - initiator, responder: the device addresses used in the connection (CONNECT_IND InitA/AdvA).
    public static func c1(
        k: Key128, r: Key128, preq: [UInt8], pres: [UInt8],
        initiator: PairingAddress, responder: PairingAddress
    ) -> Key128 {
        let (p1, p2) = c1Pads(preq: preq, pres: pres, initiator: initiator, responder: responder)
        let x = Key128(wire: zip(r.bytes, p1).map { $0 ^ $1 })!
        let y = e(k, x)
        return e(k, Key128(wire: zip(y.bytes, p2).map { $0 ^ $1 })!)
    }

    /// p1 and p2 of c1 in wire order.
    static func c1Pads(preq: [UInt8], pres: [UInt8], initiator: PairingAddress, responder: PairingAddress) -> ([UInt8], [UInt8]) {
        precondition(preq.count == 7 && pres.count == 7, "c1: pairing PDUs are 7 octets with the opcode")
        let p1 = [initiator.typeOctet, responder.typeOctet] + preq + pres
        let p2 = responder.bytes + initiator.bytes + [0, 0, 0, 0]
        return (p1, p2)
    }

    /// Key generation function s1 for LE legacy pairing (Core Spec Vol 3, Part H, 2.2.4):
    /// `e(k, r1' ‖ r2')` with the least significant 64 bits of each. STK = s1(TK, Srand, Mrand).
    ///
    /// - Parameters: all wire order. - Returns: wire order.
    public static func s1(k: Key128, r1: Key128, r2: Key128) -> Key128 {
        e(k, Key128(wire: r2.bytes[0..<8] + r1.bytes[0..<8])!)
    }

    /// AES-CMAC (RFC 4493; Core Spec Vol 3, Part H, 2.2.5) as RFC 4493 writes it: key and message
    /// first octet first (NOT wire order), the 16-octet tag first octet first.
    public static func aesCMAC(key: [UInt8], message: [UInt8]) -> [UInt8] {
        AESCMAC().mac(key: key, message: message)
    }

    /// CMAC over wire-order inputs: each part reversed to most significant first, concatenated, result back to wire order.
    static func cmacWire(_ key: Key128, _ parts: [[UInt8]]) -> Key128 {
        var m: [UInt8] = []
        for p in parts { m += p.reversed() }
        return Key128(msbFirst: AESCMAC().mac(key: key.msbFirst, message: m))!
    }

    /// LE Secure Connections confirm value generation function f4 (Core Spec Vol 3, Part H, 2.2.6):
    /// `AES-CMAC_X(U ‖ V ‖ Z)`.
    ///
    /// - Parameters: `u`, `v` 32-octet public key X coordinates (wire order, as in the Pairing Public Key PDU),
    ///   `x` the 128-bit nonce, `z` one octet (0 for Just Works/Numeric Comparison). - Returns: wire order.
    public static func f4(u: [UInt8], v: [UInt8], x: Key128, z: UInt8) -> Key128 {
        precondition(u.count == 32 && v.count == 32)
        return cmacWire(x, [u, v, [z]])
    }

    /// LE Secure Connections key generation function f5 (Core Spec Vol 3, Part H, 2.2.7):
    /// `T = AES-CMAC_SALT(W)`, MacKey = `AES-CMAC_T(0 ‖ "btle" ‖ N1 ‖ N2 ‖ A1 ‖ A2 ‖ 256)`, LTK the same with counter 1.
    ///
    /// - Parameters: `w` the 32-octet DHKey, wire order; `n1`, `n2` Na and Nb; `a1`, `a2` the initiator's and
    ///   responder's addresses. - Returns: (MacKey, LTK), wire order.
    public static func f5(w: [UInt8], n1: Key128, n2: Key128, a1: PairingAddress, a2: PairingAddress)
        -> (macKey: Key128, ltk: Key128)
    {
        precondition(w.count == 32)
        let salt = Key128(hex: "6C888391AAF5A53860370BDB5A6083BE")!
        let t = cmacWire(salt, [w])
        let keyID: [UInt8] = [0x65, 0x6C, 0x74, 0x62]  // "btle", wire order
        let length: [UInt8] = [0x00, 0x01]  // 256, wire order
        let macKey = cmacWire(t, [[0], keyID, n1.bytes, n2.bytes, a1.f5Octets, a2.f5Octets, length])
        let ltk = cmacWire(t, [[1], keyID, n1.bytes, n2.bytes, a1.f5Octets, a2.f5Octets, length])
        return (macKey, ltk)
    }

    /// LE Secure Connections check value generation function f6 (Core Spec Vol 3, Part H, 2.2.8):
    /// `AES-CMAC_W(N1 ‖ N2 ‖ R ‖ IOcap ‖ A1 ‖ A2)`. Ea = f6(MacKey, Na, Nb, rb, IOcapA, A, B);
    /// Eb = f6(MacKey, Nb, Na, ra, IOcapB, B, A).
    ///
    /// - Parameters: wire order; `ioCap` 3 octets = octets 1–3 of the Pairing Request (IOcapA) or Response
    ///   (IOcapB) PDU: IO capability, OOB flag, AuthReq. - Returns: wire order (as in the DHKey Check PDU).
    public static func f6(
        w: Key128, n1: Key128, n2: Key128, r: Key128, ioCap: [UInt8],
        a1: PairingAddress, a2: PairingAddress
    ) -> Key128 {
        precondition(ioCap.count == 3)
        return cmacWire(w, [n1.bytes, n2.bytes, r.bytes, ioCap, a1.f5Octets, a2.f5Octets])
    }

    /// LE Secure Connections numeric comparison value function g2 (Core Spec Vol 3, Part H, 2.2.9):
    /// `AES-CMAC_X(U ‖ V ‖ Y) mod 2^32`; the six digits shown are this value mod 10^6.
    ///
    /// - Parameters: `u`, `v` 32-octet X coordinates, wire order; `x`, `y` Na and Nb.
    public static func g2(u: [UInt8], v: [UInt8], x: Key128, y: Key128) -> UInt32 {
        precondition(u.count == 32 && v.count == 32)
        let b = cmacWire(x, [u, v, y.bytes]).bytes
        return UInt32(b[0]) | UInt32(b[1]) << 8 | UInt32(b[2]) << 16 | UInt32(b[3]) << 24
    }

    /// Link key conversion function h6 (Core Spec Vol 3, Part H, 2.2.10): `AES-CMAC_W(keyID)`.
    ///
    /// - Parameters: `w` wire order; `keyID` 4 octets as the spec writes them (`"lebr"` = 6C656272), first octet first.
    public static func h6(w: Key128, keyID: [UInt8]) -> Key128 {
        precondition(keyID.count == 4)
        return cmacWire(w, [keyID.reversed()])
    }

    /// Link key conversion function h7 (Core Spec Vol 3, Part H, 2.2.11): `AES-CMAC_SALT(W)`.
    ///
    /// - Parameters: `salt`, `w` wire order.
    public static func h7(salt: Key128, w: Key128) -> Key128 {
        cmacWire(salt, [w.bytes])
    }
}

/// A device address as the pairing functions use it (c1's ia/ra and iat/rat, f5's and f6's A1/A2).
public struct PairingAddress: Hashable, Sendable {
    /// The 6 octets, wire order (least significant first, as in CONNECT_IND, advertising PDUs and HCI).
    public var bytes: [UInt8]
    /// True for a random address (TxAdd/RxAdd = 1, HCI address type 1).
    public var isRandom: Bool

    /// - Parameter bytes: 6 octets, wire order.
    public init(_ bytes: [UInt8], isRandom: Bool) {
        precondition(bytes.count == 6, "a device address is 6 octets")
        self.bytes = bytes
        self.isRandom = isRandom
    }

    /// From `AA:BB:CC:DD:EE:FF` as addresses are printed (most significant first); nil unless 6 octets.
    public init?(text: String, isRandom: Bool) {
        guard let b = BLECore.bytes(fromHex: text), b.count == 6 else { return nil }
        self.init(b.reversed(), isRandom: isRandom)
    }

    var typeOctet: UInt8 { isRandom ? 1 : 0 }
    /// The 56-bit A1/A2 of f5/f6 in wire order: the address, then the type as the most significant octet.
    var f5Octets: [UInt8] { bytes + [typeOctet] }
}
