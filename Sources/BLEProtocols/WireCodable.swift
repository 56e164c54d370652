import BLECore

/// A value with a fixed wire form: parsed from a ``ByteReader`` and written back with a ``ByteWriter``.
///
/// The one encode/decode contract of this module: every typed PDU, command and event parameter set conforms, on
/// HCI, L2CAP, ATT, SMP and the link layer alike (air packets, control PDUs, sniffer pseudo-headers), so fixtures
/// can be built from typed values and round-tripped: `#expect(try T(bytes: value.bytes) == value)`.
public protocol WireCodable: Hashable, Sendable {
    /// Reads the value; throws ``DecodeError`` on truncated or malformed input.
    init(parsing input: inout ByteReader) throws(DecodeError)
    /// Appends the wire form.
    func encode(into writer: inout ByteWriter)
}

extension WireCodable {
    /// The wire form as an owned array.
    public var bytes: [UInt8] {
        var w = ByteWriter()
        encode(into: &w)
        return w.bytes
    }

    /// Parses `bytes`, requiring every byte to be consumed.
    public init(bytes: [UInt8]) throws(DecodeError) {
        self = try withByteReader(bytes) { (r: inout ByteReader) throws(DecodeError) -> Self in
            let v = try Self(parsing: &r)
            try r.expectEnd()
            return v
        }
    }
}
