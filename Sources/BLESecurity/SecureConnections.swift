import BLECore
import COpenSSL

/// LE Secure Connections pairing seen in a capture (Core Spec Vol 3, Part H, 2.3.5.6): what can be
/// derived without either device's secret, i.e. when one side used the debug key pair (2.3.5.6.1).
public enum SecureConnections {
    /// The debug private key, wire order (Core Spec Vol 3, Part H, 2.3.5.6.1:
    /// 0x3f49f6d4 a3c55f38 74c9b3e3 d2103f50 4aff607b eb40b799 5899b8a6 cd3c1abd).
    public static let debugPrivateKey: [UInt8] =
        BLECore.bytes(fromHex: "3f49f6d4a3c55f3874c9b3e3d2103f504aff607beb40b7995899b8a6cd3c1abd")!.reversed()
    /// The debug public key's X and Y, wire order, as a Pairing Public Key PDU carries them (2.3.5.6.1).
    public static let debugPublicKeyX: [UInt8] =
        BLECore.bytes(fromHex: "20b003d2f297be2c5e2c83a7e9f9a5b9eff49111acf4fddbcc0301480e359de6")!.reversed()
    public static let debugPublicKeyY: [UInt8] =
        BLECore.bytes(fromHex: "dc809c49652aeb6d63329abf5a52155c766345c28fed3024741c8ed01589d28b")!.reversed()

    /// Whether a Pairing Public Key (X, Y wire order, 32 octets each) is the debug public key.
    public static func isDebugPublicKey(x: [UInt8], y: [UInt8]) -> Bool {
        x == debugPublicKeyX && y == debugPublicKeyY
    }

    /// Whether a Pairing Public Key (X, Y wire order, 32 octets each) is a point on P-256 (Core Spec Vol 3, Part H,
    /// 2.3.5.6.1: a device checks the peer's key before using it; the Invalid Curve attack sends one that is not).
    public static func isOnCurve(x: [UInt8], y: [UInt8]) -> Bool {
        guard x.count == 32, y.count == 32, let key = makeKey(publicPoint: [4] + x.reversed() + y.reversed(), privateKey: nil) else {
            return false
        }
        EVP_PKEY_free(key)
        return true
    }

    /// P-256 ECDH (Core Spec Vol 3, Part H, 2.3.5.6.1; via libcrypto's EVP_PKEY): the DHKey, i.e. the X coordinate
    /// of privateKey·(peerX, peerY).
    ///
    /// - Parameters: `privateKey` 32 octets, `peerX`, `peerY` 32 octets each, all wire order.
    /// - Returns: the 32-octet DHKey in wire order (as f5's W takes it); nil when the peer's key is not
    ///   a point on P-256 or the private key is out of range.
    public static func dhKey(privateKey: [UInt8], peerX: [UInt8], peerY: [UInt8]) -> [UInt8]? {
        guard privateKey.count == 32, peerX.count == 32, peerY.count == 32 else { return nil }
        let ownPublic = [UInt8(4)] + debugPublicKeyX.reversed() + debugPublicKeyY.reversed()
        let peerPublic = [UInt8(4)] + peerX.reversed() + peerY.reversed()
        guard let own = makeKey(publicPoint: privateKey == debugPrivateKey ? ownPublic : nil, privateKey: privateKey),
            let peer = makeKey(publicPoint: peerPublic, privateKey: nil)
        else { return nil }
        defer { EVP_PKEY_free(own); EVP_PKEY_free(peer) }
        guard let ctx = EVP_PKEY_CTX_new(own, nil) else { return nil }
        defer { EVP_PKEY_CTX_free(ctx) }
        var secret = [UInt8](repeating: 0, count: 32)
        var length = 32
        guard EVP_PKEY_derive_init(ctx) == 1, EVP_PKEY_derive_set_peer(ctx, peer) == 1,
            EVP_PKEY_derive(ctx, &secret, &length) == 1, length == 32
        else { return nil }
        return secret.reversed()
    }

