import Foundation

/// Facts about a classic pcap file read from its headers alone (not through blescope's readers), for tests that
/// compare with tshark or libpcap.
public enum ClassicPcapHeaders {
    /// One record header: seconds and the fraction field as stored (µs, or ns in a nanosecond file).
    public struct RecordTime: Equatable, Sendable {
        public var seconds: UInt32
        public var fraction: UInt32
        public init(seconds: UInt32, fraction: UInt32) {
            self.seconds = seconds
            self.fraction = fraction
        }
    }

    /// The link type and record times of a classic pcap file; nil for any other file.
    public static func read(_ path: String) -> (linkType: UInt32, nanoseconds: Bool, times: [RecordTime])? {
        guard let data = FileManager.default.contents(atPath: path), data.count >= 24 else { return nil }
        let b = [UInt8](data)
        func u32(_ at: Int, _ bigEndian: Bool) -> UInt32 {
            let v = (0..<4).reduce(UInt32(0)) { $0 | UInt32(b[at + $1]) << (8 * UInt32($1)) }
            return bigEndian ? v.byteSwapped : v
        }
        let magic = u32(0, false)
        let bigEndian: Bool, nanoseconds: Bool
        switch magic {
        case 0xA1B2_C3D4: (bigEndian, nanoseconds) = (false, false)
        case 0xA1B2_3C4D: (bigEndian, nanoseconds) = (false, true)
        case 0xD4C3_B2A1: (bigEndian, nanoseconds) = (true, false)
        case 0x4D3C_B2A1: (bigEndian, nanoseconds) = (true, true)
        default: return nil
        }
        var times: [RecordTime] = []
        var at = 24
        while at + 16 <= b.count {
            times.append(RecordTime(seconds: u32(at, bigEndian), fraction: u32(at + 4, bigEndian)))
            at += 16 + Int(u32(at + 8, bigEndian))
        }
        return (u32(20, bigEndian) & 0x0FFF_FFFF, nanoseconds, times)
    }

    /// Records whose fraction field is out of range (≥ 1,000,000 µs or 1,000,000,000 ns: the pcap format,
    /// draft-ietf-opsawg-pcap §5, defines it as the fraction of the second). Readers differ on them: libpcap reads
    /// the field as a signed 32-bit number, tshark overflows it into nanoseconds, blescope reads it as the unsigned
    /// field the format defines (seconds + fraction).
    public static func outOfRangeFractions(_ path: String) -> Int {
        guard let file = read(path) else { return 0 }
        let limit: UInt32 = file.nanoseconds ? 1_000_000_000 : 1_000_000
        return file.times.filter { $0.fraction >= limit }.count
    }

    /// The link types of a pcapng file's Interface Description Blocks (block type 1, link type in the body's first
    /// two bytes: draft-ietf-opsawg-pcapng §4.2); nil for a file that is not pcapng.
    public static func pcapngLinkTypes(_ path: String) -> Set<UInt32>? {
        guard let data = FileManager.default.contents(atPath: path), data.count >= 12 else { return nil }
        let b = [UInt8](data)
        guard b[0] == 0x0A, b[1] == 0x0D, b[2] == 0x0D, b[3] == 0x0A else { return nil }
        // The byte-order magic of the Section Header Block.
        let bigEndian = b[8] == 0x1A && b[9] == 0x2B
        func u32(_ at: Int) -> UInt32 {
            let v = (0..<4).reduce(UInt32(0)) { $0 | UInt32(b[at + $1]) << (8 * UInt32($1)) }
            return bigEndian ? v.byteSwapped : v
        }
        var types: Set<UInt32> = []
        var at = 0
        while at + 12 <= b.count {
            let (type, length) = (u32(at), Int(u32(at + 4)))
            guard length >= 12, length % 4 == 0 else { break }
            if type == 1 {
                let lo = UInt32(b[at + 8]), hi = UInt32(b[at + 9])
                types.insert(bigEndian ? lo << 8 | hi : hi << 8 | lo)
            }
            at += length
        }
        return types
    }

    /// Options tshark needs to decode the file: for PPI (link type 192, in a classic pcap header or a pcapng
    /// interface), the DLT 147 inside it as BTLE, as `corpus/README.md` says (without it tshark decodes nothing).
    public static func tsharkOptions(_ path: String) -> [String] {
        guard read(path)?.linkType == 192 || pcapngLinkTypes(path)?.contains(192) == true else { return [] }
        return ["-o", #"uat:user_dlts:"User 0 (DLT=147)","btle","0","","0","""#]
    }
}
