import BLECore

/// Apple iBeacon, carried in manufacturer specific data of company 0x004C (Apple).
///
/// ```
/// company 4C 00 | type 02 | length 15 | proximity UUID (16, big-endian) | major (2, BE) | minor (2, BE) | measured power (1, dBm at 1 m)
/// ```
/// Apple's "Proximity Beacon Specification" (R1). Anything else from Apple is not an iBeacon.
public struct IBeacon: Hashable, Sendable, CustomStringConvertible {
    public static let companyID: UInt16 = 0x004C
    public var proximityUUID: BluetoothUUID
    public var major: UInt16
    public var minor: UInt16
    /// Calibrated RSSI at 1 m, dBm.
    public var measuredPower: Int8

    public init(proximityUUID: BluetoothUUID, major: UInt16, minor: UInt16, measuredPower: Int8) {
        self.proximityUUID = proximityUUID; self.major = major; self.minor = minor; self.measuredPower = measuredPower
    }

    /// Decodes the manufacturer data after the company identifier; nil unless it is `02 15` and 23 bytes.
    public init?(manufacturerData m: ManufacturerData) {
        guard m.companyID == IBeacon.companyID, m.data.count == 23, m.data[0] == 0x02, m.data[1] == 0x15 else { return nil }
        let d = m.data
        func be64(_ at: Int) -> UInt64 { (0..<8).reduce(UInt64(0)) { $0 << 8 | UInt64(d[at + $1]) } }
        proximityUUID = BluetoothUUID(high: be64(2), low: be64(10))
        major = UInt16(d[18]) << 8 | UInt16(d[19])
        minor = UInt16(d[20]) << 8 | UInt16(d[21])
        measuredPower = Int8(bitPattern: d[22])
    }

    /// The manufacturer specific data that carries this beacon.
    public var manufacturerData: ManufacturerData {
        var w = ByteWriter(capacity: 23)
        w.write(0x02); w.write(0x15)
        w.write(bigEndian: proximityUUID.high); w.write(bigEndian: proximityUUID.low)
        w.write(bigEndian: major); w.write(bigEndian: minor); w.write(UInt8(bitPattern: measuredPower))
        return ManufacturerData(companyID: IBeacon.companyID, data: w.bytes)
    }

    public var description: String { "iBeacon \(proximityUUID.uuidString) major=\(major) minor=\(minor) power=\(measuredPower) dBm" }
}

/// Eddystone telemetry, unencrypted version 0x00 (Eddystone-TLM specification).
public struct EddystoneTLM: Hashable, Sendable {
    /// Battery voltage in mV (0 when not supported).
    public var batteryMillivolts: UInt16
    /// Beacon temperature as signed 8.8 fixed point °C (0x8000 when not supported).
    public var temperatureRaw: Int16
    /// Advertising PDUs sent since power-up.
    public var advertisingCount: UInt32
    /// Time since power-up in 0.1 s.
    public var uptimeDeciseconds: UInt32

    public init(batteryMillivolts: UInt16, temperatureRaw: Int16, advertisingCount: UInt32, uptimeDeciseconds: UInt32) {
        self.batteryMillivolts = batteryMillivolts; self.temperatureRaw = temperatureRaw
        self.advertisingCount = advertisingCount; self.uptimeDeciseconds = uptimeDeciseconds
    }

    /// °C, nil when the beacon says it has no sensor (0x8000).
    public var temperatureCelsius: Double? { temperatureRaw == Int16.min ? nil : Double(temperatureRaw) / 256 }
}

/// An Eddystone frame, carried as service data of UUID 0xFEAA (Google Eddystone protocol specification).
///
/// ```
/// UID: 00 | tx power at 0 m (1) | namespace (10) | instance (6) | RFU (0 or 2)
/// URL: 10 | tx power at 0 m (1) | URL scheme (1) | encoded URL (0–17)
/// TLM: 20 | version 00 | battery mV (2, BE) | temperature 8.8 (2, BE) | adv count (4, BE) | uptime 0.1 s (4, BE)
///      20 | version 01 | encrypted TLM (12) | salt (2) | MIC (2)
/// EID: 30 | tx power at 0 m (1) | ephemeral identifier (8)
/// ```
/// Other frame types, and frames of the wrong size, are kept as ``other(frameType:bytes:)``.
public enum EddystoneFrame: Hashable, Sendable, CustomStringConvertible {
    case uid(txPower: Int8, namespace: [UInt8], instance: [UInt8], reserved: [UInt8])
    case url(txPower: Int8, scheme: UInt8, encoded: [UInt8])
    case tlm(EddystoneTLM)
    /// Encrypted TLM (version 0x01): the 16 bytes after the version (ETLM, salt, MIC).
    case encryptedTLM([UInt8])
    case eid(txPower: Int8, identifier: [UInt8])
    /// Any other frame: its type byte and the bytes after it.
    case other(frameType: UInt8, bytes: [UInt8])

    /// The Eddystone service UUID.
    public static let serviceUUID = BluetoothUUID(uuid16: 0xFEAA)

