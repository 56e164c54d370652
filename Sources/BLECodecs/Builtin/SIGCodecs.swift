import BLECore

/// Collects fields while a built-in codec reads a value.
struct FieldSink {
    var fields: [DecodedField] = []
    var problems: [String] = []
    mutating func add(_ name: String, _ v: FieldValue, unit: String? = nil, at offset: Int? = nil) {
        fields.append(DecodedField(name, v, unit: unit, offset: offset))
    }
}

/// A built-in codec for one SIG characteristic or descriptor (GATT Specification Supplement; Core Vol 3, Part G).
public struct SIGCodec: ValueCodec {
    public let uuid16: UInt16
    /// `sig.<kebab-name>`.
    public let name: String
    public let title: String
    /// Reads the value; the context tells a write from a notification where one characteristic carries both (the ASE
    /// Control Point: operations written, responses notified).
    let body: @Sendable (inout ByteReader, inout FieldSink, CodecContext) throws(DecodeError) -> Void

    init(_ uuid16: UInt16, _ title: String, _ body: @escaping @Sendable (inout ByteReader, inout FieldSink) throws(DecodeError) -> Void) {
        self.init(
            uuid16, title,
            contextual: { (r: inout ByteReader, s: inout FieldSink, _: CodecContext) throws(DecodeError) in try body(&r, &s) })
    }

    init(
        _ uuid16: UInt16, _ title: String,
        contextual body: @escaping @Sendable (inout ByteReader, inout FieldSink, CodecContext) throws(DecodeError) -> Void
    ) {
        self.uuid16 = uuid16
        self.title = title
        self.name = "sig." + title.lowercased().split(whereSeparator: { !$0.isLetter && !$0.isNumber }).joined(separator: "-")
        self.body = body
    }

    /// Applies when the context's attribute type is this UUID; a short or over-long value gives `valid == false`.
    public func decode(_ value: UnsafeRawBufferPointer, context: CodecContext) -> DecodedValue? {
        guard context.characteristic?.uuid16 == uuid16 else { return nil }
        return decode(value, in: context)
    }

    public func decode(_ value: UnsafeRawBufferPointer) -> DecodedValue { decode(value, in: CodecContext()) }

    /// Decodes `value` as this codec's characteristic, as it travelled in `context`.
    public func decode(_ value: UnsafeRawBufferPointer, in context: CodecContext) -> DecodedValue {
        var reader = ByteReader(value)
        var sink = FieldSink()
        sink.fields.reserveCapacity(8)
        do throws(DecodeError) {
            try body(&reader, &sink, context)
            if !reader.isAtEnd { sink.problems.append("\(reader.remaining) unexpected trailing byte(s)") }
        } catch {
            sink.problems.append(error.description)
        }
        return DecodedValue(codec: name, message: title, fields: sink.fields, valid: sink.problems.isEmpty, problems: sink.problems)
    }
}

// MARK: - Readers shared by the codecs

private func u8(_ r: inout ByteReader) throws(DecodeError) -> Int64 { Int64(try r.readUInt8()) }
private func u16(_ r: inout ByteReader) throws(DecodeError) -> Int64 { Int64(try UInt16(parsingLittleEndian: &r)) }
private func u32(_ r: inout ByteReader) throws(DecodeError) -> Int64 { Int64(try UInt32(parsingLittleEndian: &r)) }

private func utf8String(_ r: inout ByteReader, _ s: inout FieldSink, _ name: String) {
    let bytes = r.readRemaining()
    // Strings may be NUL-padded by some devices.
    let trimmed = bytes.prefix { $0 != 0 }
    s.add(name, .string(String(decoding: trimmed, as: UTF8.self)), at: 0)
}

/// Date Time (GATT Supplement 3.70): year u16, month, day, hours, minutes, seconds.
private func dateTime(_ r: inout ByteReader, _ s: inout FieldSink, _ name: String) throws(DecodeError) {
    let at = r.offset
    let y = try u16(&r), mo = try u8(&r), d = try u8(&r), h = try u8(&r), mi = try u8(&r), se = try u8(&r)
    func p(_ v: Int64, _ w: Int) -> String { let t = String(v); return String(repeating: "0", count: max(0, w - t.count)) + t }
    s.add(name, .string("\(p(y, 4))-\(p(mo, 2))-\(p(d, 2)) \(p(h, 2)):\(p(mi, 2)):\(p(se, 2))"), at: at)
}

