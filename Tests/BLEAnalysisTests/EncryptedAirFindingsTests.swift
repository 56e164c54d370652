import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Foundation
import Testing

/// Issue 49's proof: over every air capture the tests find (Samples, `../shared/captures`, `BLESCOPE_CORPUS`), no L2CAP,
/// ATT, SMP or decode finding falls on a packet of a link after an encryption start no key opened: those PDUs are
/// ciphertext, counted, never parsed.
@Suite struct EncryptedAirFindingsTests {
    /// Codes a finding would carry if ciphertext had been read as L2CAP and above.
    static let plaintextCodes = ["l2cap.", "att.", "smp.", "decode.", "ll.malformed", "ll.control-malformed"]

    /// Each record's access address (data channel only), by frame.
    static func accessAddresses(_ path: String) throws -> [Int: UInt32] {
        let file = try CaptureFile.open(path: path)
        var out: [Int: UInt32] = [:]
        while let r = file.next() {
            guard r.kind == .linkLayer, let air = try? LLAirPacket(linkType: r.linkType, bytes: r.bytes), air.isDataChannel else {
                continue
            }
            out[r.frame] = air.packet.accessAddress.rawValue
        }
        return out
    }

    @Test func noPlaintextFindingAfterAnUnopenedEncryptionStart() throws {
        var links = 0
        for path in AirLinkFactsTests.airCaptures {
            let analyzer = Analyzer.analyze(try CaptureFile.open(path: path), options: AnalyzerOptions(timeline: false))
            let unopened = analyzer.connections.compactMap { c -> (UInt32, Int, Int)? in
                guard let enc = c.linkEncryption, enc.key == nil, let from = enc.firstUndecryptedFrame,
                    let aa = c.accessAddress.flatMap({ UInt32($0.lowercased().replacingOccurrences(of: "0x", with: ""), radix: 16) })
                else { return nil }
                return (aa, min(from, enc.encryptedFrom), c.endFrame ?? Int.max)
            }
            guard !unopened.isEmpty else { continue }
            links += unopened.count
            let aaOf = try Self.accessAddresses(path)
            for f in analyzer.findings {
                guard let frame = f.frame, Self.plaintextCodes.contains(where: { f.kind.code.id.hasPrefix($0) }), let aa = aaOf[frame]
                else {
                    continue
                }
                let hit = unopened.first { $0.0 == aa && frame >= $0.1 && frame <= $0.2 }
                #expect(
                    hit == nil,
                    "\(path): \(f.kind.code) at frame \(frame) on a link encrypted from \(hit?.1 ?? 0) with no key: \(f.message)")
            }
        }
        print("EncryptedAirFindingsTests: \(links) links encrypted without their key checked")
    }
}
