import BLECore
import Foundation
import Testing

@testable import BLECodecs

/// Decoding cost with a loaded spec. Runs only with BLECODECS_BENCH=1, meant for a release build:
/// `BLECODECS_BENCH=1 swift test -c release --filter PerformanceTests`.
struct PerformanceTests {
    static let enabled = ProcessInfo.processInfo.environment["BLECODECS_BENCH"] == "1"

    /// CPU time of this thread (not wall time: the machine is shared, and waiting for a core is not decoding cost).
    func threadCPUNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// Best of 5 rounds of 50,000 decodes, in thread CPU time.
    func measure(_ label: String, _ bytes: [UInt8], _ ctx: CodecContext, registry: CodecRegistry) -> Double {
        let n = 50_000
        var sink = 0
        for _ in 0..<1000 { sink &+= registry.decode(bytes, context: ctx)?.fields.count ?? 0 }
        var best = Double.infinity
        for _ in 0..<5 {
            let t0 = threadCPUNanoseconds()
            bytes.withUnsafeBytes { raw in
                for _ in 0..<n { sink &+= registry.decode(raw, context: ctx)?.fields.count ?? 0 }
            }
            let ns = Double(threadCPUNanoseconds() - t0) / Double(n)
            best = min(best, ns)
        }
        print(
            "PerformanceTests: \(label): \(String(fractionDigits: 1, best)) ns CPU per decode (\(bytes.count) bytes, best of 5 × \(n); sink \(sink))"
        )
        return best
    }

    @Test(.enabled(if: PerformanceTests.enabled)) func decodeCost() {
        let registry = SampleCodecTests.registry
        var data: [UInt8] = [0x81, 0x00, 0x05]
        data += (0..<17).map { UInt8($0) }
        let ota = measure("headset otaData", data, SampleCodecTests.headset(4, .writeCommand), registry: registry)
        let bracelet: [UInt8] = [
            0xA5, 0x0B, 0x84, 0x05, 0x00, 0x0E, 0x10, 0x27, 0x48, 0x32, 0x0B ^ 0x84 ^ 0x05 ^ 0x0E ^ 0x10 ^ 0x27 ^ 0x48 ^ 0x32 ^ 0xA5,
        ]
        let rec = measure("bracelet activityRecord", bracelet, SampleCodecTests.braceletNotify, registry: registry)
        let hr = measure(
            "sig heart rate", [0x10, 0x48, 0x00, 0x04, 0x00, 0x04], CodecContext(characteristic: BluetoothUUID(uuid16: 0x2A37)),
            registry: registry)
        #expect(ota < 1000)  // the target: a 20-byte value with a loaded spec under 1 µs
        #expect(rec < 1500)  // 9 fields, a checksum and a role; noisier on a shared machine
        _ = hr
    }
}