private func named(_ v: Int64, _ names: [Int64: String]) -> FieldValue { .named(v, names[v]) }

private func flagNames(_ v: Int64, _ names: [String?]) -> FieldValue {
    var set: [String] = []
    for (bit, n) in names.enumerated() where v & (1 << bit) != 0 { set.append(n ?? "bit\(bit)") }
    return .flags(v, set)
}

// MARK: - The table

extension SIGCodec {
    /// Every built-in codec, one per UUID: the core and GATT-supplement ones here, the LE Audio ones
    /// (`LEAudioCodecs.swift`).
    public static let all: [SIGCodec] = core + leAudio

    static let core: [SIGCodec] = [
        SIGCodec(0x2A00, "Device Name") { r, s throws(DecodeError) in utf8String(&r, &s, "name") },
        SIGCodec(0x2A01, "Appearance") { r, s throws(DecodeError) in
            let v = try u16(&r)
            s.add("appearance", .named(v, AssignedNumbers.appearanceName(UInt16(v))), at: 0)
        },
        // Core Vol 3, Part C, 12.3.
        SIGCodec(0x2A04, "Peripheral Preferred Connection Parameters") { r, s throws(DecodeError) in
            s.add("minInterval", .double(ConnectionTiming.intervalMilliseconds(try UInt16(parsingLittleEndian: &r))), unit: "ms", at: 0)
            s.add("maxInterval", .double(ConnectionTiming.intervalMilliseconds(try UInt16(parsingLittleEndian: &r))), unit: "ms", at: 2)
            s.add("latency", .int(try u16(&r)), at: 4)
            let timeout = ConnectionTiming.supervisionTimeoutMilliseconds(try UInt16(parsingLittleEndian: &r))
            s.add("timeout", .int(Int64(timeout)), unit: "ms", at: 6)
        },
        // Core Vol 3, Part G, 7.1.
        SIGCodec(0x2A05, "Service Changed") { r, s throws(DecodeError) in
            s.add("startHandle", .int(try u16(&r)), at: 0)
            s.add("endHandle", .int(try u16(&r)), at: 2)
        },
        SIGCodec(0x2A19, "Battery Level") { r, s throws(DecodeError) in
            let v = try u8(&r)
            s.add("level", .int(v), unit: "%", at: 0)
            if v > 100 { s.problems.append("battery level \(v) > 100") }
        },
        SIGCodec(0x2A29, "Manufacturer Name String") { r, s throws(DecodeError) in utf8String(&r, &s, "manufacturer") },
        SIGCodec(0x2A24, "Model Number String") { r, s throws(DecodeError) in utf8String(&r, &s, "model") },
        SIGCodec(0x2A25, "Serial Number String") { r, s throws(DecodeError) in utf8String(&r, &s, "serial") },
        SIGCodec(0x2A27, "Hardware Revision String") { r, s throws(DecodeError) in utf8String(&r, &s, "hardwareRevision") },
        SIGCodec(0x2A26, "Firmware Revision String") { r, s throws(DecodeError) in utf8String(&r, &s, "firmwareRevision") },
        SIGCodec(0x2A28, "Software Revision String") { r, s throws(DecodeError) in utf8String(&r, &s, "softwareRevision") },
        // GATT Supplement 3.170: vendor ID source 1 = Bluetooth SIG, 2 = USB-IF.
        SIGCodec(0x2A50, "PnP ID") { r, s throws(DecodeError) in
            let src = try u8(&r)
            s.add("vendorIdSource", named(src, [1: "Bluetooth SIG", 2: "USB-IF"]), at: 0)
            let vid = try u16(&r)
            s.add("vendorId", src == 1 ? .named(vid, AssignedNumbers.companyName(UInt16(vid))) : .int(vid), at: 1)
            s.add("productId", .int(try u16(&r)), at: 3)
            s.add("productVersion", .int(try u16(&r)), at: 5)
        },
        // GATT Supplement 3.215: 40-bit manufacturer identifier, then 24-bit OUI, little-endian.
        SIGCodec(0x2A23, "System ID") { r, s throws(DecodeError) in
            let b = try r.readArray(8)
            var m: Int64 = 0
            for i in (0..<5).reversed() { m = m << 8 | Int64(b[i]) }
            s.add("manufacturerIdentifier", .int(m), at: 0)
            s.add("oui", .int(Int64(b[7]) << 16 | Int64(b[6]) << 8 | Int64(b[5])), at: 5)
        },
        // GATT Supplement 3.113.
        SIGCodec(0x2A37, "Heart Rate Measurement") { r, s throws(DecodeError) in
            let flags = try u8(&r)
            s.add("flags", flagNames(flags, ["hr16", "contactDetected", "contactSupported", "energyExpended", "rrIntervals"]), at: 0)
            let at = r.offset
            s.add("heartRate", .int(flags & 1 != 0 ? try u16(&r) : try u8(&r)), unit: "bpm", at: at)
            if flags & 0x06 == 0x04 { s.add("sensorContact", .bool(false)) }
            if flags & 0x06 == 0x06 { s.add("sensorContact", .bool(true)) }
            if flags & 0x08 != 0 { let o = r.offset; s.add("energyExpended", .int(try u16(&r)), unit: "kJ", at: o) }
            if flags & 0x10 != 0 {
                var items: [DecodedField] = []
                let o = r.offset
                while r.remaining >= 2 { items.append(DecodedField("rr", .double(Double(try u16(&r)) / 1024 * 1000), unit: "ms")) }
                s.add("rrIntervals", .list(items), at: o)
            }
        },
        SIGCodec(0x2A38, "Body Sensor Location") { r, s throws(DecodeError) in
            s.add(
                "location", named(try u8(&r), [0: "Other", 1: "Chest", 2: "Wrist", 3: "Finger", 4: "Hand", 5: "Ear Lobe", 6: "Foot"]), at: 0
            )
        },
        // GATT Supplement 3.216 (Health Thermometer).
        SIGCodec(0x2A1C, "Temperature Measurement") { r, s throws(DecodeError) in
            let flags = try u8(&r)
            s.add("flags", flagNames(flags, ["fahrenheit", "timeStamp", "temperatureType"]), at: 0)
            let t = IEEE11073.float(try UInt32(parsingLittleEndian: &r))
            s.add("temperature", .double(t), unit: flags & 1 != 0 ? "°F" : "°C", at: 1)
            if flags & 2 != 0 { try dateTime(&r, &s, "timeStamp") }
            if flags & 4 != 0 {
                let o = r.offset
                s.add(
                    "temperatureType",
                    named(
                        try u8(&r),
                        [
                            1: "Armpit", 2: "Body (general)", 3: "Ear", 4: "Finger",
                            5: "Gastro-intestinal tract", 6: "Mouth", 7: "Rectum", 8: "Toe", 9: "Tympanum",
                        ]), at: o)
            }
        },
        // GATT Supplement 3.62 (Exact Time 256 + Adjust Reason).
        SIGCodec(0x2A2B, "Current Time") { r, s throws(DecodeError) in
            try dateTime(&r, &s, "dateTime")
            s.add(
                "dayOfWeek",
                named(
                    try u8(&r),
                    [0: "unknown", 1: "Monday", 2: "Tuesday", 3: "Wednesday", 4: "Thursday", 5: "Friday", 6: "Saturday", 7: "Sunday"]),
                at: 7)
            s.add("fractions256", .int(try u8(&r)), at: 8)
            s.add(
                "adjustReason",
                flagNames(try u8(&r), ["manualTimeUpdate", "externalReferenceTimeUpdate", "changeOfTimeZone", "changeOfDST"]), at: 9)
        },
        // GATT Supplement 3.62 / CSCS 3.1.
        SIGCodec(0x2A5B, "CSC Measurement") { r, s throws(DecodeError) in
            let flags = try u8(&r)
            s.add("flags", flagNames(flags, ["wheelRevolutions", "crankRevolutions"]), at: 0)
            if flags & 1 != 0 {
                let o = r.offset
                s.add("cumulativeWheelRevolutions", .int(try u32(&r)), at: o)
                s.add("lastWheelEventTime", .double(Double(try u16(&r)) / 1024), unit: "s", at: o + 4)
            }
            if flags & 2 != 0 {
                let o = r.offset
                s.add("cumulativeCrankRevolutions", .int(try u16(&r)), at: o)
                s.add("lastCrankEventTime", .double(Double(try u16(&r)) / 1024), unit: "s", at: o + 2)
            }
        },
        // RSCS 3.1.
        SIGCodec(0x2A53, "RSC Measurement") { r, s throws(DecodeError) in
            let flags = try u8(&r)
            s.add("flags", flagNames(flags, ["strideLength", "totalDistance", "running"]), at: 0)
            s.add("speed", .double(Double(try u16(&r)) / 256), unit: "m/s", at: 1)
            s.add("cadence", .int(try u8(&r)), unit: "/min", at: 3)
            if flags & 1 != 0 { let o = r.offset; s.add("strideLength", .double(Double(try u16(&r)) / 100), unit: "m", at: o) }
            if flags & 2 != 0 { let o = r.offset; s.add("totalDistance", .double(Double(try u32(&r)) / 10), unit: "m", at: o) }
        },
        // GATT Supplement 3.31 (Blood Pressure Measurement).
        SIGCodec(0x2A35, "Blood Pressure Measurement") { r, s throws(DecodeError) in
            let flags = try u8(&r)
            s.add("flags", flagNames(flags, ["kPa", "timeStamp", "pulseRate", "userId", "measurementStatus"]), at: 0)
            let unit = flags & 1 != 0 ? "kPa" : "mmHg"
            s.add("systolic", .double(IEEE11073.sfloat(try UInt16(parsingLittleEndian: &r))), unit: unit, at: 1)
            s.add("diastolic", .double(IEEE11073.sfloat(try UInt16(parsingLittleEndian: &r))), unit: unit, at: 3)
            s.add("meanArterialPressure", .double(IEEE11073.sfloat(try UInt16(parsingLittleEndian: &r))), unit: unit, at: 5)
            if flags & 2 != 0 { try dateTime(&r, &s, "timeStamp") }
            if flags & 4 != 0 {
                let o = r.offset; s.add("pulseRate", .double(IEEE11073.sfloat(try UInt16(parsingLittleEndian: &r))), unit: "bpm", at: o)
            }
            if flags & 8 != 0 { let o = r.offset; s.add("userId", .int(try u8(&r)), at: o) }
            if flags & 16 != 0 {
                let o = r.offset
                s.add(
                    "measurementStatus",
                    flagNames(
                        try u16(&r),
                        [
                            "bodyMovement", "cuffTooLoose", "irregularPulse", "pulseRateExceedsUpper", "pulseRateBelowLower",
                            "improperPosition",
                        ]), at: o)
            }
        },
        // GATT Supplement 3.104 (Glucose Measurement).
        SIGCodec(0x2A18, "Glucose Measurement") { r, s throws(DecodeError) in
            let flags = try u8(&r)
            s.add("flags", flagNames(flags, ["timeOffset", "concentration", "molPerL", "sensorStatus", "contextFollows"]), at: 0)
            s.add("sequenceNumber", .int(try u16(&r)), at: 1)
            try dateTime(&r, &s, "baseTime")
            if flags & 1 != 0 { let o = r.offset; s.add("timeOffset", .int(Int64(try Int16(parsingLittleEndian: &r))), unit: "min", at: o) }
            if flags & 2 != 0 {
                let o = r.offset
                let c = IEEE11073.sfloat(try UInt16(parsingLittleEndian: &r))
                s.add("concentration", .double(c), unit: flags & 4 != 0 ? "mol/L" : "kg/L", at: o)
                let ts = try u8(&r)
                s.add(
                    "type",
                    named(
                        ts & 0x0F,
                        [
                            1: "Capillary Whole blood", 2: "Capillary Plasma", 3: "Venous Whole blood", 4: "Venous Plasma",
                            5: "Arterial Whole blood", 6: "Arterial Plasma", 7: "Undetermined Whole blood",
                            8: "Undetermined Plasma", 9: "Interstitial Fluid", 10: "Control Solution",
                        ]), at: o + 2)
                s.add(
                    "sampleLocation",
                    named(ts >> 4, [1: "Finger", 2: "Alternate Site Test", 3: "Earlobe", 4: "Control solution", 15: "Not available"]),
                    at: o + 2)
            }
            if flags & 8 != 0 { let o = r.offset; s.add("sensorStatus", .flags(try u16(&r), []), at: o) }
        },
        // Core Vol 3, Part G, 3.3.3.3.
        SIGCodec(0x2902, "Client Characteristic Configuration") { r, s throws(DecodeError) in
            let v = try u16(&r)
            s.add("notifications", .bool(v & 1 != 0), at: 0)
            s.add("indications", .bool(v & 2 != 0), at: 0)
            if v & ~3 != 0 { s.problems.append("reserved bits set: \(hex(UInt16(truncatingIfNeeded: v)))") }
        },
        // Core Vol 3, Part G, 3.3.3.2.
        SIGCodec(0x2901, "Characteristic User Description") { r, s throws(DecodeError) in utf8String(&r, &s, "description") },
        // Core Vol 3, Part G, 3.3.3.5.
        SIGCodec(0x2904, "Characteristic Presentation Format") { r, s throws(DecodeError) in
            s.add("format", named(try u8(&r), presentationFormats), at: 0)
            s.add("exponent", .int(Int64(Int8(bitPattern: try r.readUInt8()))), at: 1)
            let unit = try u16(&r)
            s.add("unit", .named(unit, AssignedNumbers.name(for: BluetoothUUID(uuid16: UInt16(unit)))), at: 2)
            s.add("namespace", named(try u8(&r), [1: "Bluetooth SIG"]), at: 4)
            s.add("description", .int(try u16(&r)), at: 5)
        },
        // Core Vol 3, Part G, 3.3.1: properties, value handle, UUID (2 or 16 bytes).
        SIGCodec(0x2803, "Characteristic Declaration") { r, s throws(DecodeError) in
            s.add(
                "properties",
                flagNames(
                    try u8(&r),
                    [
                        "broadcast", "read", "writeWithoutResponse", "write", "notify", "indicate",
                        "authenticatedSignedWrites", "extendedProperties",
                    ]), at: 0)
            s.add("valueHandle", .int(try u16(&r)), at: 1)
            let width = r.remaining
            guard width == 2 || width == 16 else { throw .invalidSize(expected: 2, got: width) }
            let uuid = try BluetoothUUID(parsingLittleEndian: &r, width: width)
            s.add("uuid", .string(uuid.description + (AssignedNumbers.name(for: uuid).map { " (\($0))" } ?? "")), at: 3)
        },
    ]

    static let presentationFormats: [Int64: String] = [
        1: "boolean", 2: "uint2", 3: "uint4", 4: "uint8", 5: "uint12", 6: "uint16", 7: "uint24", 8: "uint32", 9: "uint48",
        10: "uint64", 11: "uint128", 12: "sint8", 13: "sint12", 14: "sint16", 15: "sint24", 16: "sint32", 17: "sint48",
        18: "sint64", 19: "sint128", 20: "float32", 21: "float64", 22: "SFLOAT", 23: "FLOAT", 24: "duint16",
        25: "utf8s", 26: "utf16s", 27: "struct",
    ]

    static let byUUID: [UInt16: SIGCodec] = Dictionary(all.map { ($0.uuid16, $0) }, uniquingKeysWith: { a, _ in a })

    /// The built-in codec for a SIG UUID, if any.
    public static func codec(for uuid: BluetoothUUID) -> SIGCodec? { uuid.uuid16.flatMap { byUUID[$0] } }
}
