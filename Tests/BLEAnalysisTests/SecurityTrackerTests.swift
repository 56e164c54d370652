import BLEAnalysisTestSupport
import BLECore
import BLEProtocols
import Testing

@testable import BLEAnalysis

/// The pairing and encryption of one connection (Core Spec Vol 3, Part H; Vol 4, Part E, 7.7.8, 7.7.65.5, 7.8.25–26),
/// fed SMP PDUs decoded from their wire bytes as the analyzer gets them. The bytes are written from the spec's PDU
/// layouts (Part H, 3.5–3.6: code, then the fields in order, little-endian); the expected phases follow Part H, 2.1.
@Suite struct SecurityTrackerTests {
    static func feed(_ bytes: [UInt8], by sender: EvidenceEvent.Sender, into t: inout SecurityTracker) throws -> SecurityTracker.Output? {
        t.feed(smp: try SMPPDU(bytes: bytes), sender: sender, frame: 1)
    }

    /// Pairing Request/Response: IO NoInputNoOutput (0x03), no OOB, AuthReq Bonding|SC (0x09), 16-byte keys, EncKey|IdKey
    /// (0x03) each way.
    static let pairingRequest: [UInt8] = [0x01, 0x03, 0x00, 0x09, 0x10, 0x03, 0x03]
    static let pairingResponse: [UInt8] = [0x02, 0x03, 0x00, 0x09, 0x10, 0x03, 0x03]
    static func value(_ code: UInt8, _ byte: UInt8, count: Int = 16) -> [UInt8] { [code] + Array(repeating: byte, count: count) }

    @Test func aSecureConnectionsPairingGoesThroughItsPhases() throws {
        var t = SecurityTracker()
        // Security Request 0x0B from the peripheral, AuthReq Bonding|SC.
        #expect(try Self.feed([0x0B, 0x09], by: .peer, into: &t) == .securityRequested(by: .peer))
        #expect(t.pairing == .securityRequested)
        #expect(
            try Self.feed(Self.pairingRequest, by: .local, into: &t)
                == .pairingRequested(by: .local, authReq: [.bonding, .secureConnections]))
        #expect(t.pairing == .featureExchange)
        #expect(
            try Self.feed(Self.pairingResponse, by: .peer, into: &t)
                == .pairingAccepted(by: .peer, authReq: [.bonding, .secureConnections]))
        #expect(t.pairing == .keyGeneration)
        // Public keys (0x0C, 64 bytes), confirm (0x03), randoms (0x04), DHKey checks (0x0D): phase 2, nothing to say.
        for (code, sender) in [
            (UInt8(0x0C), EvidenceEvent.Sender.local), (0x0C, .peer), (0x03, .peer), (0x04, .local), (0x04, .peer), (0x0D, .local),
            (0x0D, .peer),
        ] {
            #expect(try Self.feed(Self.value(code, 0x5A, count: code == 0x0C ? 64 : 16), by: sender, into: &t) == nil)
        }
        #expect(t.pairing == .keyGeneration)
        // Phase 3: the peer's IdKey is Identity Information (0x08, IRK) then Identity Address Information (0x09).
        #expect(try Self.feed(Self.value(0x08, 0x11), by: .peer, into: &t) == .keyDistributed(by: .peer, .idKey))
        #expect(t.pairing == .keyDistribution && t.distributed[.peer] == nil)
        #expect(try Self.feed([0x09, 0x00, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11], by: .peer, into: &t) == nil)
        #expect(t.distributed[.peer] == .idKey)
        // Signing Information (0x0A, CSRK) is one PDU.
        #expect(try Self.feed(Self.value(0x0A, 0x22), by: .local, into: &t) == .keyDistributed(by: .local, .signKey))
        #expect(t.distributed[.local] == .signKey)
        // A new pairing starts from no keys.
        _ = try Self.feed(Self.pairingRequest, by: .local, into: &t)
        #expect(t.distributed.isEmpty && t.pairing == .featureExchange)
    }

    /// Legacy EncKey: Encryption Information (0x06, LTK) then Central Identification (0x07, EDIV and Rand); an
    /// identification without the LTK before it completes nothing.
    @Test func anEncryptionKeyIsTwoPDUs() throws {
        var t = SecurityTracker()
        #expect(try Self.feed(Self.value(0x07, 0x01, count: 10), by: .peer, into: &t) == nil)
        #expect(t.distributed.isEmpty)
        #expect(try Self.feed(Self.value(0x06, 0x33), by: .peer, into: &t) == .keyDistributed(by: .peer, .encKey))
        #expect(try Self.feed(Self.value(0x07, 0x01, count: 10), by: .peer, into: &t) == nil)
        #expect(t.distributed[.peer] == .encKey && t.distributed[.local] == nil)
    }

    /// Pairing Failed 0x05 with reason 0x04, Confirm Value Failed (Part H, 3.5.5, Table 3.7).
    @Test func pairingFailedEndsThePairingWithItsReason() throws {
        var t = SecurityTracker()
        _ = try Self.feed(Self.pairingRequest, by: .local, into: &t)
        _ = try Self.feed(Self.pairingResponse, by: .peer, into: &t)
        _ = try Self.feed(Self.value(0x03, 0x77), by: .local, into: &t)
        let failed = try Self.feed([0x05, 0x04], by: .peer, into: &t)
        #expect(failed == .pairingFailed(by: .peer, reason: SMPPairingFailedReason(0x04)))
        #expect(t.pairing == .failed(SMPPairingFailedReason(0x04)))
    }

    /// The controller asks for the LTK (LE Long Term Key Request); a host without it answers with a Negative Reply, and
    /// Encryption Change fails with 0x06 PIN or Key Missing, the link unchanged. With the key, encryption turns on.
    @Test func encryptionFollowsTheKeyRequest() {
        var t = SecurityTracker()
        #expect(t.feed(.longTermKeyRequested, frame: 1) == nil && t.encryption == .keyRequested)
        #expect(t.feed(.longTermKeyRefused, frame: 1) == nil && t.encryption == .keyRefused)
        #expect(t.feed(.changed(status: HCIStatus(0x06), enabled: false), frame: 1) == .encryptionFailed(.pinOrKeyMissing))
        #expect(t.encryption == .keyRefused)
        #expect(t.feed(.longTermKeyRequested, frame: 1) == nil)
        #expect(t.feed(.longTermKeyReplied, frame: 1) == nil && t.encryption == .keyReplied)
        #expect(t.feed(.changed(status: .success, enabled: true), frame: 1) == .encryption(true) && t.encryption == .on)
        #expect(t.feed(.changed(status: .success, enabled: false), frame: 1) == .encryption(false) && t.encryption == .off)
    }
}
