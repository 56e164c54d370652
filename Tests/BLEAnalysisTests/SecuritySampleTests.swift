import BLEAnalysis
import BLECapture
import BLECore
import BLETestSupport
import Foundation
import Testing

/// The security Samples (made with bumble: `Samples/generate/secle.py`, `secbredr.py`) against their truth files: each
/// link's security record (``LinkSecurity``) holds the pairing the generator ran and the sessions with the key sizes
/// its controllers gave, in every format; and tshark's fields alone (`scripts/smp_method.py`) give the same procedure,
/// model and key sizes.
@Suite struct SecuritySampleTests {
    static func truth(_ name: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: TestEnvironment.sample(name + ".truth.json")))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func links(_ file: String) throws -> [Connection] {
        CaptureAnalysis.analyze(try CaptureFile.open(path: TestEnvironment.sample(file)), observing: Observing()).connections
    }

    @Test(arguments: ["btsnoop", "pcap", "pklg"])
    func aLegacyPairingWithASevenByteKeyAndItsBond(_ format: String) throws {
        let t = try Self.truth("sec-legacy-short-key")
        let pairing = try #require(t["pairing"] as? [String: Any]), sessions = try #require(t["sessions"] as? [[String: Any]])
        let links = try Self.links("sec-legacy-short-key.\(format)")
        try #require(links.count == 2)
        let p = try #require(links[0].machine.securityRecord.pairings.first)
        #expect(p.procedure == .leLegacy && p.model == .justWorks && p.mitmRequested && p.bonding && p.authenticated == false)
        #expect(p.frame == pairing["request_frame"] as? Int && p.responseFrame == pairing["response_frame"] as? Int)
        #expect(p.keySize == 7 && p.offeredKeySizes == [16, 7])
        for (i, c) in links.enumerated() {
            let s = try #require(c.machine.securityRecord.sessions.first)
            #expect(s.startFrame == sessions[i]["enable_encryption_frame"] as? Int)
            #expect(s.onFrame == sessions[i]["encryption_change_frame"] as? Int)
            #expect(s.ediv.map(Int.init) == sessions[i]["ediv"] as? Int && s.keySize == 7 && s.algorithm(isLE: true) == "AES-CCM")
        }
        let response = try #require(p.responseFrame)
        #expect(links[0].machine.securityRecord.sessions[0].keySizeSource == .inferred(.pairingKeySize(frame: response)))
        #expect(links[0].machine.securityRecord.sessions[0].origin == .pairing(frame: p.frame))
        #expect(links[1].machine.securityRecord.sessions[0].keySizeSource == .inferred(.bondKeySize(frame: response, connection: 1)))
        #expect(links[1].machine.securityRecord.sessions[0].origin == .stored)
    }

    @Test(arguments: ["btsnoop", "pcap", "pklg"])
    func theDebugKeyIsSeenWhereTheGeneratorSentIt(_ format: String) throws {
        let pairing = try #require(try Self.truth("sec-sc-debug-key")["pairing"] as? [String: Any])
        let p = try #require(try Self.links("sec-sc-debug-key.\(format)").first?.machine.securityRecord.pairings.first)
        #expect(p.procedure == .leSecureConnections && p.model == .justWorks && p.curve == "P-256")
        #expect(p.debugKeyFrame == pairing["debug_public_key_frame"] as? Int)
    }

    @Test(arguments: ["btsnoop", "pcap", "pklg"])
    func aBREDRBondWhoseSecondSessionRunsWithSevenBytes(_ format: String) throws {
        let t = try Self.truth("sec-bredr-key-downgrade")
        let pairing = try #require(t["pairing"] as? [String: Any]), sessions = try #require(t["sessions"] as? [[String: Any]])
        let links = try Self.links("sec-bredr-key-downgrade.\(format)")
        try #require(links.count == 2 && links.allSatisfy { !$0.isLE })
        let p = try #require(links[0].machine.securityRecord.pairings.first)
        #expect(p.procedure == .secureSimplePairing && p.model == .numericComparison && p.bonding && p.mitmRequested)
        #expect(p.linkKeyType?.rawValue == (pairing["link_key_type"] as? Int).map(UInt8.init))
        #expect(p.outcome == .completed(frame: try #require(pairing["link_key_notification_frame"] as? Int)))
        #expect(p.authenticated == true && p.curve == "P-256")
        for (i, c) in links.enumerated() {
            let s = try #require(c.machine.securityRecord.sessions.first)
            let read = try #require(sessions[i]["read_encryption_key_size_complete_frame"] as? Int)
            #expect(s.onFrame == sessions[i]["encryption_change_frame"] as? Int && s.algorithm(isLE: false) == "AES-CCM")
            #expect(s.keySize == sessions[i]["key_size"] as? Int && s.keySizeSource == .observed(frame: read))
        }
        let stored = links[1].machine.securityRecord.storedKeyAnswers
        #expect(stored.map(\.frame) == t["stored_link_key_reply_frames"] as? [Int] && stored.allSatisfy(\.found))
    }

    /// `scripts/smp_method.py` reads tshark's fields only; its procedure, model and key sizes are the record's.
    @Test func tsharkAloneGivesTheSameMethodsAndKeySizes() throws {
        guard TestEnvironment.tsharkPath != nil else {
            print("SecuritySampleTests: no tshark: skipped")
            return
        }
        let files = ["sec-legacy-short-key", "sec-sc-debug-key", "sec-bredr-key-downgrade"].map { TestEnvironment.sample($0 + ".btsnoop") }
        let r = try #require(TestEnvironment.execute("/usr/bin/env", ["python3", "scripts/smp_method.py"] + files))
        let lines = r.stdout.split(separator: "\n").map { $0.split(separator: "\t").dropFirst().map(String.init) }
        #expect(
            lines == [
                ["32", "34", "legacy", "Just Works", "bonding", "7"], ["32", "34", "sc", "Just Works", "bonding", "16"],
                ["51", "59", "ssp", "Numeric Comparison", "bonding", "authenticated combination key (P-256)"],
                ["65", "-", "key-size", "16", "handle 0x0001", "-"], ["82", "-", "key-size", "7", "handle 0x0001", "-"],
            ], "\(r.stdout)\(r.stderr)")
        // The record's: the BR/EDR pairing from its IO Capability Request (51) to its Link Key Notification (59).
        let p = try #require(try Self.links("sec-bredr-key-downgrade.btsnoop").first?.machine.securityRecord.pairings.first)
        #expect(p.frame == 51 && p.outcome == .completed(frame: 59))
    }
}
