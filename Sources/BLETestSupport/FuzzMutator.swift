import BLECapture
import BLECore
import BLEProtocols

/// SplitMix64: a small seedable generator, so a fuzz run is replayed from its seed.
public struct FuzzRandom: RandomNumberGenerator, Sendable {
    public var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// A value in `0..<n` (`n` > 0).
    public mutating func below(_ n: Int) -> Int { Int(next() % UInt64(max(n, 1))) }
}

/// Structure-unaware mutations of capture bytes, for the seeded fuzzer of the test suite
/// (`Tests/FuzzTests`) when libFuzzer is not at hand (`scripts/fuzz.sh` runs libFuzzer).
///
/// The operations aim at what readers and decoders trust: bit flips, "interesting" bytes, runs
/// inserted or deleted, 16/32-bit length fields (either byte order) overwritten with boundary
/// values, chunks copied from elsewhere in the input or from another seed (record splicing),
/// duplicated chunks, and truncation.
public struct FuzzMutator: Sendable {
    public enum Operation: String, CaseIterable, Sendable {
        case bitFlip, interestingByte, insertBytes, deleteBytes, lengthField, splice, duplicate, truncate
    }

    /// Upper bound on a mutated input (keeps each execution quick).
    public var maxSize: Int
    public init(maxSize: Int = 1 << 16) { self.maxSize = maxSize }

    static let interesting8: [UInt8] = [0x00, 0x01, 0x02, 0x04, 0x10, 0x3E, 0x7F, 0x80, 0xFE, 0xFF]
    static let interesting16: [UInt16] = [0, 1, 3, 4, 5, 0x17, 0x1B, 0xFB, 0xFF, 0x100, 0x7FFF, 0x8000, 0xFFFE, 0xFFFF]
    static let interesting32: [UInt32] = [0, 1, 4, 0x10, 0xFFFF, 0x1_0000, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFF0, 0xFFFF_FFFF]

    /// One to four stacked mutations of `input`; `other` is a second seed for splicing.
    public func mutate(_ input: [UInt8], other: [UInt8] = [], using rng: inout FuzzRandom) -> [UInt8] {
        var bytes = input
        for _ in 0...rng.below(4) {
            let op = Operation.allCases[rng.below(Operation.allCases.count)]
            apply(op, to: &bytes, other: other, using: &rng)
        }
        if bytes.count > maxSize { bytes.removeSubrange(maxSize...) }
        return bytes
    }

    public func apply(_ op: Operation, to bytes: inout [UInt8], other: [UInt8], using rng: inout FuzzRandom) {
        switch op {
        case .bitFlip:
            guard !bytes.isEmpty else { return }
            for _ in 0...rng.below(8) {
                let i = rng.below(bytes.count)
                bytes[i] ^= 1 << UInt8(rng.below(8))
            }
        case .interestingByte:
            guard !bytes.isEmpty else { return }
            bytes[rng.below(bytes.count)] = Self.interesting8[rng.below(Self.interesting8.count)]
        case .insertBytes:
            let at = rng.below(bytes.count + 1)
            let n = 1 + rng.below(rng.below(2) == 0 ? 8 : 300)
            let fill: UInt8? = rng.below(2) == 0 ? Self.interesting8[rng.below(Self.interesting8.count)] : nil
            bytes.insert(contentsOf: (0..<n).map { _ in fill ?? UInt8(truncatingIfNeeded: rng.next()) }, at: at)
        case .deleteBytes:
            guard !bytes.isEmpty else { return }
            let at = rng.below(bytes.count)
            let n = 1 + rng.below(min(bytes.count - at, rng.below(2) == 0 ? 8 : 512))
            bytes.removeSubrange(at..<(at + n))
        case .lengthField:
            // Any 16- or 32-bit window may be a length: overwrite it with a boundary value or ±1.
            let wide = rng.below(2) == 0
            let width = wide ? 4 : 2
            guard bytes.count >= width else { return }
            let at = rng.below(bytes.count - width + 1)
            let bigEndian = rng.below(2) == 0
            var value: UInt32
            switch rng.below(3) {
            case 0:
                value =
                    wide
                    ? Self.interesting32[rng.below(Self.interesting32.count)]
                    : UInt32(Self.interesting16[rng.below(Self.interesting16.count)])
            case 1: value = UInt32(bytes.count - at)  // "the rest of the file", a plausible lie
            default:
                var current: UInt32 = 0
                for k in 0..<width { current |= UInt32(bytes[at + (bigEndian ? width - 1 - k : k)]) << (8 * UInt32(k)) }
                value = rng.below(2) == 0 ? current &+ 1 : current &- 1
            }
            for k in 0..<width {
                let byte = UInt8(truncatingIfNeeded: value >> (8 * UInt32(k)))
                bytes[at + (bigEndian ? width - 1 - k : k)] = byte
            }
        case .splice:
            let source = other.isEmpty || rng.below(2) == 0 ? bytes : other
            guard !source.isEmpty else { return }
            let from = rng.below(source.count)
            let n = 1 + rng.below(min(source.count - from, 1024))
            let chunk = source[from..<(from + n)]
            let at = rng.below(bytes.count + 1)
            if rng.below(2) == 0 || at == bytes.count {
                bytes.insert(contentsOf: chunk, at: at)
            } else {
                let end = min(bytes.count, at + n)
                bytes.replaceSubrange(at..<end, with: chunk)
            }
        case .duplicate:
            guard !bytes.isEmpty else { return }
            let from = rng.below(bytes.count)
            let n = 1 + rng.below(min(bytes.count - from, 256))
            let chunk = Array(bytes[from..<(from + n)])
            for _ in 0...rng.below(4) { bytes.insert(contentsOf: chunk, at: min(bytes.count, from + n)) }
        case .truncate:
            guard bytes.count > 1 else { return }
            bytes.removeSubrange((1 + rng.below(bytes.count - 1))...)
        }
    }
}

