import BLECore

/// A2DP codec information elements (A2DP 1.4, 4.3–4.7; vendor codecs by their vendor and codec ID): what a Media Codec
/// capability offers (several bits set) or a configuration chose (one bit each).
///
/// ```
/// Media Codec capability: media type(4 bits) RFA | codec type | codec information element
/// SBC  (4): freq(4) mode(4) | blocks(4) subbands(2) allocation(2) | min bitpool | max bitpool
/// AAC  (6): object type | freq 8–44.1 k | freq 48–96 k(4) channels(2) RFA(2) | VBR(1) bitrate(23)
/// vendor:   vendor ID (u32 LE) | codec ID (u16 LE) | the vendor's value
/// ```
public struct A2DPCodec: Hashable, Sendable, CustomStringConvertible {
    public var mediaType: UInt8
    /// 0x00 SBC, 0x01 MPEG-1,2 Audio, 0x02 MPEG-2,4 AAC, 0x03 MPEG-D USAC, 0x04 ATRAC, 0xFF vendor-specific.
    public var codecType: UInt8
    public var element: [UInt8]

    public init(mediaType: UInt8 = 0, codecType: UInt8, element: [UInt8]) {
        self.mediaType = mediaType; self.codecType = codecType; self.element = element
    }

    /// From a Media Codec capability's bytes; nil when too short to name its codec.
    public init?(capability value: [UInt8]) {
        guard value.count >= 2 else { return nil }
        mediaType = value[0] >> 4
        codecType = value[1]
        element = Array(value.dropFirst(2))
    }

    public var capabilityBytes: [UInt8] { [mediaType << 4, codecType] + element }

    public static let sbc: UInt8 = 0x00
    public static let mpeg12: UInt8 = 0x01
    public static let aac: UInt8 = 0x02
    public static let usac: UInt8 = 0x03
    public static let atrac: UInt8 = 0x04
    public static let vendorSpecific: UInt8 = 0xFF

    /// A vendor codec's (vendor ID, codec ID).
    public var vendor: (id: UInt32, codec: UInt16)? {
        guard codecType == Self.vendorSpecific, element.count >= 6 else { return nil }
        let id = UInt32(element[0]) | UInt32(element[1]) << 8 | UInt32(element[2]) << 16 | UInt32(element[3]) << 24
        return (id, UInt16(element[4]) | UInt16(element[5]) << 8)
    }

    /// Vendor codecs by (vendor ID, codec ID), from the vendors' published A2DP codec IDs (as AOSP's
    /// `a2dp_vendor_*_constants.h` and Wireshark's `packet-bta2dp.c` list them).
    static let vendorCodecs: [UInt64: String] = [
        0x0000_004F_0001: "aptX", 0x0000_00D7_0024: "aptX HD", 0x0000_000A_0002: "aptX Low Latency", 0x0000_00D7_00AD: "aptX Adaptive",
        0x0000_012D_00AA: "LDAC", 0x0000_053A_484C: "LHDC v1", 0x0000_053A_4C32: "LHDC v2", 0x0000_053A_4C33: "LHDC v3",
        0x0000_053A_4C34: "LHDC v4", 0x0000_053A_4C35: "LHDC v5", 0x0000_053A_4C4C: "LLAC", 0x0000_08A9_0001: "LC3plus HR",
        0x0000_00E0_0001: "Opus", 0x0000_0075_0102: "Samsung Scalable", 0x0000_0075_0103: "Samsung Seamless",
    ]

    /// `SBC`, `AAC`, `LDAC`, `vendor 0x0000012d codec 0x00ab`.
    public var name: String {
        switch codecType {
        case Self.sbc: return "SBC"
        case Self.mpeg12: return "MPEG-1,2 Audio"
        case Self.aac: return "AAC"
        case Self.usac: return "MPEG-D USAC"
        case Self.atrac: return "ATRAC"
        case Self.vendorSpecific:
            guard let v = vendor else { return "vendor codec" }
            return Self.vendorCodecs[UInt64(v.id) << 16 | UInt64(v.codec)]
                ?? "vendor \(hex(v.id, width: 8)) codec \(hex(v.codec, width: 4))"
        default: return "codec \(hex(codecType))"
        }
    }

    // MARK: SBC (A2DP 1.4, 4.3.2)

    public var sbcFrequencies: [Int] {
        codecType == Self.sbc && element.count >= 4 ? Self.bits(element[0] >> 4, [16000, 32000, 44100, 48000]) : []
    }
    public var sbcChannelModes: [String] {
        codecType == Self.sbc && element.count >= 4 ? Self.bits(element[0] & 0x0F, ["mono", "dual channel", "stereo", "joint stereo"]) : []
    }
    public var sbcBlockLengths: [Int] { codecType == Self.sbc && element.count >= 4 ? Self.bits(element[1] >> 4, [4, 8, 12, 16]) : [] }
    public var sbcSubbands: [Int] { codecType == Self.sbc && element.count >= 4 ? Self.bits(element[1] >> 2 & 0x03, [4, 8]) : [] }
    public var sbcAllocation: [String] {
        codecType == Self.sbc && element.count >= 4 ? Self.bits(element[1] & 0x03, ["SNR", "loudness"]) : []
    }
    public var sbcBitpool: ClosedRange<Int>? {
        guard codecType == Self.sbc, element.count >= 4, element[2] <= element[3] else { return nil }
        return Int(element[2])...Int(element[3])
    }

