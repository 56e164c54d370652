import BLECore

/// Typed parameters of the HCI events blescope decodes (Core Spec 5.4 Vol 4, Part E, 7.7): every event declared once
/// (``HCIParameterSet``) as ``declared(_:)``; the lists and the events named by a command (Command Complete and Status,
/// Number Of Completed Packets, the advertising reports, the Android quality report) keep a case of their own, read on
/// every packet without a dynamic cast.
public enum HCIEventParameters: Hashable, Sendable {
    case commandComplete(CommandComplete)
    case commandStatus(CommandStatus)
    case numberOfCompletedPackets(NumberOfCompletedPackets)
    case leAdvertisingReport(LEAdvertisingReport)
    case leExtendedAdvertisingReport(LEExtendedAdvertisingReport)
    /// Android vendor event (0xFF) sub-event 0x58.
    case bluetoothQualityReport(BluetoothQualityReport)
    /// Any event declared once (``HCIParameterSet``, listed in ``HCIDeclaredSets``): `d.as(LEDataLengthChange.self)`.
    case declared(HCIDeclared)
    /// An LE Meta event whose subevent has no typed decoder: subevent and the bytes after it.
    case leMeta(LESubevent, [UInt8])
    /// An event without a typed decoder, parameters kept as bytes.
    case raw(HCIEventCode, [UInt8])

    /// `set` as a decoded event: `.declared(LEDataLengthChange { $0.handle = 0x40 })`.
    public static func declared(_ set: some HCIParameterSet) -> HCIEventParameters { .declared(HCIDeclared(set)) }

    /// The declared set, when the event is one: `decoded.declared?.as(LEDataLengthChange.self)`.
    public var declared: HCIDeclared? { if case .declared(let d) = self { d } else { nil } }

    /// The event code this value is carried in.
    public var code: HCIEventCode {
        switch self {
        case let .raw(code, _): code
        case .leMeta: .leMeta
        default:
            switch value.map({ type(of: $0).carrier }) {
            case .event(let code)?: code
            default: .leMeta
            }
        }
    }

    /// The LE subevent, for LE Meta events.
    public var subevent: LESubevent? {
        if case let .leMeta(s, _) = self { return s }
        if let value, case .leSubevent(let s) = type(of: value).carrier { return s }
        return nil
    }

    /// The decoded parameters, whatever the event; nil for `.leMeta`/`.raw`.
    public var value: (any HCICarriedParameters)? {
        switch self {
        case let .commandComplete(v): v
        case let .commandStatus(v): v
        case let .numberOfCompletedPackets(v): v
        case let .leAdvertisingReport(v): v
        case let .leExtendedAdvertisingReport(v): v
        case let .bluetoothQualityReport(v): v
        case let .declared(d): d.value
        case .leMeta, .raw: nil
        }
    }

    /// The event parameter bytes (after the 2-byte event header; LE events start with the subevent code).
    public var bytes: [UInt8] {
        switch self {
        case let .raw(_, b): return b
        case let .leMeta(s, b): return [s.rawValue] + b
        default:
            var w = ByteWriter()
            if let s = subevent { w.write(s.rawValue) }
            if case .bluetoothQualityReport = self { w.write(AndroidVendorSubevent.bluetoothQualityReport.rawValue) }
            value?.encode(into: &w)
            return w.bytes
        }
    }

    /// Event name without knowing the controller's maker (see ``name(manufacturer:)``).
    public var name: String { name(manufacturer: nil) }

