import BLECore
import BLEProtocols
import BLESecurity
import Testing

@testable import BLEAnalysis

/// LE Secure Connections Passkey Entry repeats the Pairing Confirm and Random exchange 20 times, and f5 takes the last
/// round's Na and Nb (Core Vol 3, Part H, 2.3.5.6.3). With a side on the debug key pair the analysis derives the LTK
/// itself; from the first round's Randoms the key decrypted nothing, and blescope blamed the capture (CQ-05 on the
/// bsniffhub passkey 725522 capture, corpus batch (7)).
@Suite struct PasskeyRoundsKeyTests {
    static let central = LLDeviceAddress(0xC0_11_22_33_44_55, isRandom: true)
    static let peripheral = LLDeviceAddress(0x04_EE_03_4A_8B_38, isRandom: false)
    /// Pairing Request and Response with Secure Connections (AuthReq bit 3): the request's IO capability KeyboardDisplay,
    /// the response's DisplayOnly, MITM asked by both.
    static let request: [UInt8] = [0x01, 0x04, 0x00, 0x0D, 0x10, 0x03, 0x03]
    static let response: [UInt8] = [0x02, 0x00, 0x00, 0x0D, 0x10, 0x03, 0x03]

    /// A distinct 16-octet value per round and side.
    static func nonce(round: Int, side: Int) -> [UInt8] { (0..<16).map { UInt8(truncatingIfNeeded: round &* 31 &+ side &* 7 &+ $0) } }

    /// The store after a pairing of `rounds` Confirm/Random rounds where both sides send the debug public key (a valid
    /// P-256 point, so ECDH runs), as an air capture shows it.
    static func store(rounds: Int) throws -> LinkKeyStore {
        let store = LinkKeyStore(LinkKeyMaterial())
        func send(_ bytes: [UInt8], fromCentral: Bool, frame: Int) throws {
            let pdu = try bytes.withUnsafeBytes { raw in
                var reader = ByteReader(raw)
                return try SMPPDU(parsing: &reader)
            }
            bytes.withUnsafeBytes { raw in
                store.smp(
                    pdu, raw: raw, handle: 0x40, centralToPeripheral: fromCentral, frame: frame, central: Self.central.value,
                    peripheral: Self.peripheral.value)
            }
        }
        var frame = 1
        func next() -> Int { frame += 1; return frame }
        try send(request, fromCentral: true, frame: next())
        try send(response, fromCentral: false, frame: next())
        let key = [0x0C] + SecureConnections.debugPublicKeyX + SecureConnections.debugPublicKeyY
        try send(key, fromCentral: true, frame: next())
        try send(key, fromCentral: false, frame: next())
        for round in 1...rounds {
            try send([0x03] + [UInt8](repeating: UInt8(round), count: 16), fromCentral: true, frame: next())
            try send([0x03] + [UInt8](repeating: UInt8(round + 100), count: 16), fromCentral: false, frame: next())
            try send([0x04] + nonce(round: round, side: 0), fromCentral: true, frame: next())
            try send([0x04] + nonce(round: round, side: 1), fromCentral: false, frame: next())
        }
        return store
    }

    /// The LTK f5 gives for the Randoms of `round`, computed apart from the store.
    static func ltk(round: Int) throws -> [UInt8] {
        let exchange = SecureConnectionsExchange(
            pairingRequest: request, pairingResponse: response,
            initiator: PairingAddress(central.bytes, isRandom: true), responder: PairingAddress(peripheral.bytes, isRandom: false),
            initiatorPublicKeyX: SecureConnections.debugPublicKeyX, initiatorPublicKeyY: SecureConnections.debugPublicKeyY,
            responderPublicKeyX: SecureConnections.debugPublicKeyX, responderPublicKeyY: SecureConnections.debugPublicKeyY,
            na: try #require(Key128(wire: nonce(round: round, side: 0))), nb: try #require(Key128(wire: nonce(round: round, side: 1))),
            ea: nil, eb: nil)
        return try #require(SecureConnections.deriveWithDebugKey(exchange)).ltk.bytes
    }

    static func derived(_ store: LinkKeyStore) -> [UInt8]? {
        store.candidates(handle: 0x40, ediv: 0, rand: 0, central: central, peripheral: peripheral).first?.ltk
    }

    @Test func passkeyEntryTakesTheTwentiethRoundsRandoms() throws {
        let key = try #require(Self.derived(try Self.store(rounds: 20)))
        #expect(key == (try Self.ltk(round: 20)))
        #expect(key != (try Self.ltk(round: 1)))
    }

    /// The near miss: Just Works and Numeric Comparison have one round, whose Randoms f5 takes.
    @Test func aOneRoundPairingKeepsItsRandoms() throws {
        #expect(Self.derived(try Self.store(rounds: 1)) == (try Self.ltk(round: 1)))
    }
}
