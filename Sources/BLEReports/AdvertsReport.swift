import BLEAnalysis
import BLECapture
import BLECodecs
import BLECore
import BLEProtocols

/// How `blescope adverts` orders devices.
public enum AdvertsSort: String, Sendable, CaseIterable {
    /// Strongest average RSSI first (devices without RSSI last).
    case rssi
    /// Most reports first.
    case count
    /// By name (devices without a name last), then address.
    case name
}

/// The devices seen advertising, as an aligned table or JSON.
///
/// JSON (one object):
/// ```
/// {"file": "x.log", "events": 412, "reports": 412, "untrackedReports": 0,
///  "devices": [{"address": "A4:C1:38:BF:6F:AB", "addressType": "public", "names": ["GVH5072_6FAB"],
///    "rssi": {"min": -87, "avg": -62.3, "max": -49} | null, "count": 24,
///    "firstFrame": 133, "lastFrame": 900, "firstTime": 1700000000.123456, "lastTime": …,
///    "eventTypes": {"ADV_IND": 12, "SCAN_RSP": 12}, "flags": ["LE General Discoverable", …] | null,
///    "services": [{"uuid": "0x180D", "name": "Heart Rate" | null}], "serviceData": [same], "solicitedServices": [same],
///    "manufacturers": [{"id": 76, "name": "Apple, Inc." | null}],
///    "iBeacons": [{"uuid": "E2C56DB5-…", "major": 1, "minor": 2, "measuredPower": -59}],
///    "eddystone": [{"frame": "URL", "description": "Eddystone-URL https://…"}], "eddystoneTLM": {…} | null,
///    "appearances": [{"value": 833, "name": "Heart rate belt" | null}], "txPowerLevels": [-4], "reportedTxPowers": [],
///    "uris": ["https://example.com/"], "advertises": "<the table's summary>",
///    "malformedReports": 0, "firstProblem": null, "droppedValues": 0}, …],
///  "findings": [{"severity": "warning", "code": "…", "message": "…", "frame": 12 | null, "offset": 4096 | null}]}
/// ```
/// Times are seconds since the Unix epoch with µs precision; `count` is the number of reports.
public struct AdvertsReport: Sendable {
    public var file: String
    public var adverts: AdvertisingResult
    /// Findings of the capture reader and the tracker.
    public var findings: [Finding]

    /// Identity addresses of the devices whose resolvable private addresses a known IRK resolves (by address).
    public var identities: [BDAddress: String] = [:]

    public init(file: String, adverts: AdvertisingResult, findings: [Finding], resolver: IdentityResolver? = nil) {
        self.file = file
        self.adverts = adverts
        self.findings = findings
        if var resolver {
            for d in adverts.devices where d.addressType == .random {
                if let id = resolver.identity(of: d.address.value) { identities[d.address] = id.description }
            }
        }
    }

    /// Reads a whole capture through an ``AdvertisingTracker`` (`blescope adverts`): its devices, and the findings of
    /// the reader and the tracker.
    public init(
        reading capture: CaptureFile, file: String, resolver: IdentityResolver? = nil, progress: ((Int, Int64) -> Void)? = nil
    ) {
        var tracker = AdvertisingTracker()
        while let record = capture.next() {
            tracker.process(record)
            progress?(record.frame, capture.bytesConsumed)
        }
        self.init(file: file, adverts: tracker.result, findings: capture.findings + tracker.findings, resolver: resolver)
    }

    /// The devices in the requested order (ties by address, then address type).
    public func sortedDevices(_ sort: AdvertsSort) -> [AdvertisingDevice] {
        func tie(_ a: AdvertisingDevice, _ b: AdvertisingDevice) -> Bool {
            (a.address, a.addressType.rawValue) < (b.address, b.addressType.rawValue)
        }
        return adverts.devices.sorted { a, b in
            switch sort {
            case .count:
                return a.reports != b.reports ? a.reports > b.reports : tie(a, b)
            case .rssi:
                switch (a.rssiAverage, b.rssiAverage) {
                case let (x?, y?) where x != y: return x > y
                case (nil, _?): return false
                case (_?, nil): return true
                default: return tie(a, b)
                }
            case .name:
                switch (a.name, b.name) {
                case let (x?, y?) where x != y: return x < y
                case (nil, _?): return false
                case (_?, nil): return true
                default: return tie(a, b)
                }
            }
        }
    }

