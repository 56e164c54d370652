import BLECodecs
import BLECore

/// A characteristic recognized by the bytes of its values alone, for a handle discovery did not name: a standard
/// layout of the GATT Specification Supplement that is distinctive enough (exact length, fields in their ranges), or
/// the frame of a loaded codec whose checksum holds.
///
/// A handle is named from a layout only when every value it carried fits that layout and no other, and at least
/// ``minimumValues`` did (a short layout is weak alone). Battery Level (one byte, 0–100) is left out: any one-byte value
/// fits it.
public struct ValueLayout: Sendable {
    /// The characteristic's UUID; nil for a codec frame whose spec names several characteristics.
    public let uuid: BluetoothUUID?
    /// `Current Time`, or `bracelet frame`.
    public let name: String
    /// The fewest values that must fit before the layout names the handle.
    let minimumValues: Int
    /// What the bytes show when they fit (`2024-03-05 12:34:56`), or nil.
    let fit: @Sendable (UnsafeRawBufferPointer, ValueKind, Direction) -> LayoutFit?

    init(
        uuid: BluetoothUUID?, name: String, minimumValues: Int,
        fit: @escaping @Sendable (UnsafeRawBufferPointer, ValueKind, Direction) -> LayoutFit?
    ) {
        self.uuid = uuid
        self.name = name
        self.minimumValues = minimumValues
        self.fit = fit
    }

    /// A layout every fitting value of which fits whole (no checksum to fail).
    init(
        uuid: BluetoothUUID?, name: String, minimumValues: Int,
        match: @escaping @Sendable (UnsafeRawBufferPointer, ValueKind, Direction) -> String?
    ) {
        self.init(uuid: uuid, name: name, minimumValues: minimumValues) { v, k, d in match(v, k, d).map { LayoutFit(shown: $0) } }
    }

    /// What the bytes show when they fit whole, or nil (a damaged frame included).
    func match(_ v: UnsafeRawBufferPointer, _ kind: ValueKind, _ direction: Direction) -> String? {
        fit(v, kind, direction).flatMap { $0.damaged ? nil : $0.shown }
    }

    /// Current Time (0x2A2B, GATT Supplement 3.62): 10 bytes, a Date Time (3.70) with every field in its range (the
    /// "unknown" zeros excluded), a day of week 0–7 and the adjust reason's reserved bits 4–7 clear; read or notified.
    static let currentTime = ValueLayout(uuid: BluetoothUUID(uuid16: 0x2A2B), name: "Current Time", minimumValues: 1) { v, kind, _ in
        guard v.count == 10, kind == .readResponse || kind == .notification else { return nil }
        let year = Int(v[0]) | Int(v[1]) << 8
        guard (1582...9999).contains(year), (1...12).contains(v[2]), (1...31).contains(v[3]), v[4] < 24, v[5] < 60, v[6] < 60,
            v[7] <= 7, v[9] & 0xF0 == 0
        else { return nil }
        func two(_ b: UInt8) -> String { b < 10 ? "0\(b)" : "\(b)" }
        return "\(year)-\(two(v[2]))-\(two(v[3])) \(two(v[4])):\(two(v[5])):\(two(v[6]))"
    }

    /// PnP ID (0x2A50, GATT Supplement 3.170): 7 bytes read, vendor ID source 1 (Bluetooth SIG, and the vendor an
    /// assigned company) or 2 (USB-IF).
    static let pnpID = ValueLayout(uuid: BluetoothUUID(uuid16: 0x2A50), name: "PnP ID", minimumValues: 1) { v, kind, _ in
        guard v.count == 7, kind == .readResponse, v[0] == 1 || v[0] == 2 else { return nil }
        let vendor = UInt16(v[1]) | UInt16(v[2]) << 8
        if v[0] == 1 {
            guard let company = AssignedNumbers.companyName(vendor) else { return nil }
            return "Bluetooth SIG vendor \(hex(vendor, width: 4)) (\(company))"
        }
        return "USB-IF vendor \(hex(vendor, width: 4))"
    }

    /// Heart Rate Measurement (0x2A37, GATT Supplement 3.113): notified; flags with the reserved bits 5–7 clear, then
    /// exactly the fields they announce (a rate of 8 or 16 bits, energy expended, RR intervals in pairs of bytes), the
    /// rate 20–300 bpm. Short, so three values must fit.
    static let heartRateMeasurement = ValueLayout(uuid: BluetoothUUID(uuid16: 0x2A37), name: "Heart Rate Measurement", minimumValues: 3) {
        v, kind, _ in
        guard kind == .notification, v.count >= 2, v[0] & 0xE0 == 0 else { return nil }
        let flags = v[0]
        let fixed = 1 + (flags & 0x01 != 0 ? 2 : 1) + (flags & 0x08 != 0 ? 2 : 0)
        guard v.count >= fixed else { return nil }
        let rest = v.count - fixed
        guard flags & 0x10 != 0 ? rest >= 2 && rest % 2 == 0 : rest == 0 else { return nil }
        let rate = flags & 0x01 != 0 ? Int(v[1]) | Int(v[2]) << 8 : Int(v[1])
        guard (20...300).contains(rate) else { return nil }
        return "\(rate) bpm"
    }

    /// The standard layouts tried on every unnamed handle.
    public static let standard: [ValueLayout] = [currentTime, pnpID, heartRateMeasurement]

