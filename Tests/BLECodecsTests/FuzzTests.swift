import BLECore
import BLETestSupport
import Foundation
import Testing

@testable import BLECodecs

/// Random specs and payloads must never crash or hang the loader or the interpreter.
/// Set BLECODECS_FUZZ_SEED to replay a run; the seed is printed.
struct FuzzTests {
    static let seed: UInt64 =
        ProcessInfo.processInfo.environment["BLECODECS_FUZZ_SEED"].flatMap { UInt64($0) }
        ?? UInt64.random(in: 0...UInt64.max)

    static let names = ["a", "b", "n", "len", "cmd", "x", "flags"]
    static let types = [
        "u8", "u16", "u16be", "u24", "u32le", "u64", "i8", "i16", "i24be", "i32", "i64", "sfloat", "float",
        "bytes", "string", "array", "group", "u7", "", "bits",
    ]
    static let lengths = ["0", "1", "2", "7", "rest", "n", "len", "a", "-1", "65536", "99999999999", "0x10", "b"]

    struct Gen {
        var rng: FuzzRandom
        mutating func pick<T>(_ xs: [T]) -> T { xs[Int.random(in: 0..<xs.count, using: &rng)] }
        mutating func chance(_ p: Double) -> Bool { Double.random(in: 0..<1, using: &rng) < p }
        mutating func int(_ r: ClosedRange<Int>) -> Int { Int.random(in: r, using: &rng) }

        mutating func field(_ depth: Int) -> String {
            var parts = ["name: \(pick(FuzzTests.names))"]
            if chance(0.97) { parts.append("type: \(pick(FuzzTests.types))") }
            if chance(0.3) { parts.append("length: \(pick(FuzzTests.lengths))") }
            if chance(0.2) { parts.append("count: \(pick(FuzzTests.lengths))") }
            if chance(0.1) { parts.append("adjust: \(int(-3...3))") }
            if chance(0.1) { parts.append("scale: \(pick(["0.1", "2", "-1", "x", "1e308"]))") }
            if chance(0.1) { parts.append("enum: {0: zero, 1: one, 0xFF: max}") }
            if chance(0.1) { parts.append("flags: {0: a, 7: b, \(int(0...70)): c}") }
            if chance(0.1) { parts.append("bits: [{name: lo, bits: \(int(0...9))-\(int(0...70))}, {name: b, bit: \(int(0...64))}]") }
            if chance(0.1) {
                parts.append("if: {field: \(pick(FuzzTests.names)), \(pick(["mask", "equals", "not-equals", "bogus"])): \(int(0...3))}")
            }
            if chance(0.1) { parts.append("optional: \(pick(["true", "false", "maybe"]))") }
            if chance(0.1) { parts.append("expect: \(pick(["0xA5", "frame-length", "A5 06", "zz"]))") }
            if chance(0.15) { parts.append("role: \(pick(["sequence", "total-count", "ota-result", "ota-data", "bad role"]))") }
            if chance(0.05) { parts.append("success: [0, 1]") }
            if depth < 4, chance(0.3) {
                parts.append("fields: [\((0..<int(0...3)).map { _ in field(depth + 1) }.joined(separator: ", "))]")
            }
            return "{" + parts.joined(separator: ", ") + "}"
        }

        mutating func group(_ depth: Int) -> String {
            var lines = ["fields: [\((0..<int(0...5)).map { _ in field(depth) }.joined(separator: ", "))]"]
            if depth < 3, chance(0.4) {
                lines.append("select: \(pick(FuzzTests.names))")
                var msgs: [String] = []
                for _ in 0..<int(0...4) {
                    var m = "{id: \(int(0...5)), name: m\(int(0...9))"
                    if chance(0.3) { m += ", direction: \(pick(["write", "notify", "tx", "rx", "up"]))" }
                    if chance(0.2) { m += ", role: \(pick(["ota-start", "message-terminator"]))" }
                    m += ", fields: [\((0..<int(0...3)).map { _ in field(depth + 1) }.joined(separator: ", "))]}"
                    msgs.append(m)
                }
                lines.append("messages: [\(msgs.joined(separator: ", "))]")
            }
            return lines.joined(separator: "\n")
        }

