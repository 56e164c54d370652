import BLECore

/// What a spec's frame says about the attribute that carries it, for naming a handle that discovery did not name
/// (`gatt`'s handles "inferred from their value layout"): only a spec whose frame has a checksum is distinctive enough.
extension DeclarativeCodec {
    /// Whether a part of the spec checks a checksum (a frame that a value matches by chance once in 256 or fewer).
    public var hasChecksum: Bool { parts.contains { $0.checksum != nil } }
    /// The characteristics the spec's `match` names, in spec order.
    public var matchedCharacteristics: [BluetoothUUID] { matchers.flatMap(\.characteristics) }
    /// The services the spec's `match` names, in spec order.
    public var matchedServices: [BluetoothUUID] { matchers.flatMap(\.services) }
}

extension CodecRegistry {
    /// The loaded specs, in load order.
    public var loadedSpecs: [DeclarativeCodec] { specsSnapshot }
}