    /// Decodes the service data bytes (after the UUID); nil when empty.
    public init?(serviceData d: [UInt8]) {
        guard let type = d.first else { return nil }
        let body = Array(d.dropFirst())
        func be<T: FixedWidthInteger>(_ at: Int, _: T.Type) -> T {
            (0..<MemoryLayout<T>.size).reduce(T(0)) { $0 << 8 | T(body[at + $1]) }
        }
        switch type {
        case 0x00 where body.count == 17 || body.count == 19:
            self = .uid(
                txPower: Int8(bitPattern: body[0]), namespace: Array(body[1..<11]), instance: Array(body[11..<17]),
                reserved: Array(body[17...]))
        case 0x10 where (2...19).contains(body.count):
            self = .url(txPower: Int8(bitPattern: body[0]), scheme: body[1], encoded: Array(body[2...]))
        case 0x20 where body.count == 13 && body[0] == 0x00:
            self = .tlm(
                EddystoneTLM(
                    batteryMillivolts: be(1, UInt16.self), temperatureRaw: Int16(bitPattern: be(3, UInt16.self)),
                    advertisingCount: be(5, UInt32.self), uptimeDeciseconds: be(9, UInt32.self)))
        case 0x20 where body.count == 17 && body[0] == 0x01:
            self = .encryptedTLM(Array(body[1...]))
        case 0x30 where body.count == 9:
            self = .eid(txPower: Int8(bitPattern: body[0]), identifier: Array(body[1...]))
        default:
            self = .other(frameType: type, bytes: body)
        }
    }

    /// The service data bytes (after the UUID).
    public var serviceData: [UInt8] {
        var w = ByteWriter(capacity: 20)
        switch self {
        case let .uid(tx, namespace, instance, reserved):
            w.write(0x00); w.write(UInt8(bitPattern: tx)); w.write(contentsOf: namespace); w.write(contentsOf: instance)
            w.write(contentsOf: reserved)
        case let .url(tx, scheme, encoded):
            w.write(0x10); w.write(UInt8(bitPattern: tx)); w.write(scheme); w.write(contentsOf: encoded)
        case let .tlm(t):
            w.write(0x20); w.write(0x00); w.write(bigEndian: t.batteryMillivolts); w.write(bigEndian: t.temperatureRaw)
            w.write(bigEndian: t.advertisingCount); w.write(bigEndian: t.uptimeDeciseconds)
        case let .encryptedTLM(b):
            w.write(0x20); w.write(0x01); w.write(contentsOf: b)
        case let .eid(tx, id):
            w.write(0x30); w.write(UInt8(bitPattern: tx)); w.write(contentsOf: id)
        case let .other(type, b):
            w.write(type); w.write(contentsOf: b)
        }
        return w.bytes
    }

    /// `UID`, `URL`, `TLM`, `EID`, or `frame 0x40`.
    public var kind: String {
        switch self {
        case .uid: "UID"
        case .url: "URL"
        case .tlm, .encryptedTLM: "TLM"
        case .eid: "EID"
        case let .other(t, _): "frame \(hex(t))"
        }
    }

    public var description: String {
        switch self {
        case let .uid(tx, ns, inst, _): "Eddystone-UID \(hexString(ns))/\(hexString(inst)) tx=\(tx) dBm"
        case let .url(tx, scheme, encoded): "Eddystone-URL \(EddystoneFrame.decodeURL(scheme: scheme, encoded: encoded)) tx=\(tx) dBm"
        case let .tlm(t):
            "Eddystone-TLM battery=\(t.batteryMillivolts) mV temp=\(t.temperatureCelsius.map { String(fractionDigits: 2, $0) + " °C" } ?? "n/a") advs=\(t.advertisingCount) uptime=\(String(fractionDigits: 1, Double(t.uptimeDeciseconds) / 10)) s"
        case .encryptedTLM: "Eddystone-TLM (encrypted)"
        case let .eid(tx, id): "Eddystone-EID \(hexString(id)) tx=\(tx) dBm"
        case let .other(t, b): "Eddystone frame \(hex(t)) \(hexString(b))"
        }
    }

    /// URL scheme prefixes (Eddystone-URL, "URL Scheme Prefix").
    public static let urlSchemes = ["http://www.", "https://www.", "http://", "https://"]
    /// HTTP URL encoding expansions for bytes 0x00–0x0D (Eddystone-URL, "Eddystone-URL HTTP URL encoding").
    public static let urlExpansions = [
        ".com/", ".org/", ".edu/", ".net/", ".info/", ".biz/", ".gov/",
        ".com", ".org", ".edu", ".net", ".info", ".biz", ".gov",
    ]

    /// The URL an Eddystone-URL frame encodes; unknown scheme or reserved bytes print as `<0x0e>`.
    public static func decodeURL(scheme: UInt8, encoded: [UInt8]) -> String {
        var s = Int(scheme) < urlSchemes.count ? urlSchemes[Int(scheme)] : "<\(hex(scheme))>"
        for b in encoded {
            if Int(b) < urlExpansions.count {
                s += urlExpansions[Int(b)]
            } else if (0x21...0x7E).contains(b) {
                s.unicodeScalars.append(Unicode.Scalar(b))
            } else {
                s += "<\(hex(b))>"
            }
        }
        return s
    }

    /// Encodes a URL for an Eddystone-URL frame (longest scheme prefix, then greedy expansions);
    /// nil when no scheme matches or a character is not printable ASCII.
    public static func encodeURL(_ url: String) -> (scheme: UInt8, encoded: [UInt8])? {
        guard
            let scheme = urlSchemes.indices.filter({ url.hasPrefix(urlSchemes[$0]) })
                .max(by: { urlSchemes[$0].count < urlSchemes[$1].count })
        else { return nil }
        var rest = Substring(url.dropFirst(urlSchemes[scheme].count))
        var out: [UInt8] = []
        while !rest.isEmpty {
            if let i = urlExpansions.indices.filter({ rest.hasPrefix(urlExpansions[$0]) })
                .max(by: { urlExpansions[$0].count < urlExpansions[$1].count })
            {
                out.append(UInt8(i))
                rest = rest.dropFirst(urlExpansions[i].count)
            } else {
                guard let a = rest.first?.asciiValue, (0x21...0x7E).contains(a) else { return nil }
                out.append(a)
                rest = rest.dropFirst()
            }
        }
        return (UInt8(scheme), out)
    }
}