/// The worst-case capture for memory: every record opens something that never closes.
///
/// Record `i` (cycling through six kinds): an LE Connection Complete on a new handle (the previous
/// connection on that handle is never disconnected); an ACL start fragment announcing a 65535-byte
/// L2CAP PDU that never completes, on a handle never connected (inferred connection); an ATT Read
/// Request never answered; an HCI command never answered (a new opcode each time); an LE
/// credit-based connection request on a new channel; an SMP or signalling PDU on a new handle.
/// Handles are 12-bit, so "new" cycles through 0x000...0xEFF; opcodes and CIDs through their ranges.
/// `scripts/fuzz.sh worst-case N FILE` writes one with `CaptureFileWriter` streaming (flat memory).
public enum WorstCaseCapture {
    /// The `i`-th record (0-based) as an owned record.
    public static func record(_ i: Int, start: Int64 = 1_700_000_000_000_000) -> OwnedRecord {
        let handle = UInt16(i % 0xF00)
        let time = Timestamp(microseconds: start + Int64(i) * 100)
        func make(_ kind: RecordKind, _ direction: Direction, _ bytes: [UInt8]) -> OwnedRecord {
            OwnedRecord(frame: i + 1, timestamp: time, direction: direction, kind: kind, originalLength: nil, bytes: bytes)
        }
        func acl(_ h: UInt16, boundary: UInt16, _ payload: [UInt8]) -> [UInt8] {
            let hf = h | boundary << 12
            return [UInt8(hf & 0xFF), UInt8(hf >> 8), UInt8(payload.count & 0xFF), UInt8(payload.count >> 8)] + payload
        }
        func l2cap(cid: UInt16, length: Int? = nil, _ payload: [UInt8]) -> [UInt8] {
            let n = length ?? payload.count
            return [UInt8(n & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(cid & 0xFF), UInt8(cid >> 8)] + payload
        }
        switch i % 6 {
        case 0:
            return make(
                .event, .rx,
                HCIBuild.leConnectionComplete(handle: handle, peer: BDAddress(UInt64(0xC0_00_00_00_00_00) | UInt64(i & 0xFFFF_FFFF))))
        case 1:
            // A start without end on a handle nobody connected: 65535 announced, 27 given.
            let h = UInt16((i / 6 + 0x700) % 0xF00)
            return make(.acl, .tx, acl(h, boundary: 0, l2cap(cid: 0x0004, length: 0xFFFF, [UInt8](repeating: 0x52, count: 23))))
        case 2:
            let attr = UInt16(truncatingIfNeeded: i)
            return make(.acl, .tx, acl(handle, boundary: 0, l2cap(cid: 0x0004, [0x0A, UInt8(attr & 0xFF), UInt8(attr >> 8)])))
        case 3:
            let any = UInt16(truncatingIfNeeded: i / 6) | 0x0400
            // Never HCI Reset (0x0C03, at i / 6 = 0x0803 and 0x0C03): a reset ends every link open at it (issue 49), and
            // this capture is about holding as many as the bounds allow. A vendor opcode stands in for it.
            let opcode: UInt16 = any == 0x0C03 ? 0xFC03 : any
            return make(.command, .tx, [UInt8(opcode & 0xFF), UInt8(opcode >> 8), 0])
        case 4:
            // LE Credit Based Connection Request (code 0x14), identifier, length 10: SPSM, new source CID, MTU, MPS, credits.
            let cid = UInt16(0x40 + (i / 6) % 0xFFBF)
            let sig: [UInt8] = [
                0x14, UInt8(truncatingIfNeeded: i | 1), 10, 0, 0x80, 0x00, UInt8(cid & 0xFF), UInt8(cid >> 8),
                0xFF, 0xFF, 0xFB, 0x00, 0xFF, 0xFF,
            ]
            return make(.acl, .rx, acl(handle, boundary: 2, l2cap(cid: 0x0005, sig)))
        default:
            // A credit-based K-frame start announcing a 65535-byte SDU, and an SMP Pairing Request.
            if (i / 6) % 2 == 0 {
                let cid = UInt16(0x40 + (i / 6 - 1 + 0xFFBF) % 0xFFBF)
                return make(.acl, .tx, acl(handle, boundary: 0, l2cap(cid: cid, [0xFF, 0xFF] + [UInt8](repeating: 0xAB, count: 20))))
            }
            return make(.acl, .rx, acl(handle, boundary: 2, l2cap(cid: 0x0006, [0x01, 0x03, 0x00, 0x0D, 0x10, 0x07, 0x07])))
        }
    }
}