    /// Event name: the subevent's for LE Meta events; for Command Complete/Status the command's, and for vendor
    /// events (0xFF) the vendor table's (`Vendor (Intel Bootup)`), both as the controller's maker defines them;
    /// `Vendor` when no table names the event.
    public func name(manufacturer: ControllerManufacturer?) -> String {
        if let s = subevent { return s.description }
        if case let .commandComplete(cc) = self { return "Command Complete (\(cc.opcode.name(manufacturer: manufacturer)))" }
        if case let .commandStatus(cs) = self { return "Command Status (\(cs.opcode.name(manufacturer: manufacturer)))" }
        if case let .bluetoothQualityReport(q) = self { return "Bluetooth Quality Report (\(q.reportID))" }
        if case let .raw(code, b) = self, code == .vendor, let vendor = VendorSpecific.event(parameters: b, manufacturer: manufacturer) {
            return "Vendor (\(vendor))"
        }
        return code.description
    }

    /// Field summary without knowing the controller's maker (see ``summary(manufacturer:)``).
    public var summary: String { summary(manufacturer: nil) }

    /// Field summary; Command Complete/Status name their command as the controller's maker does.
    public func summary(manufacturer: ControllerManufacturer?) -> String {
        switch self {
        case let .raw(_, b), let .leMeta(_, b): b.isEmpty ? "" : "params=" + hexString(b)
        case let .commandComplete(cc) where cc.opcode.isVendor: cc.summary(opcodeName: cc.opcode.name(manufacturer: manufacturer))
        case let .commandStatus(cs) where cs.opcode.isVendor: cs.summary(opcodeName: cs.opcode.name(manufacturer: manufacturer))
        default: value?.summary ?? ""
        }
    }

    /// Decodes event parameters for `code`; unknown codes and subevents become `.raw`/`.leMeta`.
    public static func decode(code: HCIEventCode, parameters input: inout ByteReader) throws(DecodeError) -> HCIEventParameters {
        if code == .leMeta {
            let sub = LESubevent(try input.readUInt8())
            if let entry = HCIEventTable.subevents[sub.rawValue], let decode = entry.decode {
                return try HCIEventTable.decode(entry, decode, &input)
            }
            return .leMeta(sub, input.readRemaining())
        }
        if let entry = HCIEventTable.events[code.rawValue], let decode = entry.decode {
            return try HCIEventTable.decode(entry, decode, &input)
        }
        return .raw(code, input.readRemaining())
    }
}

public typealias HCIEventDecoder = @Sendable (inout ByteReader) throws(DecodeError) -> HCIEventParameters

/// How many parameter bytes an event (or LE subevent, counted after its code) must carry; the dispatcher
/// checks it once, before the decoder runs.
public enum HCIParameterSize: Hashable, Sendable {
    /// Exactly this many.
    case fixed(Int)
    /// At least this many (the rest is the decoder's to read).
    case atLeast(Int)
    /// At least this many, holding a count and that many items: the decoder knows the length from the count, so bytes
    /// after the items are extra, as after a fixed-size event's.
    case counted(atLeast: Int)
    /// Variable: the decoder checks every length.
    case variable

    func check(_ count: Int) throws(DecodeError) {
        switch self {
        case let .fixed(n) where count != n: throw DecodeError.invalidSize(expected: n, got: count)
        case let .atLeast(n) where count < n, let .counted(n) where count < n:
            throw DecodeError.invalidSize(expected: n, got: count)
        default: break
        }
    }
}

/// One row of the HCI event table: name, parameter size rule and, when blescope decodes it, the decoder.
public struct HCIEventEntry: Sendable {
    public var name: String
    public var size: HCIParameterSize
    public var decode: HCIEventDecoder?

    public init(_ name: String, size: HCIParameterSize = .variable, decode: HCIEventDecoder? = nil) {
        self.name = name; self.size = size; self.decode = decode
    }
}

/// The HCI event tables, one row per code: event code → (name, size, decoder) and LE subevent → (name, size,
/// decoder) (Core Spec 5.4 Vol 4, Part E, 7.7). Adding a decoded event: declare it once (``HCIParameterSet``) and list
/// it in ``HCIDeclaredSets/all``, which brings its row. The rows with a decoder below are the hand-written lists and
/// command events that keep a case of their own in ``HCIEventParameters``.
public enum HCIEventTable {
    static func d<T: WireCodable>(_ wrap: @escaping @Sendable (T) -> HCIEventParameters) -> HCIEventDecoder {
        { (r: inout ByteReader) throws(DecodeError) -> HCIEventParameters in wrap(try T(parsing: &r)) }
    }
    typealias E = HCIEventEntry

