import BLECapture
import BLECodecs
import BLECore
import BLEProtocols

/// One advertiser as the scanner saw it: where, how often, how strong, and what it advertised.
///
/// Lists keep distinct values only, in first-seen order, up to ``AdvertisingTracker/Options/maxDistinctValues``
/// each; values past the cap are counted in ``droppedValues``.
public struct AdvertisingDevice: Hashable, Sendable {
    /// Devices are told apart by address and address type.
    public struct Key: Hashable, Sendable {
        public var address: BDAddress
        public var addressType: LEAddressType
        public init(address: BDAddress, addressType: LEAddressType) { self.address = address; self.addressType = addressType }
    }

    public var address: BDAddress
    public var addressType: LEAddressType
    /// Advertising reports (or PDUs) seen from this device.
    public var reports = 0
    public var firstFrame: Int
    public var lastFrame: Int
    public var firstTime: Timestamp
    public var lastTime: Timestamp
    /// RSSI in dBm over the reports that had one (HCI 127 = not available is left out).
    public var rssiMin: Int8?
    public var rssiMax: Int8?
    public var rssiSum: Int64 = 0
    public var rssiCount = 0
    /// Reports per event type (ADV_IND, SCAN_RSP, ADV_EXT(…)).
    public var eventTypes: [AdvertisingEventType: Int] = [:]
    /// Local names (complete or shortened).
    public var names: [String] = []
    /// Union of the Flags seen.
    public var flags: ADFlags?
    /// Service UUIDs from the complete/incomplete lists.
    public var services: [BluetoothUUID] = []
    /// UUIDs that carried service data.
    public var serviceDataUUIDs: [BluetoothUUID] = []
    /// Solicited service UUIDs.
    public var solicitedServices: [BluetoothUUID] = []
    /// Company identifiers of manufacturer specific data.
    public var manufacturers: [UInt16] = []
    public var iBeacons: [IBeacon] = []
    /// Eddystone UID, URL and EID frames (and unknown frame types); TLM is kept in ``eddystoneTLM``.
    public var eddystone: [EddystoneFrame] = []
    /// The latest Eddystone telemetry (it changes with every frame).
    public var eddystoneTLM: EddystoneFrame?
    public var appearances: [UInt16] = []
    /// TX Power Level AD values, dBm.
    public var txPowerLevels: [Int8] = []
    /// TX power reported by the controller in extended reports, dBm (127 = not available is left out).
    public var reportedTxPowers: [Int8] = []
    public var uris: [String] = []
    /// Reports whose AD data had a problem, and the first such problem.
    public var malformedReports = 0
    public var firstProblem: String?
    /// Distinct values not kept because a list was full.
    public var droppedValues = 0

    public init(address: BDAddress, addressType: LEAddressType, frame: Int, timestamp: Timestamp) {
        self.address = address
        self.addressType = addressType
        firstFrame = frame
        lastFrame = frame
        firstTime = timestamp
        lastTime = timestamp
    }

    public var key: Key { Key(address: address, addressType: addressType) }

    /// Mean RSSI in dBm, nil when no report had one.
    public var rssiAverage: Double? { rssiCount == 0 ? nil : Double(rssiSum) / Double(rssiCount) }

    /// The first complete-or-shortened name seen.
    public var name: String? { names.first }

    /// A short human summary of what the device advertises, e.g.
    /// `iBeacon E2C5…/1/2; services 0x180D Heart Rate; Apple, Inc.; appearance Heart rate belt; tx 4 dBm`.
    public var advertisesSummary: String {
        var parts: [String] = []
        for b in iBeacons { parts.append("iBeacon \(b.proximityUUID.uuidString) \(b.major)/\(b.minor)") }
        for e in eddystone {
            switch e {
            case let .url(_, scheme, encoded): parts.append("Eddystone-URL " + EddystoneFrame.decodeURL(scheme: scheme, encoded: encoded))
            case let .uid(_, ns, inst, _): parts.append("Eddystone-UID \(hexString(ns))/\(hexString(inst))")
            case let .eid(_, id): parts.append("Eddystone-EID \(hexString(id))")
            default: parts.append("Eddystone \(e.kind)")
            }
        }
        if eddystoneTLM != nil { parts.append("Eddystone-TLM") }
        if !services.isEmpty { parts.append("services " + services.map(serviceLabel).joined(separator: ", ")) }
        let dataOnly = serviceDataUUIDs.filter { !services.contains($0) && $0 != EddystoneFrame.serviceUUID }
        if !dataOnly.isEmpty { parts.append("service data " + dataOnly.map(serviceLabel).joined(separator: ", ")) }
        if !solicitedServices.isEmpty { parts.append("solicits " + solicitedServices.map(serviceLabel).joined(separator: ", ")) }
        if !manufacturers.isEmpty {
            parts.append(
                manufacturers.map { id in AssignedNumbers.companyName(id).map { "\($0) (\(hex(id)))" } ?? "company \(hex(id))" }
                    .joined(separator: ", "))
        }
        for a in appearances { parts.append("appearance " + (AssignedNumbers.appearanceName(a) ?? hex(a))) }
        if !txPowerLevels.isEmpty { parts.append("tx " + txPowerLevels.map { "\($0)" }.joined(separator: "/") + " dBm") }
        for u in uris { parts.append(u) }
        return parts.joined(separator: "; ")
    }
}

