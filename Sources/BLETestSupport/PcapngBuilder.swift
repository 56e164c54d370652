/// Writes pcapng blocks byte by byte, in either byte order, for tests of the reader (draft-ietf-opsawg-pcapng):
/// sections, interfaces with their options, Enhanced, Simple and obsolete Packet Blocks with comments and flags, Name
/// Resolution and Decryption Secrets Blocks, and blocks damaged on purpose.
public struct PcapngBuilder {
    public private(set) var bytes: [UInt8] = []
    public var bigEndian: Bool

    public init(bigEndian: Bool = false) { self.bigEndian = bigEndian }

    /// Byte offset where the next block starts.
    public var offset: Int { bytes.count }

    func u16(_ v: UInt16) -> [UInt8] { bigEndian ? [UInt8(v >> 8), UInt8(v & 0xFF)] : [UInt8(v & 0xFF), UInt8(v >> 8)] }
    func u32(_ v: UInt32) -> [UInt8] {
        let le = [UInt8(v & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 24)]
        return bigEndian ? le.reversed() : le
    }
    func u64(_ v: UInt64) -> [UInt8] {
        bigEndian ? u32(UInt32(v >> 32)) + u32(UInt32(v & 0xFFFF_FFFF)) : u32(UInt32(v & 0xFFFF_FFFF)) + u32(UInt32(v >> 32))
    }
    static func padded(_ b: [UInt8]) -> [UInt8] { b + [UInt8](repeating: 0, count: (4 - b.count % 4) % 4) }

    /// One option (code, value padded to 32 bits).
    public func option(_ code: UInt16, _ value: [UInt8]) -> [UInt8] { u16(code) + u16(UInt16(value.count)) + Self.padded(value) }
    public func comment(_ text: String) -> [UInt8] { option(1, Array(text.utf8)) }
    /// `epb_flags` with direction bits: 1 inbound, 2 outbound.
    public func flags(direction: UInt32) -> [UInt8] { option(2, u32(direction)) }
    public var endOfOptions: [UInt8] { [0, 0, 0, 0] }

    /// A whole block: type, total length, body, total length. `trailingLength` overrides the second length (damage).
    public mutating func block(_ type: UInt32, _ body: [UInt8], trailingLength: UInt32? = nil) {
        let length = UInt32(12 + body.count)
        bytes += u32(type) + u32(length) + body + u32(trailingLength ?? length)
    }

    /// A Section Header Block in this builder's byte order (the later blocks follow it).
    public mutating func section(bigEndian: Bool, options: [UInt8] = []) {
        self.bigEndian = bigEndian
        block(0x0A0D_0D0A, u32(0x1A2B_3C4D) + u16(1) + u16(0) + u64(UInt64.max) + options)
    }

    /// An Interface Description Block: `tsresol` (if_tsresol byte), `tsoffset` seconds (if_tsoffset), when given.
    public mutating func interface(
        linkType: UInt16, snapLength: UInt32 = 0, tsresol: UInt8? = nil, tsoffset: Int64? = nil, name: String? = nil
    ) {
        var options: [UInt8] = []
        if let name { options += option(2, Array(name.utf8)) }
        if let tsresol { options += option(9, [tsresol]) }
        if let tsoffset { options += option(14, u64(UInt64(bitPattern: tsoffset))) }
        if !options.isEmpty { options += endOfOptions }
        block(1, u16(linkType) + u16(0) + u32(snapLength) + options)
    }

    /// An Enhanced Packet Block: `units` in the interface's timestamp units.
    public mutating func enhancedPacket(
        interface: UInt32, units: UInt64, data: [UInt8], originalLength: Int? = nil, options: [UInt8] = [],
        trailingLength: UInt32? = nil
    ) {
        let opts = options.isEmpty ? [] : options + endOfOptions
        block(
            6,
            u32(interface) + u32(UInt32(units >> 32)) + u32(UInt32(units & 0xFFFF_FFFF)) + u32(UInt32(data.count))
                + u32(UInt32(originalLength ?? data.count)) + Self.padded(data) + opts,
            trailingLength: trailingLength)
    }

    /// A Simple Packet Block (interface 0, no timestamp).
    public mutating func simplePacket(data: [UInt8], originalLength: Int? = nil) {
        block(3, u32(UInt32(originalLength ?? data.count)) + Self.padded(data))
    }

    /// An obsolete Packet Block (type 2): 16-bit interface id and drops count.
    public mutating func obsoletePacket(interface: UInt16, units: UInt64, data: [UInt8], options: [UInt8] = []) {
        let opts = options.isEmpty ? [] : options + endOfOptions
        block(
            2,
            u16(interface) + u16(0) + u32(UInt32(units >> 32)) + u32(UInt32(units & 0xFFFF_FFFF)) + u32(UInt32(data.count))
                + u32(UInt32(data.count)) + Self.padded(data) + opts)
    }

    /// A Name Resolution Block with IPv4 records (address, name) and the end record.
    public mutating func nameResolution(_ entries: [([UInt8], String)]) {
        var body: [UInt8] = []
        for (address, name) in entries {
            let value = address + Array(name.utf8) + [0]
            body += u16(1) + u16(UInt16(value.count)) + Self.padded(value)
        }
        block(4, body + u16(0) + u16(0))
    }

    /// A Decryption Secrets Block (`type`, e.g. 0x544C534B for a TLS key log).
    public mutating func decryptionSecrets(type: UInt32, _ secret: [UInt8]) {
        block(0x0A, u32(type) + u32(UInt32(secret.count)) + Self.padded(secret))
    }

    /// Raw bytes (a block cut or overwritten on purpose).
    public mutating func raw(_ b: [UInt8]) { bytes += b }
}