    /// Event 0xFF: the Android vendor sub-events; a Bluetooth Quality Report is decoded, any other vendor event
    /// keeps its bytes (first byte included).
    static let vendor: HCIEventDecoder = { (r: inout ByteReader) throws(DecodeError) -> HCIEventParameters in
        guard r.remaining > 0, try r.peekUInt8() == AndroidVendorSubevent.bluetoothQualityReport.rawValue else {
            return .raw(.vendor, r.readRemaining())
        }
        _ = try r.readUInt8()
        return .bluetoothQualityReport(try BluetoothQualityReport(parsing: &r))
    }

    public static let events: [UInt8: HCIEventEntry] = listedEvents.merging(HCIDeclaredSets.eventRows) { _, declared in declared }

    static let listedEvents: [UInt8: HCIEventEntry] = [
        0x01: E("Inquiry Complete"), 0x02: E("Inquiry Result"),
        0x04: E("Connection Request"),
        0x06: E("Authentication Complete"), 0x07: E("Remote Name Request Complete"),
        0x09: E("Change Connection Link Key Complete"), 0x0A: E("Link Key Type Changed"),
        0x0B: E("Read Remote Supported Features Complete"),
        0x0D: E("QoS Setup Complete"),
        0x0E: E("Command Complete", size: .atLeast(3), decode: d(HCIEventParameters.commandComplete)),
        0x0F: E("Command Status", size: .fixed(4), decode: d(HCIEventParameters.commandStatus)),
        0x10: E("Hardware Error"), 0x11: E("Flush Occurred"), 0x12: E("Role Change"),
        0x13: E("Number Of Completed Packets", size: .counted(atLeast: 1), decode: d(HCIEventParameters.numberOfCompletedPackets)),
        0x14: E("Mode Change"), 0x15: E("Return Link Keys"), 0x16: E("PIN Code Request"), 0x17: E("Link Key Request"),
        0x18: E("Link Key Notification"), 0x19: E("Loopback Command"), 0x1A: E("Data Buffer Overflow"),
        0x1B: E("Max Slots Change"), 0x1C: E("Read Clock Offset Complete"), 0x1D: E("Connection Packet Type Changed"),
        0x1E: E("QoS Violation"), 0x1F: E("Page Scan Mode Change"), 0x20: E("Page Scan Repetition Mode Change"),
        0x21: E("Flow Specification Complete"), 0x22: E("Inquiry Result with RSSI"),
        0x23: E("Read Remote Extended Features Complete"), 0x2C: E("Synchronous Connection Complete"),
        0x2D: E("Synchronous Connection Changed"), 0x2E: E("Sniff Subrating"), 0x2F: E("Extended Inquiry Result"),
        0x31: E("IO Capability Request"), 0x32: E("IO Capability Response"), 0x33: E("User Confirmation Request"),
        0x34: E("User Passkey Request"), 0x35: E("Remote OOB Data Request"), 0x36: E("Simple Pairing Complete"),
        0x38: E("Link Supervision Timeout Changed"), 0x39: E("Enhanced Flush Complete"),
        0x3B: E("User Passkey Notification"), 0x3C: E("Keypress Notification"),
        0x3D: E("Remote Host Supported Features Notification"), 0x3E: E("LE Meta"), 0x40: E("Physical Link Complete"),
        0x41: E("Channel Selected"), 0x42: E("Disconnection Physical Link Complete"),
        0x43: E("Physical Link Loss Early Warning"), 0x44: E("Physical Link Recovery"), 0x45: E("Logical Link Complete"),
        0x46: E("Disconnection Logical Link Complete"), 0x47: E("Flow Spec Modify Complete"),
        0x48: E("Number Of Completed Data Blocks"), 0x49: E("AMP Start Test"), 0x4A: E("AMP Test End"),
        0x4B: E("AMP Receiver Report"), 0x4C: E("Short Range Mode Change Complete"), 0x4D: E("AMP Status Change"),
        0x4E: E("Triggered Clock Capture"), 0x4F: E("Synchronization Train Complete"),
        0x50: E("Synchronization Train Received"), 0x51: E("Connectionless Peripheral Broadcast Receive"),
        0x52: E("Connectionless Peripheral Broadcast Timeout"), 0x53: E("Truncated Page Complete"),
        0x54: E("Peripheral Page Response Timeout"), 0x55: E("Connectionless Peripheral Broadcast Channel Map Change"),
        0x56: E("Inquiry Response Notification"), 0x57: E("Authenticated Payload Timeout Expired"),
        0x58: E("SAM Status Change"),
        0xFF: E("Vendor", decode: vendor),
    ]