    // MARK: AAC (A2DP 1.4, 4.5.2)

    public var aacObjectTypes: [String] {
        guard codecType == Self.aac, element.count >= 6 else { return [] }
        let names = ["", "MPEG-4 AAC-ELDv2", "MPEG-4 HE-AACv2", "MPEG-4 HE-AAC", "MPEG-4 scalable", "MPEG-4 LTP", "MPEG-4 LC", "MPEG-2 LC"]
        return Self.bits(element[0], names, lowFirst: true).filter { !$0.isEmpty }.reversed()
    }
    public var aacFrequencies: [Int] {
        guard codecType == Self.aac, element.count >= 6 else { return [] }
        let high = Self.bits(element[1], [44100, 32000, 24000, 22050, 16000, 12000, 11025, 8000], lowFirst: true)
        let higher = Self.bits(element[2] >> 4, [96000, 88200, 64000, 48000], lowFirst: true)
        return (high + higher).sorted()
    }
    public var aacChannels: [Int] {
        guard codecType == Self.aac, element.count >= 6 else { return [] }
        return Self.bits(element[2] >> 2 & 0x03, [2, 1], lowFirst: true).sorted()
    }
    public var aacVBR: Bool { codecType == Self.aac && element.count >= 6 && element[3] & 0x80 != 0 }
    public var aacBitrate: Int? {
        guard codecType == Self.aac, element.count >= 6 else { return nil }
        return Int(element[3] & 0x7F) << 16 | Int(element[4]) << 8 | Int(element[5])
    }

    // MARK: vendor codecs with a known layout (aptX, aptX HD: freq(4) mode(4); LDAC: freq, mode)

    public var vendorFrequencies: [Int] {
        guard let v = vendor, element.count >= 7 else { return [] }
        switch name {
        case "aptX", "aptX HD", "aptX Low Latency": return Self.bits(element[6] >> 4, [16000, 32000, 44100, 48000])
        case "LDAC": return Self.bits(element[6] & 0x3F, [192000, 176400, 96000, 88200, 48000, 44100], lowFirst: true).sorted()
        default: _ = v; return []
        }
    }
    public var vendorChannelModes: [String] {
        guard vendor != nil else { return [] }
        switch name {
        case "aptX", "aptX HD", "aptX Low Latency":
            return element.count >= 7 ? Self.bits(element[6] & 0x0F, ["mono", "stereo"], lowFirst: true) : []
        case "LDAC": return element.count >= 8 ? Self.bits(element[7] & 0x07, ["stereo", "dual channel", "mono"], lowFirst: true) : []
        default: return []
        }
    }

    /// The sampling frequencies the element offers or chose, whatever the codec.
    public var frequencies: [Int] { sbcFrequencies + aacFrequencies + vendorFrequencies }

    /// Bit `n` of the top `values.count` bits of a nibble (or byte, low bit first), highest bit first: the values set.
    static func bits<T>(_ field: UInt8, _ values: [T], lowFirst: Bool = false) -> [T] {
        var out: [T] = []
        for (i, v) in values.enumerated() {
            let bit = lowFirst ? i : values.count - 1 - i
            if field >> UInt8(bit) & 1 == 1 { out.append(v) }
        }
        return out
    }

    /// `44.1 kHz`, `48/44.1 kHz`.
    public static func frequencyText(_ f: [Int]) -> String {
        guard !f.isEmpty else { return "" }
        return f.sorted(by: >).map { $0 % 1000 == 0 ? "\($0 / 1000)" : String(fractionDigits: 1, Double($0) / 1000) }.joined(separator: "/")
            + " kHz"
    }

    /// `SBC 44.1 kHz joint stereo, 16 blocks, 8 subbands, loudness, bitpool 2–53`; `AAC MPEG-2 LC 44.1 kHz 2 ch VBR 320 kbps`.
    public var description: String {
        var parts = [name]
        let f = Self.frequencyText(frequencies)
        if !f.isEmpty { parts.append(f) }
        switch codecType {
        case Self.sbc:
            if !sbcChannelModes.isEmpty { parts.append(sbcChannelModes.joined(separator: "/")) }
            var more: [String] = []
            if !sbcBlockLengths.isEmpty { more.append(sbcBlockLengths.map(String.init).joined(separator: "/") + " blocks") }
            if !sbcSubbands.isEmpty { more.append(sbcSubbands.map(String.init).joined(separator: "/") + " subbands") }
            if !sbcAllocation.isEmpty { more.append(sbcAllocation.joined(separator: "/")) }
            if let b = sbcBitpool {
                more.append(b.lowerBound == b.upperBound ? "bitpool \(b.lowerBound)" : "bitpool \(b.lowerBound)–\(b.upperBound)")
            }
            return parts.joined(separator: " ") + (more.isEmpty ? "" : ", " + more.joined(separator: ", "))
        case Self.aac:
            if !aacObjectTypes.isEmpty { parts.insert(aacObjectTypes.joined(separator: "/"), at: 1) }
            if !aacChannels.isEmpty { parts.append(aacChannels.map(String.init).joined(separator: "/") + " ch") }
            if aacVBR { parts.append("VBR") }
            if let b = aacBitrate, b > 0 { parts.append("\(b / 1000) kbps") }
        default:
            if !vendorChannelModes.isEmpty { parts.append(vendorChannelModes.joined(separator: "/")) }
        }
        return parts.joined(separator: " ")
    }
}