        mutating func spec() -> String {
            var lines = ["codec: fuzz\(int(0...3))"]
            if chance(0.3) { lines.append("endian: \(pick(["big", "little", "middle"]))") }
            if chance(0.4) {
                lines.append(
                    "checksum: {algorithm: \(pick(ChecksumAlgorithm.allCases.map(\.rawValue) + ["crc7"])), from: \(int(-5...5)), to: \(int(-5...5)), at: \(int(-5...5))}"
                )
            }
            if chance(0.3) { lines.append("match: {prefix: \"\(pick(["A5", "", "0", "zz"]))\", direction: \(pick(["write", "notify"]))}") }
            lines.append(group(0))
            return lines.joined(separator: "\n")
        }

        mutating func mutate(_ text: String) -> String {
            var chars = Array(text)
            for _ in 0..<int(1...4) where !chars.isEmpty {
                let i = int(0...(chars.count - 1))
                switch int(0...3) {
                case 0: chars.remove(at: i)
                case 1: chars.insert(pick(Array(":{}[]-, \n#0x'\"&*!|>9a")), at: i)
                case 2: chars[i] = pick(Array("0123456789abcdefx-: "))
                default:
                    let j = int(0...(chars.count - 1))
                    chars.insert(contentsOf: chars[min(i, j)..<max(i, j)].prefix(40), at: i)
                }
            }
            return String(chars)
        }

        mutating func payload() -> [UInt8] { (0..<int(0...40)).map { _ in UInt8.random(in: 0...255, using: &rng) } }
    }

    @Test func randomSpecsAndPayloads() throws {
        print("FuzzTests seed: \(Self.seed) (replay with BLECODECS_FUZZ_SEED=\(Self.seed))")
        var g = Gen(rng: FuzzRandom(seed: Self.seed))
        let root = SampleCodecTests.root + "/Samples/codecs/"
        let samples = try ["bracelet.yaml", "headset.yaml"].map { try String(contentsOfFile: root + $0, encoding: .utf8) }
        let clock = ContinuousClock()
        let start = clock.now
        var compiled = 0, rejected = 0, decoded = 0
        for i in 0..<1500 {
            let text = i % 3 == 2 ? g.mutate(g.pick(samples)) : g.spec()
            let codec: DeclarativeCodec
            do { codec = try CodecSpecCompiler.compile(yaml: text, file: "fuzz") } catch {
                rejected += 1
                #expect(!error.message.isEmpty)
                continue
            }
            compiled += 1
            for _ in 0..<20 {
                let value = g.payload()
                let v = codec.decodeUnconditionally(value)
                _ = v.summary
                _ = codec.decode(value, context: CodecContext(characteristic: BluetoothUUID(uuid16: 0x2A37), operation: .notify))
                decoded += 1
            }
        }
        let elapsed = clock.now - start
        print("FuzzTests: \(compiled) specs compiled, \(rejected) rejected, \(decoded) payloads decoded in \(elapsed)")
        #expect(compiled > 50)
        #expect(rejected > 50)
        #expect(elapsed < .seconds(120))
    }

    @Test func samplesSurviveRandomPayloads() throws {
        var g = Gen(rng: FuzzRandom(seed: Self.seed ^ 0x5A5A))
        let registry = SampleCodecTests.registry
        let contexts = [
            SampleCodecTests.braceletWrite, SampleCodecTests.braceletNotify,
            SampleCodecTests.headset(2, .write), SampleCodecTests.headset(3, .notify), SampleCodecTests.headset(4, .writeCommand),
        ]
        for _ in 0..<5000 {
            var p = g.payload()
            if g.chance(0.3), !p.isEmpty { p[0] = 0xA5 }
            _ = registry.decode(p, context: g.pick(contexts))?.summary
        }
        for sig in SIGCodec.all {
            for _ in 0..<100 {
                _ = sig.decode(g.payload(), context: CodecContext(characteristic: BluetoothUUID(uuid16: sig.uuid16)))?.summary
            }
        }
    }
}