/// The devices seen advertising in a capture and the counts around them: the result of an ``AdvertisingTracker``.
public struct AdvertisingResult: Hashable, Sendable {
    /// Devices in the order they were first seen.
    public var devices: [AdvertisingDevice]
    public var findings: [Finding]
    /// Findings past ``AdvertisingTracker/Options/maxFindings``, counted only.
    public var suppressedFindings: Int
    /// Reports observed (including those of devices past the cap).
    public var reportCount: Int
    /// HCI events that carried advertising reports.
    public var advertisingEvents: Int
    /// Reports from devices not tracked because `maxDevices` was reached.
    public var untrackedReports: Int
    /// The cap on devices the tracker ran with (``AdvertisingTracker/Options/maxDevices``).
    public var maxDevices: Int
}

/// Collects the devices seen advertising in a capture: from HCI LE (Extended) Advertising Reports, and
/// (through ``observe(address:addressType:eventType:rssi:data:frame:timestamp:txPower:)``) from any other
/// source of advertising PDUs, such as link-layer air captures.
///
/// Runs beside the ``Analyzer`` on the same records; it keeps no reference to them. Memory is bounded:
/// at most ``Options/maxDevices`` devices (later ones are counted, with one finding), and per device
/// only distinct values up to ``Options/maxDistinctValues`` per list.
public struct AdvertisingTracker {
    /// Decodes link-layer records of air captures.
    private var airTracker = LinkLayerTracker()

    public struct Options: Sendable {
        public var maxDevices: Int
        public var maxDistinctValues: Int
        /// Findings kept; later ones are counted in ``AdvertisingTracker/suppressedFindings``.
        public var maxFindings: Int
        public init(maxDevices: Int = 100_000, maxDistinctValues: Int = 16, maxFindings: Int = 1000) {
            self.maxDevices = maxDevices; self.maxDistinctValues = maxDistinctValues; self.maxFindings = maxFindings
        }
    }

    public let options: Options
    /// Devices in the order they were first seen.
    public private(set) var devices: [AdvertisingDevice] = []
    private var index: [AdvertisingDevice.Key: Int] = [:]
    public private(set) var recordFindings: [Finding] = []
    /// What was met reading the advertising: malformed data, and for air captures advertising packets whose CRC failed.
    public var findings: [Finding] { recordFindings + (airTracker.advertisingCRCFinding.map { [$0] } ?? []) }
    public private(set) var suppressedFindings = 0
    /// Reports observed (including those of devices past the cap).
    public private(set) var reportCount = 0
    /// HCI events that carried advertising reports.
    public private(set) var advertisingEvents = 0
    /// Reports from devices not tracked because ``Options/maxDevices`` was reached.
    public private(set) var untrackedReports = 0
    /// Extended advertising data still being reassembled, per advertiser and SID.
    private var fragments: [FragmentKey: [UInt8]] = [:]

    struct FragmentKey: Hashable, Sendable {
        var device: AdvertisingDevice.Key
        var sid: UInt8
    }

    public init(options: Options = Options()) { self.options = options }

    /// The device with this address and type, if it was seen.
    public func device(_ address: BDAddress, addressType: LEAddressType) -> AdvertisingDevice? {
        index[AdvertisingDevice.Key(address: address, addressType: addressType)].map { devices[$0] }
    }