    /// LE Meta subevents (7.7.65); sizes count the bytes after the subevent code. The declared sets
    /// (``HCIDeclaredSets``) bring their own rows.
    public static let subevents: [UInt8: HCIEventEntry] = listedSubevents.merging(HCIDeclaredSets.subeventRows) { _, d in d }

    static let listedSubevents: [UInt8: HCIEventEntry] = [
        0x02: E("LE Advertising Report", decode: d(HCIEventParameters.leAdvertisingReport)),
        0x08: E("LE Read Local P-256 Public Key Complete"), 0x09: E("LE Generate DHKey Complete"),
        0x0B: E("LE Directed Advertising Report"),
        0x0D: E("LE Extended Advertising Report", decode: d(HCIEventParameters.leExtendedAdvertisingReport)),
        0x0F: E("LE Periodic Advertising Report"), 0x11: E("LE Scan Timeout"), 0x12: E("LE Advertising Set Terminated"),
        0x13: E("LE Scan Request Received"), 0x14: E("LE Channel Selection Algorithm"),
        0x15: E("LE Connectionless IQ Report"), 0x16: E("LE Connection IQ Report"), 0x17: E("LE CTE Request Failed"),
        0x18: E("LE Periodic Advertising Sync Transfer Received"),
        0x1F: E("LE Request Peer SCA Complete"), 0x20: E("LE Path Loss Threshold"),
        0x21: E("LE Transmit Power Reporting"), 0x23: E("LE Subrate Change"),
        0x24: E("LE Periodic Advertising Sync Established v2"), 0x25: E("LE Periodic Advertising Report v2"),
        0x26: E("LE Periodic Advertising Sync Transfer Received v2"), 0x27: E("LE Periodic Advertising Subevent Data Request"),
        0x28: E("LE Periodic Advertising Response Report"),
    ]

    /// True when the event (or LE subevent) is decoded and has a fixed parameter size.
    /// Whether the decoder knows the event's length (fixed, or from its count), so bytes after it are extra.
    static func knowsItsLength(_ code: HCIEventCode, _ subevent: LESubevent?) -> Bool {
        let entry: HCIEventEntry?
        if let subevent { entry = subevents[subevent.rawValue] } else { entry = events[code.rawValue] }
        guard let entry, entry.decode != nil else { return false }
        switch entry.size {
        case .fixed, .counted: return true
        case .atLeast, .variable: return false
        }
    }

    /// Decodes through `entry`: the size rule checked once, then the decoder, which must use every byte.
    static func decode(_ entry: HCIEventEntry, _ decoder: HCIEventDecoder, _ input: inout ByteReader) throws(DecodeError)
        -> HCIEventParameters
    {
        try entry.size.check(input.remaining)
        let v = try decoder(&input)
        try input.expectEnd()
        return v
    }
}

