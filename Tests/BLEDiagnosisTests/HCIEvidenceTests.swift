import BLECore
import BLEProtocols
import Testing

@testable import BLEAnalysis

/// Each declared BR/EDR command and event, as the wire carries it (bytes written here from Core Spec 6.0 Vol 4, Part E,
/// 7.1 and 7.7, not from blescope's encoders), decoded and translated into the evidence the diagnosis reads.
@Suite struct HCIEvidenceTests {
    /// The peer every BD_ADDR below names: `55 44 33 22 11 00` on the wire, least significant byte first.
    static let peer = "00:11:22:33:44:55"
    static let address = "55 44 33 22 11 00"

    static func command(_ hex: String) throws -> (handle: UInt16?, kind: EvidenceEvent.Kind)? {
        HCIEvidence.command(try HCICommandPacket(bytes: try #require(bytes(fromHex: hex))))
    }

    static func event(_ hex: String) throws -> (handle: UInt16?, kind: EvidenceEvent.Kind)? {
        let packet = try HCIEventPacket(bytes: try #require(bytes(fromHex: hex)))
        return HCIEvidence.event(try packet.decodeParameters())
    }

    @Test func brEDRCommands() throws {
        // Create Connection (0x0405, 7.1.5): BD_ADDR, packet type 0xCC18, R1, reserved, clock offset 0, role switch.
        let page = try Self.command("05 04 0D \(Self.address) 18 CC 01 00 00 00 01")
        #expect(page?.kind == .pageRequested(peer: Self.peer))
        #expect(page?.handle == nil)
        // Link Key Request Reply (0x040B, 7.1.10): BD_ADDR and a 16-byte key.
        let reply = try Self.command("0B 04 16 \(Self.address) " + String(repeating: "AB ", count: 16))
        #expect(reply?.kind == .linkKeyAnswer(peer: Self.peer, found: true))
        // Link Key Request Negative Reply (0x040C, 7.1.11): BD_ADDR.
        let none = try Self.command("0C 04 06 \(Self.address)")
        #expect(none?.kind == .linkKeyAnswer(peer: Self.peer, found: false))
        // Authentication Requested (0x0411, 7.1.15): the 12-bit handle (flag bits above it dropped).
        let auth = try Self.command("11 04 02 42 30")
        #expect(auth?.kind == .authenticationRequested(handle: 0x0042))
        #expect(auth?.handle == 0x0042)
        // Set Connection Encryption (0x0413, 7.1.16) is declared for the timeline, not read by the diagnosis.
        #expect(try Self.command("13 04 03 42 00 01") == nil)
        // Remote Name Request (0x0419, 7.1.19): BD_ADDR, R1, reserved, clock offset; its cancel (0x041A, 7.1.20): BD_ADDR.
        #expect(try Self.command("19 04 0A \(Self.address) 01 00 00 00")?.kind == .nameRequest(peer: Self.peer, cancel: false))
        #expect(try Self.command("1A 04 06 \(Self.address)")?.kind == .nameRequest(peer: Self.peer, cancel: true))
        // Write Scan Enable (0x0C1A, 7.3.18): 0x02 page scan only.
        #expect(try Self.command("1A 0C 01 02")?.kind == .classicScanEnableCommand(inquiry: false, page: true))
        // Short parameters do not decode as the declared set: no evidence is made of them.
        #expect(try Self.command("0C 04 05 55 44 33 22 11") == nil)
    }

    /// Every declared Link Control command (OGF 0x01) is one the test above sends.
    @Test func everyDeclaredBREDRCommandIsCovered() {
        let linkControl = HCIDeclaredSets.all.compactMap { type -> UInt16? in
            guard case .command(let c) = type.carrier, c.ogf == 0x01 else { return nil }
            return c.rawValue
        }
        // The link-fact and SCO/eSCO commands are the link's and the synchronous links' (ClassicLinkTests), not evidence:
        // Change Connection Packet Type, Accept Connection Request, Remote Name Request, (Enhanced) Setup, Accept and
        // Reject Synchronous Connection. IO Capability Request Reply (0x042B, 7.1.29) is the link's security record's
        // (SecurityRecordRuleTests), and so are the user's answers, User Confirmation and Passkey Request (Negative)
        // Reply (0x042C–0x042F, 7.1.30–33). Remote Name Request is evidence too (HH-04 reads a cancel after it completed).
        let facts: Set<UInt16> = [0x040F, 0x0409, 0x0419, 0x0428, 0x0429, 0x042A, 0x043D, 0x043E, 0x042B, 0x042C, 0x042D, 0x042E, 0x042F]
        #expect(Set(linkControl) == Set<UInt16>([0x0405, 0x040B, 0x040C, 0x0411, 0x0413, 0x041A]).union(facts))
        #expect(
            HCIEvidence.classicCommandOpcodes.map(\.rawValue).sorted() == [0x0405, 0x040B, 0x040C, 0x0411, 0x0419, 0x041A, 0x0C1A])
    }

    @Test func brEDREvents() throws {
        // Connection Complete (0x03, 7.7.3): status, handle 0x000B, BD_ADDR, ACL, encryption off.
        let connected = try Self.event("03 0B 00 0B 00 \(Self.address) 01 00")
        #expect(connected?.kind == .classicConnectionComplete(handle: 0x000B, status: .success, peer: Self.peer, linkType: 1))
        #expect(connected?.handle == 0x000B)
        // A failed one (Page Timeout 0x04) names no connection.
        let failed = try Self.event("03 0B 04 0B 00 \(Self.address) 01 00")
        #expect(failed?.kind == .classicConnectionComplete(handle: 0x000B, status: HCIStatus(0x04), peer: Self.peer, linkType: 1))
        #expect(failed.map { $0.handle == nil } == true)
        // Authentication Complete (0x06, 7.7.6): PIN or Key Missing (0x06) on handle 0x000B.
        #expect(try Self.event("06 03 06 0B 00")?.kind == .authenticationComplete(handle: 0x000B, status: HCIStatus(0x06)))
        // Remote Name Request Complete (0x07, 7.7.7): Page Timeout (0x04), BD_ADDR, a 248-byte name field.
        let named = try Self.event("07 FF 04 \(Self.address) " + String(repeating: "00 ", count: 248))
        #expect(named?.kind == .nameRequestComplete(peer: Self.peer))
        // Role Change (0x12, 7.7.18): now peripheral.
        #expect(try Self.event("12 08 00 \(Self.address) 01")?.kind == .roleChange(peer: Self.peer, status: .success, role: 1))
        // Mode Change (0x14, 7.7.20): sniff, interval 0x0320.
        let mode = try Self.event("14 06 00 0B 00 02 20 03")
        #expect(mode?.kind == .modeChange(handle: 0x000B, status: .success, mode: 2))
        #expect(mode?.handle == 0x000B)
        // PIN Code Request (0x16, 7.7.22), Link Key Request (0x17, 7.7.23).
        #expect(try Self.event("16 06 \(Self.address)")?.kind == .pinCodeRequest(peer: Self.peer))
        #expect(try Self.event("17 06 \(Self.address)")?.kind == .linkKeyRequest(peer: Self.peer))
        // Link Key Notification (0x18, 7.7.24): BD_ADDR, 16-byte key, key type 0x04.
        let key = try Self.event("18 17 \(Self.address) " + String(repeating: "CD ", count: 16) + "04")
        #expect(key?.kind == .linkKeyCreated(peer: Self.peer))
        // IO Capability Request (0x31, 7.7.40) asks this side; IO Capability Response (0x32, 7.7.41) is the peer's.
        #expect(try Self.event("31 06 \(Self.address)")?.kind == .ioCapabilityExchange(peer: Self.peer, sender: .local))
        #expect(try Self.event("32 09 \(Self.address) 01 00 03")?.kind == .ioCapabilityExchange(peer: Self.peer, sender: .peer))
        // Simple Pairing Complete (0x36, 7.7.45): Authentication Failure (0x05).
        #expect(
            try Self.event("36 07 05 \(Self.address)")?.kind == .simplePairingComplete(peer: Self.peer, status: HCIStatus(0x05)))
    }

    /// The LE link events and the shared ones keep their evidence (7.7.5, 7.7.8, 7.7.65.1, 7.7.65.5).
    @Test func leLinkEvents() throws {
        // Disconnection Complete: handle 0x0040, Remote User Terminated (0x13).
        let gone = try Self.event("05 04 00 40 00 13")
        #expect(gone?.kind == .disconnectionComplete(handle: 0x0040, status: .success, reason: HCIStatus(0x13)))
        // Encryption Change: on.
        #expect(try Self.event("08 04 00 40 00 01")?.kind == .encryptionChange(handle: 0x0040, status: .success, enabled: true))
        // LE Long Term Key Request: handle, Rand, EDIV.
        let ltk = try Self.event("3E 0D 05 40 00 01 02 03 04 05 06 07 08 34 12")
        #expect(ltk?.kind == .longTermKeyRequest(handle: 0x0040))
        // LE Connection Complete failed (Connection Failed to be Established 0x3E): no handle, no peer.
        let failed = try Self.event("3E 13 01 3E 40 00 00 00 \(Self.address) 28 00 00 00 C8 00 00")
        #expect(failed?.kind == .connectionComplete(handle: 0x0040, status: HCIStatus(0x3E), peer: nil))
        #expect(failed.map { $0.handle == nil } == true)
    }
}