    /// A loaded codec's frame, when its spec checks a checksum: a value fits when the spec decodes it with no problem
    /// (prefix, expected fields, exact length and checksum all hold). Named as the spec's characteristic when it names
    /// one, else as the codec's frame.
    static func frame(of spec: DeclarativeCodec) -> ValueLayout? {
        guard spec.hasChecksum else { return nil }
        let characteristics = spec.matchedCharacteristics
        let service = spec.matchedServices.first
        let uuid = characteristics.count == 1 ? characteristics[0] : nil
        let name = uuid.map { "\(spec.name) characteristic \($0)" } ?? "\(spec.name) frame"
        return ValueLayout(uuid: uuid, name: name, minimumValues: 1) { (v, kind, direction) -> LayoutFit? in
            let context = CodecContext(
                service: service, characteristic: characteristics.first, direction: direction, operation: kind.operation)
            let decoded = spec.decodeUnconditionally(v, context: context)
            if decoded.valid { return LayoutFit(shown: "\(v.count) bytes, \(decoded.message), checksum good") }
            // The frame whole but for its checksum: a damaged value of this layout, not another layout's.
            guard decoded.problems.count == 1, decoded.problems[0].hasPrefix("bad checksum") else { return nil }
            return LayoutFit(shown: "\(v.count) bytes, \(decoded.message), bad checksum", damaged: true)
        }
    }

    /// The standard layouts, then a frame per loaded codec with a checksum.
    public static func all(codecs: CodecRegistry?) -> [ValueLayout] {
        standard + (codecs?.loadedSpecs.compactMap(frame(of:)) ?? [])
    }
}

extension ValueKind {
    /// The codec operation of a value of this kind.
    var operation: AttributeOperation {
        switch self {
        case .notification: .notify
        case .indication: .indicate
        case .writeRequest, .longWrite, .prepareWrite: .write
        case .writeCommand, .signedWriteCommand: .writeCommand
        case .readResponse, .readBlobResponse, .longRead: .read
        default: .unknown
        }
    }
}

/// How a value fits a layout: what it shows, and whether it is damaged (a codec frame whole but for a bad checksum:
/// it keeps the layout a candidate without counting as a value that fits).
public struct LayoutFit: Hashable, Sendable {
    public var shown: String
    public var damaged = false
}

/// A handle named from its values' layout (``ValueLayout``): what it is, and how that was learned.
public struct InferredLayout: Hashable, Sendable {
    public var uuid: BluetoothUUID?
    public var name: String
    /// `inferred from its value layout: Current Time (2024-03-05 12:34:56) at frame 123; all 4 values fit it, no other
    /// layout`.
    public var how: String
    /// The first value that fit.
    public var frame: Int
    public var values: Int
}

/// Follows which layouts every value of each unnamed handle fits (``GATTUsageTracker`` feeds it).
struct ValueLayoutTracker {
    let layouts: [ValueLayout]
    struct Evidence {
        /// Indices into `layouts` that every value so far fit; empty: nothing can name the handle.
        var candidates: [Int]
        var values = 0
        /// Values that fit a candidate only damaged (a bad checksum), per candidate, and the first such frame.
        var damaged: [Int: Int] = [:]
        var firstDamagedFrame: [Int: Int] = [:]
        var firstFrame: Int
        /// What the first value that fit whole showed, and its frame, per candidate.
        var shown: [Int: (text: String, frame: Int)] = [:]
    }
    private var evidence: [GATTUsageTracker.Key: Evidence] = [:]

    init(codecs: CodecRegistry?) { layouts = ValueLayout.all(codecs: codecs) }

    /// Only whole values of the peer's database whose type nothing named. Returns false once no layout can name the
    /// handle any more (the caller stops asking).
    mutating func observe(_ event: AttributeValueEvent, key: GATTUsageTracker.Key, value: RawSpan) -> Bool {
        guard event.characteristic == nil, event.serverIsPeer else { return false }
        guard event.offset == 0, event.kind != .readBlobResponse, event.kind != .prepareWrite, event.kind != .creditSDU else {
            return true
        }
        var e = evidence[key] ?? Evidence(candidates: Array(layouts.indices), firstFrame: event.frame)
        guard !e.candidates.isEmpty else { return false }
        var kept: [Int] = []
        value.withUnsafeBytes { bytes in
            for i in e.candidates {
                guard let fit = layouts[i].fit(bytes, event.kind, event.direction) else { continue }
                kept.append(i)
                if !fit.damaged, e.shown[i] == nil { e.shown[i] = (fit.shown, event.frame) }
                if fit.damaged {
                    e.damaged[i, default: 0] += 1
                    if e.firstDamagedFrame[i] == nil { e.firstDamagedFrame[i] = event.frame }
                }
            }
        }
        e.candidates = kept
        e.values += 1
        evidence[key] = e
        return !kept.isEmpty
    }

    /// The handles one layout, and only one, names: connection number → handle → what it is.
    var result: [Int: [UInt16: InferredLayout]] {
        var out: [Int: [UInt16: InferredLayout]] = [:]
        for (key, e) in evidence {
            guard e.candidates.count == 1, let i = e.candidates.first else { continue }
            let damaged = e.damaged[i] ?? 0
            let layout = layouts[i]
            guard e.values - damaged >= layout.minimumValues else { continue }
            var all = e.values == 1 ? "its only value fits it" : "all \(e.values) values fit it"
            if damaged > 0 {
                all += " (\(damaged) with a bad checksum, the first at frame \(e.firstDamagedFrame[i] ?? 0))"
            }
            let how =
                "inferred from its value layout: \(layout.name) (\(e.shown[i]?.text ?? "")) at frame \(e.shown[i]?.frame ?? e.firstFrame); \(all), no other layout"
            out[key.connection, default: [:]][key.handle] = InferredLayout(
                uuid: layout.uuid, name: layout.name, how: how, frame: e.shown[i]?.frame ?? e.firstFrame, values: e.values)
        }
        return out
    }
}