/// Command Complete (7.7.14): num HCI command packets(1) opcode(2) return parameters.
public struct CommandComplete: HCICarriedParameters {
    public static let carrier = HCICarrier.event(.commandComplete)
    public var numHCICommandPackets: UInt8
    public var opcode: HCICommand
    public var returnParameters: [UInt8]
    public init(numHCICommandPackets: UInt8 = 1, opcode: HCICommand, returnParameters: [UInt8]) {
        self.numHCICommandPackets = numHCICommandPackets; self.opcode = opcode; self.returnParameters = returnParameters
    }
    public init(numHCICommandPackets: UInt8 = 1, opcode: HCICommand, _ returns: HCIReturnParameters) {
        self.init(numHCICommandPackets: numHCICommandPackets, opcode: opcode, returnParameters: returns.bytes)
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        numHCICommandPackets = try input.readUInt8()
        opcode = HCICommand(try UInt16(parsingLittleEndian: &input))
        returnParameters = input.readRemaining()
    }
    public func encode(into w: inout ByteWriter) {
        w.write(numHCICommandPackets); w.write(littleEndian: opcode.rawValue); w.write(contentsOf: returnParameters)
    }
    /// The first return parameter as a status, when there is one.
    public var status: HCIStatus? { returnParameters.first.map(HCIStatus.init(rawValue:)) }
    /// Typed return parameters; `.raw` when they do not parse as the command's table entry says.
    public var decodedReturn: HCIReturnParameters {
        (try? HCIReturnParameters.decode(opcode: opcode, bytes: returnParameters)) ?? .raw(returnParameters)
    }
    public var summary: String { summary(opcodeName: opcode.description) }
    /// The summary with the command named as given (a vendor command named by the controller's maker).
    public func summary(opcodeName: String) -> String {
        let r = decodedReturn.summary
        return "opcode=\(opcodeName) ncmd=\(numHCICommandPackets)" + (r.isEmpty ? "" : " " + r)
    }
}

/// Command Status (7.7.15): status(1) num HCI command packets(1) opcode(2).
public struct CommandStatus: HCICarriedParameters {
    public static let carrier = HCICarrier.event(.commandStatus)
    public var status: HCIStatus
    public var numHCICommandPackets: UInt8
    public var opcode: HCICommand
    public init(status: HCIStatus, numHCICommandPackets: UInt8 = 1, opcode: HCICommand) {
        self.status = status; self.numHCICommandPackets = numHCICommandPackets; self.opcode = opcode
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        status = try HCIStatus(parsing: &input)
        numHCICommandPackets = try input.readUInt8()
        opcode = HCICommand(try UInt16(parsingLittleEndian: &input))
    }
    public func encode(into w: inout ByteWriter) {
        w.write(status.rawValue); w.write(numHCICommandPackets); w.write(littleEndian: opcode.rawValue)
    }
    public var summary: String { summary(opcodeName: opcode.description) }
    /// The summary with the command named as given (a vendor command named by the controller's maker).
    public func summary(opcodeName: String) -> String { "opcode=\(opcodeName) status=\(status) ncmd=\(numHCICommandPackets)" }
}

/// Number Of Completed Packets (7.7.19): num handles(1) then per handle: handle(2) completed(2).
public struct NumberOfCompletedPackets: HCICarriedParameters {
    public static let carrier = HCICarrier.event(.numberOfCompletedPackets)
    public struct Entry: Hashable, Sendable {
        public var handle: UInt16
        public var completedPackets: UInt16
        public init(handle: UInt16, completedPackets: UInt16) { self.handle = handle; self.completedPackets = completedPackets }
    }
    public var entries: [Entry]
    public init(entries: [Entry]) { self.entries = entries }
    /// - Throws: ``DecodeError/invalidSize(expected:got:)`` when the handle count disagrees with the bytes present.
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let n = Int(try input.readUInt8())
        guard input.remaining == n * 4 else { throw .invalidSize(expected: 1 + n * 4, got: 1 + input.remaining) }
        entries = []
        entries.reserveCapacity(n)
        for _ in 0..<n {
            entries.append(
                Entry(
                    handle: try UInt16(parsingLittleEndian: &input) & 0x0FFF,
                    completedPackets: try UInt16(parsingLittleEndian: &input)))
        }
    }
    public func encode(into w: inout ByteWriter) {
        w.write(UInt8(truncatingIfNeeded: entries.count))
        for e in entries { w.write(littleEndian: e.handle); w.write(littleEndian: e.completedPackets) }
    }
    public var summary: String { entries.map { "handle=\(hex($0.handle)) completed=\($0.completedPackets)" }.joined(separator: " ") }
}

