/// A seeded mutator for robustness tests: bit flips, byte changes, inserts, deletes, truncation,
/// 16/32-bit length-field corruption and splicing of two inputs. Deterministic for a seed.
public struct Mutator {
    public private(set) var state: UInt64

    public init(seed: UInt64) { state = seed == 0 ? 0x9E37_79B9_7F4A_7C15 : seed }

    /// xorshift64*.
    public mutating func next() -> UInt64 {
        state ^= state >> 12
        state ^= state << 25
        state ^= state >> 27
        return state &* 0x2545_F491_4F6C_DD1D
    }

    public mutating func below(_ n: Int) -> Int { n <= 1 ? 0 : Int(next() % UInt64(n)) }

    /// One to four mutations of `input` (never empty unless the input is).
    public mutating func mutate(_ input: [UInt8], other: [UInt8] = []) -> [UInt8] {
        var b = input
        guard !b.isEmpty else { return b }
        for _ in 0...below(4) {
            guard !b.isEmpty else { break }
            let at = below(b.count)
            switch below(8) {
            case 0: b[at] ^= UInt8(1 << below(8))
            case 1: b[at] = UInt8(truncatingIfNeeded: next())
            case 2: b.insert(contentsOf: (0..<(1 + below(8))).map { _ in UInt8(truncatingIfNeeded: next()) }, at: at)
            case 3: b.removeSubrange(at..<min(b.count, at + 1 + below(16)))
            case 4: b.removeSubrange(min(b.count, max(1, below(b.count)))...)  // cut
            case 5:  // a 16-bit length gone wild
                if at + 1 < b.count { b[at] = [0x00, 0xFF, 0x7F, 0x80][below(4)]; b[at + 1] = [0x00, 0xFF, 0x7F, 0x80][below(4)] }
            case 6:  // a 32-bit length gone wild
                if at + 3 < b.count { for k in 0..<4 { b[at + k] = [0x00, 0xFF, 0x7F][below(3)] } }
            default:  // splice in a piece of another input
                if !other.isEmpty {
                    let from = below(other.count)
                    b.insert(contentsOf: other[from..<min(other.count, from + 1 + below(256))], at: at)
                }
            }
        }
        return b
    }
}
