import BLECore
import BLEProtocols
import BLESecurity

/// Names a device behind its resolvable private addresses: an address resolves to an identity when
/// ah(IRK, prand) equals its hash (Core Spec Vol 3, Part H, 2.2.2; Vol 6, Part B, 1.3.2.2).
/// IRKs come from a key file, a phone's log (`--keys-from`) or SMP Identity Information in the capture.
public struct IdentityResolver: Sendable {
    public let keys: [IdentityKey]
    private var cache: [UInt64: LLDeviceAddress?] = [:]

    public init(_ keys: [IdentityKey]) { self.keys = keys }

    /// True for a resolvable private address: random, the two most significant bits 01.
    public static func isResolvable(_ address: UInt64) -> Bool { address >> 46 == 0b01 }

    /// The identity the address resolves to, or nil (not resolvable, or no IRK matches).
    public mutating func identity(of address: UInt64) -> LLDeviceAddress? {
        guard Self.isResolvable(address), !keys.isEmpty else { return nil }
        if let cached = cache[address] { return cached }
        let found = Self.resolve(address, keys)
        if cache.count < 65_536 { cache[address] = found }
        return found
    }

    static func resolve(_ address: UInt64, _ keys: [IdentityKey]) -> LLDeviceAddress? {
        let bytes = LLDeviceAddress(address, isRandom: true).bytes
        for k in keys {
            guard let irk = Key128(wire: k.irk), SecurityFunction.resolvesPrivateAddress(bytes, irk: irk) else { continue }
            return k.identity ?? LLDeviceAddress(address, isRandom: true)
        }
        return nil
    }
}

extension IdentityResolver {
    /// Names each connection's peer by its identity address where one of the keys resolves it (the keys known at the
    /// end of the pass).
    static func nameIdentities(in table: ConnectionTable, keys: [IdentityKey]) {
        guard !keys.isEmpty else { return }
        var resolver = IdentityResolver(keys)
        for i in table.indices {
            guard let peer = table[i].peerAddress, let value = Connection.addressValue(peer),
                let identity = resolver.identity(of: value)
            else { continue }
            table[i].peerIdentity = identity.description
        }
    }
}