    /// An EC P-256 EVP_PKEY from an uncompressed point (04 ‖ X ‖ Y, big-endian) and/or a private scalar (wire order).
    private static func makeKey(publicPoint: [UInt8]?, privateKey: [UInt8]?) -> OpaquePointer? {
        // OSSL_PARAM_BLD keeps pointers to the names, strings and octets until OSSL_PARAM_BLD_to_param: all of them stay
        // alive inside these closures.
        let point = publicPoint ?? []
        let names = Array("group\0pub\0priv\0prime256v1\0".utf8CString)
        return point.withUnsafeBufferPointer { pointBuffer in
            names.withUnsafeBufferPointer { n -> OpaquePointer? in
                let groupKey = n.baseAddress!, pubKey = groupKey + 6, privKey = groupKey + 10, groupName = groupKey + 15
                guard let bld = OSSL_PARAM_BLD_new() else { return nil }
                defer { OSSL_PARAM_BLD_free(bld) }
                var bn: OpaquePointer? = nil
                defer { if let bn { BN_clear_free(bn) } }
                guard OSSL_PARAM_BLD_push_utf8_string(bld, groupKey, groupName, 0) == 1 else { return nil }
                if publicPoint != nil {
                    guard OSSL_PARAM_BLD_push_octet_string(bld, pubKey, pointBuffer.baseAddress, pointBuffer.count) == 1 else { return nil }
                }
                if let privateKey {
                    let be = Array(privateKey.reversed())
                    bn = BN_bin2bn(be, 32, nil)
                    guard let bn, OSSL_PARAM_BLD_push_BN(bld, privKey, bn) == 1 else { return nil }
                }
                guard let params = OSSL_PARAM_BLD_to_param(bld) else { return nil }
                defer { OSSL_PARAM_free(params) }
                guard let ctx = EVP_PKEY_CTX_new_from_name(nil, "EC", nil) else { return nil }
                defer { EVP_PKEY_CTX_free(ctx) }
                // EVP_PKEY_KEYPAIR (0x87) or EVP_PKEY_PUBLIC_KEY (0x86): macros Swift does not import.
                let selection: Int32 = privateKey != nil ? 0x87 : 0x86
                var key: OpaquePointer? = nil
                guard EVP_PKEY_fromdata_init(ctx) == 1, EVP_PKEY_fromdata(ctx, &key, selection, params) == 1, let key else { return nil }
                // The peer's point must be on the curve.
                if privateKey == nil {
                    guard let check = EVP_PKEY_CTX_new(key, nil) else { EVP_PKEY_free(key); return nil }
                    defer { EVP_PKEY_CTX_free(check) }
                    guard EVP_PKEY_public_check(check) == 1 else { EVP_PKEY_free(key); return nil }
                }
                return key
            }
        }
    }
}

/// What an LE Secure Connections pairing exchanged in the clear (Core Spec Vol 3, Part H, 2.3.5.6, 3.5.6–3.5.7).
public struct SecureConnectionsExchange: Hashable, Sendable {
    /// Pairing Request and Response PDUs, 7 octets each including the opcode (their octets 1–3 are IOcapA/IOcapB).
    public var pairingRequest: [UInt8]
    public var pairingResponse: [UInt8]
    /// Initiator (A) and responder (B) addresses used in the connection.
    public var initiator: PairingAddress
    public var responder: PairingAddress
    /// The Pairing Public Key PDUs' X and Y (32 octets each, wire order): initiator's (PKa) and responder's (PKb).
    public var initiatorPublicKeyX: [UInt8]
    public var initiatorPublicKeyY: [UInt8]
    public var responderPublicKeyX: [UInt8]
    public var responderPublicKeyY: [UInt8]
    /// Na and Nb from the Pairing Random PDUs, wire order.
    public var na: Key128
    public var nb: Key128
    /// Ea and Eb from the Pairing DHKey Check PDUs, if seen.
    public var ea: Key128?
    public var eb: Key128?
    /// ra and rb of f6: zero for Just Works and Numeric Comparison; the passkey (as a 128-bit value) for passkey
    /// entry; the peer's OOB random for OOB (Core Spec Vol 3, Part H, 2.3.5.6.5).
    public var ra: Key128
    public var rb: Key128