/// LE Advertising Report (7.7.65.2): num reports(1), then per report: event type(1) address type(1)
/// address(6) data length(1) data RSSI(1, signed dBm; 127 = not available).
public struct LEAdvertisingReport: HCICarriedParameters {
    public static let carrier = HCICarrier.leSubevent(.advertisingReport)
    public struct Report: Hashable, Sendable {
        /// 0 ADV_IND, 1 ADV_DIRECT_IND, 2 ADV_SCAN_IND, 3 ADV_NONCONN_IND, 4 SCAN_RSP.
        public var eventType: UInt8
        public var addressType: LEAddressType
        public var address: BDAddress
        public var data: [UInt8]
        public var rssi: Int8
        public init(eventType: UInt8, addressType: LEAddressType, address: BDAddress, data: [UInt8], rssi: Int8) {
            self.eventType = eventType; self.addressType = addressType; self.address = address; self.data = data; self.rssi = rssi
        }
        static let typeNames = ["ADV_IND", "ADV_DIRECT_IND", "ADV_SCAN_IND", "ADV_NONCONN_IND", "SCAN_RSP"]
        public var eventTypeName: String {
            Int(eventType) < Self.typeNames.count ? Self.typeNames[Int(eventType)] : hex(eventType)
        }
    }
    public var reports: [Report]
    public init(reports: [Report]) { self.reports = reports }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let n = Int(try input.readUInt8())
        reports = []
        for _ in 0..<n {
            let type = try input.readUInt8()
            let addressType = LEAddressType(try input.readUInt8())
            let address = try BDAddress(parsing: &input)
            let data = try input.readLengthPrefixedArray()
            let rssi = Int8(bitPattern: try input.readUInt8())
            reports.append(Report(eventType: type, addressType: addressType, address: address, data: data, rssi: rssi))
        }
    }
    public func encode(into w: inout ByteWriter) {
        w.write(UInt8(truncatingIfNeeded: reports.count))
        for r in reports {
            w.write(r.eventType); w.write(r.addressType.rawValue); r.address.encode(into: &w)
            w.write(UInt8(truncatingIfNeeded: r.data.count)); w.write(contentsOf: r.data); w.write(UInt8(bitPattern: r.rssi))
        }
    }
    public var summary: String {
        reports.map { "\($0.eventTypeName) \($0.address) (\($0.addressType)) rssi=\($0.rssi) dBm data=\($0.data.count) B" }
            .joined(separator: "; ")
    }
}

