import BLECore

/// The kinds of field an HCI parameter set is made of, each with its width, byte order (little-endian, Core Spec
/// Vol 4, Part E, 5.2) and print form.
///
/// The builders that make a field's closures are never specialized (`optimize.sil.specialize.generic.never`, as are
/// the set's read, write and summary): one generic copy serves every declared set. Specialized, the optimizer copied
/// each builder's four closures for every set and field type (73 sets), 0.35 MB of the binary, for sets read a few
/// times per capture (docs/performance.md#size).
extension HCIField {
    /// An unsigned little-endian integer of `bytes` octets (1–8; 3 for the 24-bit intervals and latencies).
    @_semantics("optimize.sil.specialize.generic.never")
    public static func uint<V: FixedWidthInteger & UnsignedInteger & Sendable>(
        _ name: String, _ path: WritableKeyPath<Root, V> & Sendable, bytes: Int, _ format: HCINumberFormat = .decimal
    ) -> HCIField {
        HCIField(
            name: name, width: bytes,
            read: { root, input throws(DecodeError) in
                var v: UInt64 = 0
                for i in 0..<bytes { v |= UInt64(try input.readUInt8()) << (8 * i) }
                root[keyPath: path] = V(truncatingIfNeeded: v)
            },
            write: { root, w in
                let v = UInt64(truncatingIfNeeded: root[keyPath: path])
                for i in 0..<bytes { w.write(UInt8(truncatingIfNeeded: v >> (8 * i))) }
            },
            text: { root in
                if case .hidden = format { return "" }
                return "\(name)=\(format.text(UInt64(truncatingIfNeeded: root[keyPath: path]), bytes: bytes))"
            },
            numbers: { root in [(name, Int64(truncatingIfNeeded: root[keyPath: path]))] })
    }

    public static func u8(_ name: String, _ path: WritableKeyPath<Root, UInt8> & Sendable, _ format: HCINumberFormat = .decimal)
        -> HCIField
    { uint(name, path, bytes: 1, format) }

    public static func u16(
        _ name: String, _ path: WritableKeyPath<Root, UInt16> & Sendable, _ format: HCINumberFormat = .decimal
    ) -> HCIField { uint(name, path, bytes: 2, format) }

    /// A 24-bit value (SDU intervals, sync delays, transport latencies, controller delay: µs).
    public static func u24(
        _ name: String, _ path: WritableKeyPath<Root, UInt32> & Sendable, _ format: HCINumberFormat = .microseconds
    ) -> HCIField { uint(name, path, bytes: 3, format) }

    public static func u32(
        _ name: String, _ path: WritableKeyPath<Root, UInt32> & Sendable, _ format: HCINumberFormat = .decimal
    ) -> HCIField { uint(name, path, bytes: 4, format) }

    /// A 64-bit value (LE features, a random number), printed in hex.
    public static func u64(_ name: String, _ path: WritableKeyPath<Root, UInt64> & Sendable) -> HCIField {
        uint(name, path, bytes: 8, .hex)
    }

    /// A one-byte code with its own names (``HCIRole``, ``LEAddressType``, ``LEPHY``), printed by its description.
    @_semantics("optimize.sil.specialize.generic.never")
    public static func code<V: RawRepresentable & CustomStringConvertible & Sendable>(
        _ name: String, _ path: WritableKeyPath<Root, V> & Sendable
    ) -> HCIField where V.RawValue == UInt8 {
        HCIField(
            name: name, width: 1,
            read: { root, input throws(DecodeError) in
                let byte = try input.readUInt8()
                // These codes keep every byte (unknown values print in hex), so the initializer never fails.
                if let v = V(rawValue: byte) { root[keyPath: path] = v }
            },
            write: { root, w in w.write(root[keyPath: path].rawValue) },
            text: { root in "\(name)=\(root[keyPath: path])" },
            numbers: { root in [(name, Int64(root[keyPath: path].rawValue))] })
    }