    /// Feeds one capture record: HCI LE Advertising Report (7.7.65.2) and LE Extended Advertising
    /// Report (7.7.65.13) events are taken apart report by report; every other record is ignored.
    ///
    /// Extended reports whose data status says "incomplete, more to come" are counted as reports at
    /// once, and their data is parsed when the last fragment arrives (status complete or truncated).
    /// A truncated record, or one whose parameters do not parse, gives a finding and no reports.
    public mutating func process(_ record: CaptureRecord) {
        if record.kind == .linkLayer {
            processAir(record)
            return
        }
        guard record.kind == .event else { return }
        let b = record.bytes
        guard b.count >= 3, b[0] == 0x3E, b[2] == 0x02 || b[2] == 0x0D else { return }
        advertisingEvents += 1
        if record.isTruncated {
            addFinding(Finding(.warning, .advertisingReportTruncated, frame: record.frame, offset: record.fileOffset))
            return
        }
        var reader = record.reader
        let parameters: HCIEventParameters
        do throws(DecodeError) {
            let packet = try HCIEventPacket(parsing: &reader)
            parameters = try packet.decodeParameters()
        } catch {
            addFinding(Finding(.warning, .malformed("advertising report", error), frame: record.frame, offset: record.fileOffset))
            return
        }
        switch parameters {
        case let .leAdvertisingReport(event):
            for r in event.reports {
                observe(
                    address: r.address, addressType: r.addressType, eventType: AdvertisingEventType(legacyReportEventType: r.eventType),
                    rssi: r.rssi == 127 ? nil : r.rssi, data: r.data, frame: record.frame, timestamp: record.timestamp)
            }
        case let .leExtendedAdvertisingReport(event):
            for r in event.reports {
                let key = FragmentKey(device: .init(address: r.address, addressType: r.addressType), sid: r.advertisingSID)
                var data = r.data
                if r.dataStatus == 1 {
                    var pending = fragments[key, default: []]
                    if pending.count + data.count <= 1650 { pending += data }  // the largest extended advertising data
                    fragments[key] = pending
                    data = []
                } else if let pending = fragments.removeValue(forKey: key) {
                    data = pending + data
                }
                observe(
                    address: r.address, addressType: r.addressType, eventType: AdvertisingEventType(extendedReportEventType: r.eventType),
                    rssi: r.rssi == 127 ? nil : r.rssi, data: data, frame: record.frame, timestamp: record.timestamp,
                    txPower: r.txPower == 127 ? nil : r.txPower)
            }
        default:
            break
        }
    }

    /// Records one advertisement: the entry point for every source of advertising PDUs.
    ///
    /// HCI reports come through ``process(_:)``; a link-layer decoder calls this directly for ADV_IND,
    /// ADV_DIRECT_IND, ADV_NONCONN_IND, ADV_SCAN_IND, SCAN_RSP (AdvA, its TxAdd as `addressType` .public/.random,
    /// AdvData) and for AUX_ADV_IND/AUX_SCAN_RSP/AUX_CHAIN_IND data once reassembled, with
    /// ``AdvertisingEventType/init(linkLayerPDUType:)`` or ``AdvertisingEventType/init(extendedAdvMode:directed:scanResponse:)``.
    ///
    /// - Parameters:
    ///   - rssi: dBm, nil when the source has none.
    ///   - data: the AD structures (advertising or scan response data); may be empty.
    ///   - frame: 1-based frame number of the record it came in.
    ///   - txPower: TX power the controller reported (extended reports), dBm; not the TX Power Level AD type.
    /// Air captures: advertising-channel PDUs (ADV_IND, SCAN_RSP, …) decoded by the link-layer tracker
    /// (bad CRCs left out) go through the same AD decoder as HCI reports.
    private mutating func processAir(_ record: CaptureRecord) {
        var ignored: [Finding] = []
        var reports: [(BDAddress, LEAddressType, AdvertisingEventType, Int8?, [UInt8], Int, Timestamp)] = []
        airTracker.process(record, findings: &ignored) { output in
            guard case .advertising(let a) = output, let advertiser = a.advertiser,
                let type = AdvertisingEventType(linkLayerPDUType: a.type.rawValue)
            else { return }
            reports.append(
                (
                    BDAddress(advertiser.value), advertiser.isRandom ? .random : .public, type,
                    a.rssi.map { Int8(clamping: $0) }, Array(a.advertisingData), a.frame, a.timestamp
                ))
        }
        for r in reports {
            advertisingEvents += 1
            observe(address: r.0, addressType: r.1, eventType: r.2, rssi: r.3, data: r.4, frame: r.5, timestamp: r.6)
        }
    }