/// LE Extended Advertising Report (7.7.65.13): num reports(1), then per report: event type(2) address type(1)
/// address(6) primary PHY(1) secondary PHY(1) SID(1) TX power(1) RSSI(1) periodic interval(2)
/// direct address type(1) direct address(6) data length(1) data.
public struct LEExtendedAdvertisingReport: HCICarriedParameters {
    public static let carrier = HCICarrier.leSubevent(.extendedAdvertisingReport)
    public struct Report: Hashable, Sendable {
        /// Bit 0 connectable, 1 scannable, 2 directed, 3 scan response, 4 legacy; bits 5–6 data status
        /// (0 complete, 1 incomplete – more to come, 2 incomplete – truncated).
        public var eventType: UInt16
        public var addressType: LEAddressType
        public var address: BDAddress
        public var primaryPHY: LEPHY
        public var secondaryPHY: LEPHY
        public var advertisingSID: UInt8
        public var txPower: Int8
        public var rssi: Int8
        public var periodicAdvertisingInterval: UInt16
        public var directAddressType: LEAddressType
        public var directAddress: BDAddress
        public var data: [UInt8]
        public init(
            eventType: UInt16, addressType: LEAddressType, address: BDAddress, primaryPHY: LEPHY = .le1M,
            secondaryPHY: LEPHY = .none, advertisingSID: UInt8 = 0xFF, txPower: Int8 = 127, rssi: Int8,
            periodicAdvertisingInterval: UInt16 = 0, directAddressType: LEAddressType = .public,
            directAddress: BDAddress = BDAddress(0), data: [UInt8]
        ) {
            self.eventType = eventType; self.addressType = addressType; self.address = address
            self.primaryPHY = primaryPHY; self.secondaryPHY = secondaryPHY; self.advertisingSID = advertisingSID
            self.txPower = txPower; self.rssi = rssi; self.periodicAdvertisingInterval = periodicAdvertisingInterval
            self.directAddressType = directAddressType; self.directAddress = directAddress; self.data = data
        }
        public var isConnectable: Bool { eventType & 0x01 != 0 }
        public var isScannable: Bool { eventType & 0x02 != 0 }
        public var isDirected: Bool { eventType & 0x04 != 0 }
        public var isScanResponse: Bool { eventType & 0x08 != 0 }
        public var isLegacy: Bool { eventType & 0x10 != 0 }
        /// 0 complete, 1 incomplete (more to come), 2 incomplete (truncated).
        public var dataStatus: UInt8 { UInt8(truncatingIfNeeded: (eventType >> 5) & 0x3) }
    }
    public var reports: [Report]
    public init(reports: [Report]) { self.reports = reports }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        let n = Int(try input.readUInt8())
        reports = []
        for _ in 0..<n {
            let type = try UInt16(parsingLittleEndian: &input)
            let addressType = LEAddressType(try input.readUInt8())
            let address = try BDAddress(parsing: &input)
            let p1 = LEPHY(rawValue: try input.readUInt8())
            let p2 = LEPHY(rawValue: try input.readUInt8())
            let sid = try input.readUInt8()
            let tx = Int8(bitPattern: try input.readUInt8())
            let rssi = Int8(bitPattern: try input.readUInt8())
            let interval = try UInt16(parsingLittleEndian: &input)
            let dType = LEAddressType(try input.readUInt8())
            let dAddr = try BDAddress(parsing: &input)
            let data = try input.readLengthPrefixedArray()
            reports.append(
                Report(
                    eventType: type, addressType: addressType, address: address, primaryPHY: p1,
                    secondaryPHY: p2, advertisingSID: sid, txPower: tx, rssi: rssi,
                    periodicAdvertisingInterval: interval, directAddressType: dType,
                    directAddress: dAddr, data: data))
        }
    }
    public func encode(into w: inout ByteWriter) {
        w.write(UInt8(truncatingIfNeeded: reports.count))
        for r in reports {
            w.write(littleEndian: r.eventType); w.write(r.addressType.rawValue); r.address.encode(into: &w)
            w.write(r.primaryPHY.rawValue); w.write(r.secondaryPHY.rawValue); w.write(r.advertisingSID)
            w.write(UInt8(bitPattern: r.txPower)); w.write(UInt8(bitPattern: r.rssi))
            w.write(littleEndian: r.periodicAdvertisingInterval); w.write(r.directAddressType.rawValue)
            r.directAddress.encode(into: &w); w.write(UInt8(truncatingIfNeeded: r.data.count)); w.write(contentsOf: r.data)
        }
    }
    public var summary: String {
        reports.map {
            "type=\(hex($0.eventType)) \($0.address) (\($0.addressType)) phy=\($0.primaryPHY)/\($0.secondaryPHY) rssi=\($0.rssi) dBm data=\($0.data.count) B"
        }.joined(separator: "; ")
    }
}