    static func rssiText(_ d: AdvertisingDevice) -> String {
        guard let lo = d.rssiMin, let hi = d.rssiMax, let avg = d.rssiAverage else { return "-" }
        return "\(lo)/\(String(fractionDigits: 1, avg))/\(hi)"
    }

    /// The aligned table, a summary line, and the findings.
    public func text(terminal: Terminal, sort: AdvertsSort = .count) -> String {
        let devices = sortedDevices(sort)
        let counts =
            ": \(devices.count) device\(devices.count == 1 ? "" : "s"), "
            + "\(adverts.reportCount) advertising report\(adverts.reportCount == 1 ? "" : "s") in \(adverts.advertisingEvents) event\(adverts.advertisingEvents == 1 ? "" : "s")"
        // The path whole (it is copied from here); the counts under it when both do not fit on one line.
        var out = terminal.paint(file, .bold)
        if let width = terminal.width, file.count + counts.count > width {
            out += "\n  " + counts.dropFirst(2) + "\n"
        } else {
            out += counts + "\n"
        }
        if adverts.untrackedReports > 0 {
            out += "\(adverts.untrackedReports) reports from devices past the limit of \(adverts.maxDevices) not tracked\n"
        }
        if !devices.isEmpty {
            let names = devices.map { d in
                TextWidth.shortenMiddle(d.names.joined(separator: " / "), to: 32)
                    + (identities[d.address].map { " (identity \($0))" } ?? "")
            }
            let types = devices.map { $0.addressType.description }
            let rssis = devices.map(AdvertsReport.rssiText)
            let counts = devices.map { String($0.reports) }
            let wName = max(4, names.map(\.count).max() ?? 0)
            let wType = max(4, types.map(\.count).max() ?? 0)
            let wRSSI = max(16, rssis.map(\.count).max() ?? 0)
            let wCount = max(5, counts.map(\.count).max() ?? 0)
            out +=
                "\n"
                + terminal.paint(
                    "ADDRESS".padding(to: 17) + "  " + "TYPE".padding(to: wType) + "  " + "NAME".padding(to: wName)
                        + "  " + "RSSI min/avg/max".padding(to: wRSSI) + "  " + "COUNT".leftPadding(to: wCount) + "  ADVERTISES", .bold)
                + "\n"
            for (i, d) in devices.enumerated() {
                let line =
                    d.address.description + "  " + types[i].padding(to: wType) + "  " + names[i].padding(to: wName) + "  "
                    + rssis[i].padding(to: wRSSI) + "  " + counts[i].leftPadding(to: wCount) + "  " + d.advertisesSummary
                out += line.trimmingWhitespace() + "\n"
            }
        }
        if !findings.isEmpty || adverts.suppressedFindings > 0 {
            out += "\n" + terminal.paint("Findings (\(findings.count + adverts.suppressedFindings))", .bold) + "\n"
            for f in findings {
                let location = f.frame.map { " (frame \($0))" } ?? ""
                out += "  " + terminal.severity(f.severity) + ": " + f.message + location + "\n"
            }
            if adverts.suppressedFindings > 0 { out += "  … and \(adverts.suppressedFindings) more\n" }
        }
        return out
    }

    /// The JSON object documented on the type, with a trailing newline.
    public func json(sort: AdvertsSort = .count) -> String {
        var w = JSONWriter(capacity: 4096)
        w.beginObject()
        w.field("file", file)
        w.field("events", adverts.advertisingEvents)
        w.field("reports", adverts.reportCount)
        w.field("untrackedReports", adverts.untrackedReports)
        w.beginArray("devices")
        for d in sortedDevices(sort) { AdvertsReport.write(d, identity: identities[d.address], to: &w) }
        w.endArray()
        // The shared writer: `offset` too (null when the finding has none), as schemas/adverts.schema.json requires.
        writeFindings(findings, into: &w)
        w.endObject()
        return w.string + "\n"
    }