    /// An LE address after its type byte (7 bytes), printed `peer=C0:11:22:33:44:55 (random)` as every connection
    /// event has printed its peer.
    @_semantics("optimize.sil.specialize.generic.never")
    public static func address(
        _ name: String, type: WritableKeyPath<Root, LEAddressType> & Sendable, _ path: WritableKeyPath<Root, BDAddress> & Sendable
    ) -> HCIField {
        HCIField(
            name: name, width: 7,
            read: { root, input throws(DecodeError) in
                root[keyPath: type] = LEAddressType(try input.readUInt8())
                root[keyPath: path] = try BDAddress(parsing: &input)
            },
            write: { root, w in
                w.write(root[keyPath: type].rawValue)
                root[keyPath: path].encode(into: &w)
            },
            text: { root in "\(name)=\(root[keyPath: path]) (\(root[keyPath: type]))" },
            numbers: { root in [(name + "AddressType", Int64(root[keyPath: type].rawValue))] })
    }

    /// A BD_ADDR; with `omittedWhenZero`, printed only when set (the resolvable private addresses a controller
    /// leaves zero when it did not use one).
    @_semantics("optimize.sil.specialize.generic.never")
    public static func address(
        _ name: String, _ path: WritableKeyPath<Root, BDAddress> & Sendable, omittedWhenZero: Bool = false
    ) -> HCIField {
        HCIField(
            name: name, width: 6,
            read: { root, input throws(DecodeError) in root[keyPath: path] = try BDAddress(parsing: &input) },
            write: { root, w in root[keyPath: path].encode(into: &w) },
            text: { root in omittedWhenZero && root[keyPath: path].value == 0 ? "" : "\(name)=\(root[keyPath: path])" },
            numbers: { _ in [] })
    }

    /// Two consecutive 16-bit values printed as one range: `interval=30.00 ms–50.00 ms`.
    public static func range(
        _ name: String, _ low: WritableKeyPath<Root, UInt16> & Sendable, _ high: WritableKeyPath<Root, UInt16> & Sendable,
        _ format: HCINumberFormat
    ) -> HCIField {
        pair(name, (low, "Min"), (high, "Max")) { format.text(UInt64($0), bytes: 2) + "–" + format.text(UInt64($1), bytes: 2) }
    }

    /// A data length direction: octets then time (µs), printed `tx=251 B/2120 µs`.
    public static func dataLength(
        _ name: String, octets: WritableKeyPath<Root, UInt16> & Sendable, time: WritableKeyPath<Root, UInt16> & Sendable
    ) -> HCIField {
        pair(name, (octets, "Octets"), (time, "Time")) { "\($0) B/\($1) µs" }
    }

    /// Two consecutive 16-bit values printed together as `text` makes them; their numbers are `name` + each suffix.
    @_semantics("optimize.sil.specialize.generic.never")
    static func pair(
        _ name: String, _ a: (WritableKeyPath<Root, UInt16> & Sendable, String),
        _ b: (WritableKeyPath<Root, UInt16> & Sendable, String), _ text: @escaping @Sendable (UInt16, UInt16) -> String
    ) -> HCIField {
        let (first, firstSuffix) = a
        let (second, secondSuffix) = b
        return HCIField(
            name: name, width: 4,
            read: { root, input throws(DecodeError) in
                root[keyPath: first] = try UInt16(parsingLittleEndian: &input)
                root[keyPath: second] = try UInt16(parsingLittleEndian: &input)
            },
            write: { root, w in
                w.write(littleEndian: root[keyPath: first])
                w.write(littleEndian: root[keyPath: second])
            },
            text: { root in "\(name)=" + text(root[keyPath: first], root[keyPath: second]) },
            numbers: { root in
                [(name + firstSuffix, Int64(root[keyPath: first])), (name + secondSuffix, Int64(root[keyPath: second]))]
            })
    }