    public mutating func observe(
        address: BDAddress, addressType: LEAddressType, eventType: AdvertisingEventType, rssi: Int8?,
        data: [UInt8], frame: Int, timestamp: Timestamp, txPower: Int8? = nil
    ) {
        reportCount += 1
        let key = AdvertisingDevice.Key(address: address, addressType: addressType)
        let i: Int
        if let existing = index[key] {
            i = existing
        } else {
            guard devices.count < options.maxDevices else {
                if untrackedReports == 0 {
                    addFinding(Finding(.warning, .tooManyAdvertisers(options.maxDevices), frame: frame))
                }
                untrackedReports += 1
                return
            }
            i = devices.count
            devices.append(AdvertisingDevice(address: address, addressType: addressType, frame: frame, timestamp: timestamp))
            index[key] = i
        }
        let cap = options.maxDistinctValues
        var problem: String? = nil
        // Mutate in place (no copy of the device per report).
        withDevice(i) { d in
            d.reports += 1
            d.lastFrame = frame
            d.lastTime = timestamp
            if let rssi {
                d.rssiMin = min(d.rssiMin ?? rssi, rssi)
                d.rssiMax = max(d.rssiMax ?? rssi, rssi)
                d.rssiSum += Int64(rssi)
                d.rssiCount += 1
            }
            d.eventTypes[eventType, default: 0] += 1
            if let txPower { AdvertisingTracker.insert(txPower, into: &d.reportedTxPowers, cap: cap, dropped: &d.droppedValues) }
            guard !data.isEmpty else { return }
            let ad = AdvertisingData(bytes: data)
            if let p = ad.problems.first {
                d.malformedReports += 1
                if d.firstProblem == nil { d.firstProblem = p; problem = p }
            }
            for element in ad.elements {
                switch element {
                case let .flags(f): d.flags = (d.flags ?? []).union(f)
                case let .serviceUUIDs(list):
                    for u in list.uuids {
                        if list.kind == .solicitation {
                            AdvertisingTracker.insert(u, into: &d.solicitedServices, cap: cap, dropped: &d.droppedValues)
                        } else {
                            AdvertisingTracker.insert(u, into: &d.services, cap: cap, dropped: &d.droppedValues)
                        }
                    }
                case let .localName(n, _):
                    // A name of NULs only (`08 00` in a real capture) names nothing.
                    let name = deviceName(n)
                    if !name.isEmpty { AdvertisingTracker.insert(name, into: &d.names, cap: cap, dropped: &d.droppedValues) }
                case let .txPowerLevel(p): AdvertisingTracker.insert(p, into: &d.txPowerLevels, cap: cap, dropped: &d.droppedValues)
                case let .serviceData(sd):
                    AdvertisingTracker.insert(sd.uuid, into: &d.serviceDataUUIDs, cap: cap, dropped: &d.droppedValues)
                    if let e = sd.eddystone {
                        switch e {
                        case .tlm, .encryptedTLM: d.eddystoneTLM = e
                        default: AdvertisingTracker.insert(e, into: &d.eddystone, cap: cap, dropped: &d.droppedValues)
                        }
                    }
                case let .appearance(a): AdvertisingTracker.insert(a, into: &d.appearances, cap: cap, dropped: &d.droppedValues)
                case let .uri(u): AdvertisingTracker.insert(u.description, into: &d.uris, cap: cap, dropped: &d.droppedValues)
                case let .manufacturerData(m):
                    AdvertisingTracker.insert(m.companyID, into: &d.manufacturers, cap: cap, dropped: &d.droppedValues)
                    if let b = m.iBeacon { AdvertisingTracker.insert(b, into: &d.iBeacons, cap: cap, dropped: &d.droppedValues) }
                default: break
                }
            }
        }
        if let problem {
            addFinding(Finding(.info, .malformedAdvertisingData(address: address, problem), frame: frame))
        }
    }

    private mutating func withDevice(_ i: Int, _ body: (inout AdvertisingDevice) -> Void) {
        devices.withUnsafeMutableBufferPointer { body(&$0[i]) }
    }

    static func insert<T: Equatable>(_ value: T, into list: inout [T], cap: Int, dropped: inout Int) {
        guard !list.contains(value) else { return }
        if list.count < cap { list.append(value) } else { dropped += 1 }
    }

    private mutating func addFinding(_ f: Finding) {
        if recordFindings.count < options.maxFindings { recordFindings.append(f) } else { suppressedFindings += 1 }
    }

    /// What the tracker collected, as a value to keep (``AdvertisingResult``): the tracker itself holds a link-layer
    /// decoder whose scratch buffer its copies share.
    public var result: AdvertisingResult {
        AdvertisingResult(
            devices: devices, findings: findings, suppressedFindings: suppressedFindings, reportCount: reportCount,
            advertisingEvents: advertisingEvents, untrackedReports: untrackedReports, maxDevices: options.maxDevices)
    }

    /// Feeds every record of a capture (the convenience for tests and the CLI).
    public static func track(_ capture: CaptureFile, options: Options = Options()) -> AdvertisingTracker {
        var tracker = AdvertisingTracker(options: options)
        while let record = capture.next() { tracker.process(record) }
        return tracker
    }
}

extension FindingKind {
    static func tooManyAdvertisers(_ n: Int) -> FindingKind {
        FindingKind(.advertsTooManyDevices, message: "more than \(n) advertising devices: later ones are counted, not tracked")
    }
    static func malformedAdvertisingData(address: BDAddress, _ problem: String) -> FindingKind {
        FindingKind(.advertsMalformedData, message: "advertising data from \(address): \(problem)")
    }
    static let advertisingReportTruncated = FindingKind(
        .advertsTruncatedReport,
        message: "advertising report cut by the capturer: not decoded")
}