    static func write(_ d: AdvertisingDevice, identity: String? = nil, to w: inout JSONWriter) {
        w.beginObject()
        w.field("address", d.address.description)
        w.field("addressType", d.addressType.description)
        w.field("identity", identity)
        w.beginArray("names")
        for n in d.names { w.value(n) }
        w.endArray()
        if let lo = d.rssiMin, let hi = d.rssiMax {
            w.beginObject("rssi")
            w.field("min", lo)
            w.field("avg", d.rssiAverage, decimals: 1)
            w.field("max", hi)
            w.endObject()
        } else {
            w.fieldNull("rssi")
        }
        w.field("count", d.reports)
        w.field("firstFrame", d.firstFrame)
        w.field("lastFrame", d.lastFrame)
        w.field("firstTime", d.firstTime)
        w.field("lastTime", d.lastTime)
        w.beginObject("eventTypes")
        for (type, n) in d.eventTypes.sorted(by: { $0.key < $1.key }) { w.field(type.description, n) }
        w.endObject()
        if let flags = d.flags {
            w.beginArray("flags")
            for n in flags.names { w.value(n) }
            w.endArray()
        } else {
            w.fieldNull("flags")
        }
        writeAdvertisedData(d, to: &w)
        w.field("advertises", d.advertisesSummary)
        w.field("malformedReports", d.malformedReports)
        w.field("firstProblem", d.firstProblem)
        w.field("droppedValues", d.droppedValues)
        w.endObject()
    }

    /// What the device's advertising data said: services, manufacturers, beacons, appearances, TX powers, URIs.
    static func writeAdvertisedData(_ d: AdvertisingDevice, to w: inout JSONWriter) {
        func uuids(_ key: String, _ list: [BluetoothUUID]) {
            w.beginArray(key)
            for u in list {
                w.beginObject()
                w.field("uuid", u.description)
                w.field("name", AssignedNumbers.name(for: u))
                w.endObject()
            }
            w.endArray()
        }
        func ints<T: BinaryInteger>(_ key: String, _ list: [T]) {
            w.beginArray(key)
            for v in list { w.value(v) }
            w.endArray()
        }
        uuids("services", d.services)
        uuids("serviceData", d.serviceDataUUIDs)
        uuids("solicitedServices", d.solicitedServices)
        w.beginArray("manufacturers")
        for id in d.manufacturers {
            w.beginObject()
            w.field("id", id)
            w.field("name", AssignedNumbers.companyName(id))
            w.endObject()
        }
        w.endArray()
        w.beginArray("iBeacons")
        for b in d.iBeacons {
            w.beginObject()
            w.field("uuid", b.proximityUUID.uuidString)
            w.field("major", b.major)
            w.field("minor", b.minor)
            w.field("measuredPower", b.measuredPower)
            w.endObject()
        }
        w.endArray()
        w.beginArray("eddystone")
        for e in d.eddystone {
            w.beginObject()
            w.field("frame", e.kind)
            w.field("description", e.description)
            w.endObject()
        }
        w.endArray()
        if let tlm = d.eddystoneTLM {
            w.beginObject("eddystoneTLM")
            w.field("frame", tlm.kind)
            w.field("description", tlm.description)
            w.endObject()
        } else {
            w.fieldNull("eddystoneTLM")
        }
        w.beginArray("appearances")
        for a in d.appearances {
            w.beginObject()
            w.field("value", a)
            w.field("name", AssignedNumbers.appearanceName(a))
            w.endObject()
        }
        w.endArray()
        ints("txPowerLevels", d.txPowerLevels)
        ints("reportedTxPowers", d.reportedTxPowers)
        w.beginArray("uris")
        for u in d.uris { w.value(u) }
        w.endArray()
    }
}