    /// A connection handle (12 bits of a 16-bit field), printed `0x0060`; the set's ``HCIParameterSet/connectionHandle``.
    public static func handle(_ path: WritableKeyPath<Root, UInt16> & Sendable) -> HCIField { handle("handle", path) }

    public static func handle(_ name: String, _ path: WritableKeyPath<Root, UInt16> & Sendable) -> HCIField {
        var field = uint(name, path, bytes: 2, .hex)
        field.handleOf = { root in root[keyPath: path] & 0x0FFF }
        return field
    }

    /// A status or reason (``HCIStatus``); the first is the set's ``HCIParameterSet/status``.
    public static func status(_ path: WritableKeyPath<Root, HCIStatus> & Sendable) -> HCIField { status("status", path) }

    @_semantics("optimize.sil.specialize.generic.never")
    public static func status(_ name: String, _ path: WritableKeyPath<Root, HCIStatus> & Sendable) -> HCIField {
        var field = HCIField(
            name: name, width: 1,
            read: { root, input throws(DecodeError) in root[keyPath: path] = HCIStatus(try input.readUInt8()) },
            write: { root, w in w.write(root[keyPath: path].rawValue) },
            text: { root in "\(name)=\(root[keyPath: path])" },
            numbers: { root in [(name, Int64(root[keyPath: path].rawValue))] })
        field.statusOf = { root in root[keyPath: path] }
        return field
    }

    /// A fixed-width value with its own wire form (a codec ID, an address).
    @_semantics("optimize.sil.specialize.generic.never")
    public static func value<V: WireCodable & CustomStringConvertible>(
        _ name: String, _ path: WritableKeyPath<Root, V> & Sendable, bytes: Int
    ) -> HCIField {
        HCIField(
            name: name, width: bytes,
            read: { root, input throws(DecodeError) in
                var slice = try input.slice(bytes)
                root[keyPath: path] = try V(parsing: &slice)
            },
            write: { root, w in root[keyPath: path].encode(into: &w) },
            text: { root in "\(name)=\(root[keyPath: path])" }, numbers: { _ in [] })
    }

    /// Bytes of a fixed count (a Broadcast_Code), printed in hex, or not at all when `hidden` (a secret).
    @_semantics("optimize.sil.specialize.generic.never")
    public static func bytes(
        _ name: String, _ path: WritableKeyPath<Root, [UInt8]> & Sendable, count: Int, hidden: Bool = false
    ) -> HCIField {
        HCIField(
            name: name, width: count,
            read: { root, input throws(DecodeError) in root[keyPath: path] = try input.readArray(count) },
            write: { root, w in
                let b = root[keyPath: path]
                w.write(contentsOf: b.prefix(count))
                for _ in b.count..<max(b.count, count) { w.write(UInt8(0)) }
            },
            text: { root in hidden ? "" : "\(name)=\(hexString(root[keyPath: path]))" }, numbers: { _ in [] })
    }

    /// A one-byte length, then that many bytes (a codec configuration).
    @_semantics("optimize.sil.specialize.generic.never")
    public static func lengthPrefixed(_ name: String, _ path: WritableKeyPath<Root, [UInt8]> & Sendable) -> HCIField {
        HCIField(
            name: name, width: nil, minimumWidth: 1,
            read: { root, input throws(DecodeError) in root[keyPath: path] = try input.readLengthPrefixedArray() },
            write: { root, w in
                let b = root[keyPath: path].prefix(255)
                w.write(UInt8(b.count)); w.write(contentsOf: b)
            },
            text: { root in root[keyPath: path].isEmpty ? "" : "\(name)=\(hexString(root[keyPath: path]))" },
            numbers: { root in [(name + "Length", Int64(root[keyPath: path].count))] })
    }