    public init(
        pairingRequest: [UInt8], pairingResponse: [UInt8], initiator: PairingAddress, responder: PairingAddress,
        initiatorPublicKeyX: [UInt8], initiatorPublicKeyY: [UInt8],
        responderPublicKeyX: [UInt8], responderPublicKeyY: [UInt8],
        na: Key128, nb: Key128, ea: Key128? = nil, eb: Key128? = nil, ra: Key128 = .zero, rb: Key128 = .zero
    ) {
        self.pairingRequest = pairingRequest
        self.pairingResponse = pairingResponse
        self.initiator = initiator
        self.responder = responder
        self.initiatorPublicKeyX = initiatorPublicKeyX
        self.initiatorPublicKeyY = initiatorPublicKeyY
        self.responderPublicKeyX = responderPublicKeyX
        self.responderPublicKeyY = responderPublicKeyY
        self.na = na
        self.nb = nb
        self.ea = ea
        self.eb = eb
        self.ra = ra
        self.rb = rb
    }
}

/// Keys derived from an LE Secure Connections pairing, with the DHKey Check verdicts.
public struct SecureConnectionsKeys: Hashable, Sendable {
    /// DHKey (32 octets), MacKey and LTK, wire order.
    public var dhKey: [UInt8]
    public var macKey: Key128
    public var ltk: Key128
    /// Ea/Eb recomputed with f6, and whether they equal the PDUs' values (nil when the PDU was not given).
    public var expectedEa: Key128
    public var expectedEb: Key128
    public var eaMatches: Bool?
    public var ebMatches: Bool?
}

extension SecureConnections {
    /// Derives DHKey, MacKey and LTK when either side's public key is the debug key
    /// (DHKey = ECDH with the debug private key and the other side's public key; (MacKey, LTK) = f5(DHKey, Na, Nb, A, B),
    /// Core Spec Vol 3, Part H, 2.3.5.6.5), then checks Ea = f6(MacKey, Na, Nb, rb, IOcapA, A, B) and
    /// Eb = f6(MacKey, Nb, Na, ra, IOcapB, B, A).
    ///
    /// - Returns: nil when neither public key is the debug key or the other key is not a valid P-256 point.
    public static func deriveWithDebugKey(_ x: SecureConnectionsExchange) -> SecureConnectionsKeys? {
        let dh: [UInt8]?
        if isDebugPublicKey(x: x.responderPublicKeyX, y: x.responderPublicKeyY) {
            dh = dhKey(privateKey: debugPrivateKey, peerX: x.initiatorPublicKeyX, peerY: x.initiatorPublicKeyY)
        } else if isDebugPublicKey(x: x.initiatorPublicKeyX, y: x.initiatorPublicKeyY) {
            dh = dhKey(privateKey: debugPrivateKey, peerX: x.responderPublicKeyX, peerY: x.responderPublicKeyY)
        } else {
            return nil
        }
        guard let dh, x.pairingRequest.count == 7, x.pairingResponse.count == 7 else { return nil }
        return derive(dhKey: dh, x)
    }

    /// f5 and f6 from a known DHKey (32 octets, wire order); see `deriveWithDebugKey`.
    public static func derive(dhKey dh: [UInt8], _ x: SecureConnectionsExchange) -> SecureConnectionsKeys {
        let (macKey, ltk) = SecurityFunction.f5(w: dh, n1: x.na, n2: x.nb, a1: x.initiator, a2: x.responder)
        let ioCapA = Array(x.pairingRequest[1...3])
        let ioCapB = Array(x.pairingResponse[1...3])
        let ea = SecurityFunction.f6(w: macKey, n1: x.na, n2: x.nb, r: x.rb, ioCap: ioCapA, a1: x.initiator, a2: x.responder)
        let eb = SecurityFunction.f6(w: macKey, n1: x.nb, n2: x.na, r: x.ra, ioCap: ioCapB, a1: x.responder, a2: x.initiator)
        return SecureConnectionsKeys(
            dhKey: dh, macKey: macKey, ltk: ltk, expectedEa: ea, expectedEb: eb,
            eaMatches: x.ea.map { $0 == ea }, ebMatches: x.eb.map { $0 == eb })
    }
}
