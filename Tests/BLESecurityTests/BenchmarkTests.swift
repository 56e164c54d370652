import BLECore
import BLESecurity
import Foundation
import Testing

/// Costs of the toolbox. Runs only with BLESECURITY_BENCH=1, meant for a release build:
/// `BLESECURITY_BENCH=1 swift test -c release --filter BLESecurityTests.BenchmarkTests` (prints, asserts nothing timed).
@Suite(.enabled(if: ProcessInfo.processInfo.environment["BLESECURITY_BENCH"] == "1"))
struct BenchmarkTests {
    /// CPU time of this thread (the machine is shared; waiting for a core is not cost).
    func threadCPUNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    func best(rounds: Int = 5, _ body: () -> Void) -> Double {
        var best = Int64.max
        for _ in 0..<rounds {
            let t0 = threadCPUNanoseconds()
            body()
            best = min(best, threadCPUNanoseconds() - t0)
        }
        return Double(best)
    }

    @Test(arguments: [27, 251])
    func llCipherPerPacket(_ length: Int) {
        let cipher = LLCipher(
            sessionKey: Key128(hex: "99AD1B5226A37E3E058E3B8E27C2C666")!, iv: [0x24, 0xAB, 0xDC, 0xBA, 0xBE, 0xBA, 0xAF, 0xDE])
        let air = cipher.encrypt(
            header0: 0x02, plaintext: [UInt8](repeating: 0x5A, count: length), packetCounter: 7, centralToPeripheral: true)
        var out: [UInt8] = []
        out.reserveCapacity(256)
        let n = 100_000
        var okCount = 0
        let ns =
            air.withUnsafeBytes { raw in
                best {
                    for _ in 0..<n
                    where cipher.decrypt(header0: 0x02, payload: raw, packetCounter: 7, centralToPeripheral: true, into: &out) {
                        okCount += 1
                    }
                }
            } / Double(n)
        let enc =
            best {
                for i in 0..<n / 10 {
                    _ = cipher.encrypt(header0: 0x02, plaintext: out, packetCounter: UInt64(i), centralToPeripheral: true)
                }
            } / Double(n / 10)
        print("LLCipher \(length)-octet payload: decrypt+MIC check \(Int(ns)) ns/packet, encrypt \(Int(enc)) ns/packet (\(okCount) ok)")
    }

    @Test func legacyCrackWorstCase() throws {
        let preq: [UInt8] = [0x01, 0x03, 0x00, 0x01, 0x10, 0x07, 0x07], pres: [UInt8] = [0x02, 0x00, 0x00, 0x05, 0x10, 0x07, 0x07]
        let ia = PairingAddress([1, 2, 3, 4, 5, 6], isRandom: false), ra = PairingAddress([6, 5, 4, 3, 2, 1], isRandom: true)
        let mrand = Key128(hex: "5783D52156AD6F0E6388274EC6702EE0")!, srand = Key128(hex: "A6E8E7CC25A75F6E216583F7FF3DC4CF")!
        let tk = Key128(999_999)
        let x = LegacyPairingExchange(
            pairingRequest: preq, pairingResponse: pres, initiator: ia, responder: ra, mrand: mrand, srand: srand,
            mconfirm: SecurityFunction.c1(k: tk, r: mrand, preq: preq, pres: pres, initiator: ia, responder: ra))
        let t0 = Date()
        let ns = best(rounds: 3) { _ = LegacyPairingCracker.crack(x) }
        print(
            "legacy crack, passkey 999999 (all 1,000,000 candidates): \(String(format: "%.3f", ns / 1e9)) s CPU, \(String(format: "%.3f", Date().timeIntervalSince(t0) / 3)) s wall per search"
        )
        #expect(LegacyPairingCracker.crack(x)?.passkey == 999_999)
    }

    /// The MIC search when nothing matches: all 1,000,000 TKs, one direction and both (captures without direction).
    @Test func legacyMICSearchWorstCase() {
        let search = LegacyPairingMICSearch(
            mrand: Key128(hex: "5783D52156AD6F0E6388274EC6702EE0")!, srand: Key128(hex: "A6E8E7CC25A75F6E216583F7FF3DC4CF")!,
            skdm: [1, 2, 3, 4, 5, 6, 7, 8], skds: [9, 10, 11, 12, 13, 14, 15, 16], ivm: [1, 2, 3, 4], ivs: [5, 6, 7, 8])
        // An LL_START_ENC_RSP-sized PDU that no TK seals.
        let pdu = SealedLLPDU(header0: 0x03, payload: [0x11, 0x22, 0x33, 0x44, 0x55], packetCounter: 0, centralToPeripheral: true)
        var other = pdu
        other.centralToPeripheral = false
        for (name, pdus) in [("one direction", [pdu]), ("both directions", [pdu, other])] {
            var tried = 0
            let ns = best(rounds: 3) { tried = search.search(pdus: pdus).tried }
            print("legacy MIC search, \(name), all 1,000,000 TKs: \(String(format: "%.3f", ns / 1e9)) s CPU per search")
            #expect(tried == LegacyPairingMICSearch.candidateCount)
        }
    }

    @Test func sha256Megabyte() {
        let data = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let oneShot = best { _ = SHA256.hash(data) }
        let streaming = best {
            var h = SHA256()
            var i = 0
            while i < data.count { h.update(data[i..<min(i + 4096, data.count)]); i += 4096 }
            _ = h.finalize()
        }
        print(
            "SHA-256 of 1 MiB (libcrypto): one-shot \(String(format: "%.2f", oneShot / 1e6)) ms, streaming in 4 KiB updates \(String(format: "%.2f", streaming / 1e6)) ms"
        )
    }
}