    /// A one-byte count, then that many values of `width` bytes each (connection handles, BIS indices).
    @_semantics("optimize.sil.specialize.generic.never")
    public static func counted<V: FixedWidthInteger & UnsignedInteger & Sendable>(
        _ name: String, _ path: WritableKeyPath<Root, [V]> & Sendable, width: Int, _ format: HCINumberFormat = .hex
    ) -> HCIField {
        HCIField(
            name: name, width: nil, minimumWidth: 1,
            read: { root, input throws(DecodeError) in
                let n = Int(try input.readUInt8())
                guard input.remaining >= n * width else { throw .invalidSize(expected: n * width, got: input.remaining) }
                var out: [V] = []
                out.reserveCapacity(n)
                for _ in 0..<n {
                    var v: UInt32 = 0
                    for i in 0..<width { v |= UInt32(try input.readUInt8()) << (8 * i) }
                    out.append(V(truncatingIfNeeded: v))
                }
                root[keyPath: path] = out
            },
            write: { root, w in
                let values = root[keyPath: path].prefix(255)
                w.write(UInt8(values.count))
                for value in values {
                    let v = UInt32(truncatingIfNeeded: value)
                    for i in 0..<width { w.write(UInt8(truncatingIfNeeded: v >> (8 * i))) }
                }
            },
            text: { root in
                "\(name)=[" + root[keyPath: path].map { format.text(UInt64(truncatingIfNeeded: $0), bytes: width) }.joined(separator: ",")
                    + "]"
            },
            numbers: { root in [(name + "Count", Int64(root[keyPath: path].count))] })
    }

    /// A one-byte count, then that many groups of fields (the CISes of LE Set CIG Parameters), each in wire order.
    /// Core Spec 5.3 and later lay array parameters out element by element (Vol 4, Part E, 5.2).
    @_semantics("optimize.sil.specialize.generic.never")
    public static func list<G: HCIFieldGroup>(_ name: String, _ path: WritableKeyPath<Root, [G]> & Sendable) -> HCIField {
        HCIField(
            name: name, width: nil, minimumWidth: 1,
            read: { root, input throws(DecodeError) in
                let n = Int(try input.readUInt8())
                var out: [G] = []
                for _ in 0..<n {
                    var g = G()
                    for f in G.fields { try f.read(&g, &input) }
                    out.append(g)
                }
                root[keyPath: path] = out
            },
            write: { root, w in
                let groups = root[keyPath: path].prefix(255)
                w.write(UInt8(groups.count))
                for g in groups { for f in G.fields { f.write(g, &w) } }
            },
            text: { root in
                root[keyPath: path].map { "\(name)[" + HCIFieldText.summary($0, G.fields) + "]" }.joined(separator: " ")
            },
            numbers: { root in [(name + "Count", Int64(root[keyPath: path].count))] })
    }

    /// A group's fields in place (the LE CIS Established fields that v2 repeats before its own).
    public static func inline<G: HCIFieldGroup>(_ path: WritableKeyPath<Root, G> & Sendable) -> [HCIField] {
        inlineFields(G.fields, path)
    }

    /// `fields` of a value kept at `path` in this root, read and written in place.
    @_semantics("optimize.sil.specialize.generic.never")
    static func inlineFields<G>(_ fields: [HCIField<G>], _ path: WritableKeyPath<Root, G> & Sendable) -> [HCIField] {
        fields.map { inner in
            var field = HCIField(
                name: inner.name, width: inner.width, minimumWidth: inner.minimumWidth,
                read: { root, input throws(DecodeError) in try inner.read(&root[keyPath: path], &input) },
                write: { root, w in inner.write(root[keyPath: path], &w) },
                text: { root in inner.text(root[keyPath: path]) },
                numbers: { root in inner.numbers(root[keyPath: path]) })
            if let h = inner.handleOf { field.handleOf = { root in h(root[keyPath: path]) } }
            if let s = inner.statusOf { field.statusOf = { root in s(root[keyPath: path]) } }
            return field
        }
    }
}
