import BLECore

/// Typed parameters of the HCI events blescope decodes (Core Spec 5.4 Vol 4, Part E, 7.7).
public enum HCIEventParameters: Hashable, Sendable {
    /// BR/EDR Connection Complete (7.7.3).
    case connectionComplete(ConnectionComplete)
    case disconnectionComplete(DisconnectionComplete)
    case encryptionChange(EncryptionChange)
    case encryptionChangeV2(EncryptionChangeV2)
    case encryptionKeyRefreshComplete(EncryptionKeyRefreshComplete)
    case readRemoteVersionInformationComplete(ReadRemoteVersionInformationComplete)
    case commandComplete(CommandComplete)
    case commandStatus(CommandStatus)
    case numberOfCompletedPackets(NumberOfCompletedPackets)
    case leConnectionComplete(LEConnectionComplete)
    case leAdvertisingReport(LEAdvertisingReport)
    case leConnectionUpdateComplete(LEConnectionUpdateComplete)
    case leReadRemoteFeaturesComplete(LEReadRemoteFeaturesComplete)
    case leLongTermKeyRequest(LELongTermKeyRequest)
    case leRemoteConnectionParameterRequest(LERemoteConnectionParameterRequest)
    case leDataLengthChange(LEDataLengthChange)
    case leEnhancedConnectionComplete(LEEnhancedConnectionComplete)
    case lePHYUpdateComplete(LEPHYUpdateComplete)
    case leExtendedAdvertisingReport(LEExtendedAdvertisingReport)
    case leEnhancedConnectionCompleteV2(LEEnhancedConnectionCompleteV2)
    /// Android vendor event (0xFF) sub-event 0x58.
    case bluetoothQualityReport(BluetoothQualityReport)
    /// Any event declared once (``HCIParameterSet``, listed in ``HCIDeclaredSets``): the isochronous events.
    case declared(HCIDeclared)
    /// An LE Meta event whose subevent has no typed decoder: subevent and the bytes after it.
    case leMeta(LESubevent, [UInt8])
    /// An event without a typed decoder, parameters kept as bytes.
    case raw(HCIEventCode, [UInt8])

    /// The event code this value is carried in.
    public var code: HCIEventCode {
        switch self {
        case .connectionComplete: .connectionComplete
        case .disconnectionComplete: .disconnectionComplete
        case .encryptionChange: .encryptionChange
        case .encryptionChangeV2: .encryptionChangeV2
        case .encryptionKeyRefreshComplete: .encryptionKeyRefreshComplete
        case .readRemoteVersionInformationComplete: .readRemoteVersionInformationComplete
        case .commandComplete: .commandComplete
        case .commandStatus: .commandStatus
        case .numberOfCompletedPackets: .numberOfCompletedPackets
        case .bluetoothQualityReport: .vendor
        case let .raw(code, _): code
        case let .declared(d): if case .event(let c) = d.carrier { c } else { .leMeta }
        default: .leMeta
        }
    }

    /// The LE Meta subevent, for LE events.
    public var subevent: LESubevent? {
        switch self {
        case .leConnectionComplete: .connectionComplete
        case .leAdvertisingReport: .advertisingReport
        case .leConnectionUpdateComplete: .connectionUpdateComplete
        case .leReadRemoteFeaturesComplete: .readRemoteFeaturesComplete
        case .leLongTermKeyRequest: .longTermKeyRequest
        case .leRemoteConnectionParameterRequest: .remoteConnectionParameterRequest
        case .leDataLengthChange: .dataLengthChange
        case .leEnhancedConnectionComplete: .enhancedConnectionComplete
        case .lePHYUpdateComplete: .phyUpdateComplete
        case .leExtendedAdvertisingReport: .extendedAdvertisingReport
        case .leEnhancedConnectionCompleteV2: .enhancedConnectionCompleteV2
        case let .leMeta(s, _): s
        case let .declared(d): if case .leSubevent(let s) = d.carrier { s } else { nil }
        default: nil
        }
    }

    var value: (any WireCodable & HCISummary)? {
        switch self {
        case let .connectionComplete(v): v
        case let .disconnectionComplete(v): v
        case let .encryptionChange(v): v
        case let .encryptionChangeV2(v): v
        case let .encryptionKeyRefreshComplete(v): v
        case let .readRemoteVersionInformationComplete(v): v
        case let .commandComplete(v): v
        case let .commandStatus(v): v
        case let .numberOfCompletedPackets(v): v
        case let .leConnectionComplete(v): v
        case let .leAdvertisingReport(v): v
        case let .leConnectionUpdateComplete(v): v
        case let .leReadRemoteFeaturesComplete(v): v
        case let .leLongTermKeyRequest(v): v
        case let .leRemoteConnectionParameterRequest(v): v
        case let .leDataLengthChange(v): v
        case let .leEnhancedConnectionComplete(v): v
        case let .lePHYUpdateComplete(v): v
        case let .leExtendedAdvertisingReport(v): v
        case let .leEnhancedConnectionCompleteV2(v): v
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
        // Shown as its bytes, as before it had a decoder, so that timelines stay byte-identical; the struct's own
        // `summary` names the fields.
        case let .connectionComplete(c): "params=" + hexString(c.bytes)
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
    /// Variable: the decoder checks every length.
    case variable

    func check(_ count: Int) throws(DecodeError) {
        switch self {
        case let .fixed(n) where count != n: throw DecodeError.invalidSize(expected: n, got: count)
        case let .atLeast(n) where count < n: throw DecodeError.invalidSize(expected: n, got: count)
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
/// it in ``HCIDeclaredSets/all``; the events below still have their struct, a case in ``HCIEventParameters`` (with its
/// `code`/`subevent`/`value` lines) and their row here, until they move (see ``HCIParameterSet``).
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
        0x03: E("Connection Complete", size: .fixed(11), decode: d(HCIEventParameters.connectionComplete)),
        0x04: E("Connection Request"),
        0x05: E("Disconnection Complete", size: .fixed(4), decode: d(HCIEventParameters.disconnectionComplete)),
        0x06: E("Authentication Complete"), 0x07: E("Remote Name Request Complete"),
        0x08: E("Encryption Change", size: .fixed(4), decode: d(HCIEventParameters.encryptionChange)),
        0x09: E("Change Connection Link Key Complete"), 0x0A: E("Link Key Type Changed"),
        0x0B: E("Read Remote Supported Features Complete"),
        0x0C: E(
            "Read Remote Version Information Complete", size: .fixed(8),
            decode: d(HCIEventParameters.readRemoteVersionInformationComplete)),
        0x0D: E("QoS Setup Complete"),
        0x0E: E("Command Complete", size: .atLeast(3), decode: d(HCIEventParameters.commandComplete)),
        0x0F: E("Command Status", size: .fixed(4), decode: d(HCIEventParameters.commandStatus)),
        0x10: E("Hardware Error"), 0x11: E("Flush Occurred"), 0x12: E("Role Change"),
        0x13: E("Number Of Completed Packets", size: .atLeast(1), decode: d(HCIEventParameters.numberOfCompletedPackets)),
        0x14: E("Mode Change"), 0x15: E("Return Link Keys"), 0x16: E("PIN Code Request"), 0x17: E("Link Key Request"),
        0x18: E("Link Key Notification"), 0x19: E("Loopback Command"), 0x1A: E("Data Buffer Overflow"),
        0x1B: E("Max Slots Change"), 0x1C: E("Read Clock Offset Complete"), 0x1D: E("Connection Packet Type Changed"),
        0x1E: E("QoS Violation"), 0x1F: E("Page Scan Mode Change"), 0x20: E("Page Scan Repetition Mode Change"),
        0x21: E("Flow Specification Complete"), 0x22: E("Inquiry Result with RSSI"),
        0x23: E("Read Remote Extended Features Complete"), 0x2C: E("Synchronous Connection Complete"),
        0x2D: E("Synchronous Connection Changed"), 0x2E: E("Sniff Subrating"), 0x2F: E("Extended Inquiry Result"),
        0x30: E("Encryption Key Refresh Complete", size: .fixed(3), decode: d(HCIEventParameters.encryptionKeyRefreshComplete)),
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
        0x59: E("Encryption Change v2", size: .fixed(5), decode: d(HCIEventParameters.encryptionChangeV2)),
        0xFF: E("Vendor", decode: vendor),
    ]

    /// LE Meta subevents (7.7.65); sizes count the bytes after the subevent code. The declared sets
    /// (``HCIDeclaredSets``) bring their own rows.
    public static let subevents: [UInt8: HCIEventEntry] = listedSubevents.merging(HCIDeclaredSets.subeventRows) { _, d in d }

    static let listedSubevents: [UInt8: HCIEventEntry] = [
        0x01: E("LE Connection Complete", size: .fixed(18), decode: d(HCIEventParameters.leConnectionComplete)),
        0x02: E("LE Advertising Report", decode: d(HCIEventParameters.leAdvertisingReport)),
        0x03: E("LE Connection Update Complete", size: .fixed(9), decode: d(HCIEventParameters.leConnectionUpdateComplete)),
        0x04: E("LE Read Remote Features Complete", size: .fixed(11), decode: d(HCIEventParameters.leReadRemoteFeaturesComplete)),
        0x05: E("LE Long Term Key Request", size: .fixed(12), decode: d(HCIEventParameters.leLongTermKeyRequest)),
        0x06: E(
            "LE Remote Connection Parameter Request", size: .fixed(10),
            decode: d(HCIEventParameters.leRemoteConnectionParameterRequest)),
        0x07: E("LE Data Length Change", size: .fixed(10), decode: d(HCIEventParameters.leDataLengthChange)),
        0x08: E("LE Read Local P-256 Public Key Complete"), 0x09: E("LE Generate DHKey Complete"),
        0x0A: E("LE Enhanced Connection Complete", size: .fixed(30), decode: d(HCIEventParameters.leEnhancedConnectionComplete)),
        0x0B: E("LE Directed Advertising Report"),
        0x0C: E("LE PHY Update Complete", size: .fixed(5), decode: d(HCIEventParameters.lePHYUpdateComplete)),
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
        0x29: E(
            "LE Enhanced Connection Complete v2", size: .fixed(33),
            decode: d(HCIEventParameters.leEnhancedConnectionCompleteV2)),
    ]

    /// True when the event (or LE subevent) is decoded and has a fixed parameter size.
    static func hasFixedSize(_ code: HCIEventCode, _ subevent: LESubevent?) -> Bool {
        let entry: HCIEventEntry?
        if let subevent { entry = subevents[subevent.rawValue] } else { entry = events[code.rawValue] }
        guard let entry, entry.decode != nil, case .fixed = entry.size else { return false }
        return true
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

/// Connection Complete (7.7.3), BR/EDR: status(1) handle(2) BD_ADDR(6) link type(1: 0x00 SCO, 0x01 ACL)
/// encryption enabled(1: 0x00 off, 0x01 on).
public struct ConnectionComplete: WireCodable, HCISummary {
    public var status: HCIStatus
    public var handle: UInt16
    public var address: BDAddress
    public var linkType: UInt8
    public var encryptionEnabled: UInt8
    public init(status: HCIStatus, handle: UInt16, address: BDAddress, linkType: UInt8, encryptionEnabled: UInt8) {
        self.status = status; self.handle = handle; self.address = address; self.linkType = linkType
        self.encryptionEnabled = encryptionEnabled
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        status = try HCIStatus(parsing: &input)
        handle = try UInt16(parsingLittleEndian: &input)
        address = try BDAddress(parsing: &input)
        linkType = try input.readUInt8()
        encryptionEnabled = try input.readUInt8()
    }
    public func encode(into w: inout ByteWriter) {
        w.write(status.rawValue); w.write(littleEndian: handle); address.encode(into: &w); w.write(linkType); w.write(encryptionEnabled)
    }
    public var summary: String {
        let link =
            switch linkType {
            case 0: "SCO";
            case 1: "ACL";
            default: hex(linkType)
            }
        return "status=\(status) handle=\(hex(handle)) address=\(address) link=\(link) encryption=\(encryptionEnabled)"
    }
}

/// Disconnection Complete (7.7.5): status(1) handle(2) reason(1).
public struct DisconnectionComplete: WireCodable, HCISummary {
    public var status: HCIStatus
    public var handle: UInt16
    public var reason: HCIStatus
    public init(status: HCIStatus, handle: UInt16, reason: HCIStatus) { self.status = status; self.handle = handle; self.reason = reason }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        status = try HCIStatus(parsing: &input)
        handle = try UInt16(parsingLittleEndian: &input)
        reason = try HCIStatus(parsing: &input)
    }
    public func encode(into w: inout ByteWriter) { w.write(status.rawValue); w.write(littleEndian: handle); w.write(reason.rawValue) }
    public var summary: String { "status=\(status) handle=\(hex(handle)) reason=\(reason)" }
}

/// Encryption Change v1 (7.7.8): status(1) handle(2) encryption enabled(1: 0 off, 1 E0/AES-CCM, 2 AES-CCM BR/EDR).
public struct EncryptionChange: WireCodable, HCISummary {
    public var status: HCIStatus
    public var handle: UInt16
    public var encryptionEnabled: UInt8
    public init(status: HCIStatus, handle: UInt16, encryptionEnabled: UInt8) {
        self.status = status; self.handle = handle; self.encryptionEnabled = encryptionEnabled
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        status = try HCIStatus(parsing: &input)
        handle = try UInt16(parsingLittleEndian: &input)
        encryptionEnabled = try input.readUInt8()
    }
    public func encode(into w: inout ByteWriter) { w.write(status.rawValue); w.write(littleEndian: handle); w.write(encryptionEnabled) }
    public var summary: String {
        let e =
            encryptionEnabled == 0
            ? "off" : encryptionEnabled == 1 ? "on" : encryptionEnabled == 2 ? "on (AES-CCM)" : hex(encryptionEnabled)
        return "status=\(status) handle=\(hex(handle)) encryption=\(e)"
    }
}

/// Encryption Change v2 (7.7.8): the v1 fields then encryption key size(1).
public struct EncryptionChangeV2: WireCodable, HCISummary {
    public var change: EncryptionChange
    public var keySize: UInt8
    public init(change: EncryptionChange, keySize: UInt8) { self.change = change; self.keySize = keySize }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        change = try EncryptionChange(parsing: &input)
        keySize = try input.readUInt8()
    }
    public func encode(into w: inout ByteWriter) { change.encode(into: &w); w.write(keySize) }
    public var summary: String { change.summary + " keySize=\(keySize)" }
}

/// Encryption Key Refresh Complete (7.7.39): status(1) handle(2), the layout of many commands' return parameters.
public typealias EncryptionKeyRefreshComplete = HCIStatusAndHandle

/// Read Remote Version Information Complete (7.7.12): status(1) handle(2) version(1) company id(2) subversion(2).
public struct ReadRemoteVersionInformationComplete: WireCodable, HCISummary {
    public var status: HCIStatus
    public var handle: UInt16
    /// LMP/LL version (Assigned Numbers: 0x0D = 5.4 …).
    public var version: UInt8
    public var companyIdentifier: UInt16
    public var subversion: UInt16
    public init(status: HCIStatus, handle: UInt16, version: UInt8, companyIdentifier: UInt16, subversion: UInt16) {
        self.status = status; self.handle = handle; self.version = version
        self.companyIdentifier = companyIdentifier; self.subversion = subversion
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        status = try HCIStatus(parsing: &input)
        handle = try UInt16(parsingLittleEndian: &input)
        version = try input.readUInt8()
        companyIdentifier = try UInt16(parsingLittleEndian: &input)
        subversion = try UInt16(parsingLittleEndian: &input)
    }
    public func encode(into w: inout ByteWriter) {
        w.write(status.rawValue); w.write(littleEndian: handle); w.write(version)
        w.write(littleEndian: companyIdentifier); w.write(littleEndian: subversion)
    }
    static let versions = ["1.0b", "1.1", "1.2", "2.0", "2.1", "3.0", "4.0", "4.1", "4.2", "5.0", "5.1", "5.2", "5.3", "5.4", "6.0"]
    public var summary: String {
        let v = Int(version) < Self.versions.count ? Self.versions[Int(version)] : hex(version)
        return "status=\(status) handle=\(hex(handle)) version=\(v) company=\(hex(companyIdentifier)) subversion=\(hex(subversion))"
    }
}

/// Command Complete (7.7.14): num HCI command packets(1) opcode(2) return parameters.
public struct CommandComplete: WireCodable, HCISummary {
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
public struct CommandStatus: WireCodable, HCISummary {
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
public struct NumberOfCompletedPackets: WireCodable, HCISummary {
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

/// LE Connection Complete (7.7.65.1): status(1) handle(2) role(1) peer address type(1) peer address(6)
/// interval(2, 1.25 ms) latency(2) supervision timeout(2, 10 ms) central clock accuracy(1).
public struct LEConnectionComplete: WireCodable, HCISummary {
    public var status: HCIStatus
    public var handle: UInt16
    public var role: HCIRole
    public var peerAddressType: LEAddressType
    public var peerAddress: BDAddress
    public var interval: UInt16
    public var latency: UInt16
    public var supervisionTimeout: UInt16
    public var centralClockAccuracy: UInt8
    public init(
        status: HCIStatus, handle: UInt16, role: HCIRole, peerAddressType: LEAddressType, peerAddress: BDAddress,
        interval: UInt16, latency: UInt16, supervisionTimeout: UInt16, centralClockAccuracy: UInt8 = 0
    ) {
        self.status = status; self.handle = handle; self.role = role; self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress; self.interval = interval; self.latency = latency
        self.supervisionTimeout = supervisionTimeout; self.centralClockAccuracy = centralClockAccuracy
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        status = try HCIStatus(parsing: &input)
        handle = try UInt16(parsingLittleEndian: &input)
        role = HCIRole(rawValue: try input.readUInt8())
        peerAddressType = LEAddressType(try input.readUInt8())
        peerAddress = try BDAddress(parsing: &input)
        interval = try UInt16(parsingLittleEndian: &input)
        latency = try UInt16(parsingLittleEndian: &input)
        supervisionTimeout = try UInt16(parsingLittleEndian: &input)
        centralClockAccuracy = try input.readUInt8()
    }
    public func encode(into w: inout ByteWriter) {
        w.write(status.rawValue); w.write(littleEndian: handle); w.write(role.rawValue); w.write(peerAddressType.rawValue)
        peerAddress.encode(into: &w); w.write(littleEndian: interval); w.write(littleEndian: latency)
        w.write(littleEndian: supervisionTimeout); w.write(centralClockAccuracy)
    }
    public var summary: String {
        "status=\(status) handle=\(hex(handle)) role=\(role) peer=\(peerAddress) (\(peerAddressType)) interval=\(Units.interval1250(interval)) latency=\(latency) timeout=\(Units.timeout10(supervisionTimeout))"
    }
}

/// LE Enhanced Connection Complete v1 (7.7.65.10): as ``LEConnectionComplete`` with the local and peer
/// resolvable private addresses (6+6) after the peer address.
public struct LEEnhancedConnectionComplete: WireCodable, HCISummary {
    public var status: HCIStatus
    public var handle: UInt16
    public var role: HCIRole
    public var peerAddressType: LEAddressType
    public var peerAddress: BDAddress
    public var localResolvablePrivateAddress: BDAddress
    public var peerResolvablePrivateAddress: BDAddress
    public var interval: UInt16
    public var latency: UInt16
    public var supervisionTimeout: UInt16
    public var centralClockAccuracy: UInt8
    public init(
        status: HCIStatus, handle: UInt16, role: HCIRole, peerAddressType: LEAddressType, peerAddress: BDAddress,
        localResolvablePrivateAddress: BDAddress = BDAddress(0), peerResolvablePrivateAddress: BDAddress = BDAddress(0),
        interval: UInt16, latency: UInt16, supervisionTimeout: UInt16, centralClockAccuracy: UInt8 = 0
    ) {
        self.status = status; self.handle = handle; self.role = role; self.peerAddressType = peerAddressType
        self.peerAddress = peerAddress; self.localResolvablePrivateAddress = localResolvablePrivateAddress
        self.peerResolvablePrivateAddress = peerResolvablePrivateAddress; self.interval = interval
        self.latency = latency; self.supervisionTimeout = supervisionTimeout; self.centralClockAccuracy = centralClockAccuracy
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        status = try HCIStatus(parsing: &input)
        handle = try UInt16(parsingLittleEndian: &input)
        role = HCIRole(rawValue: try input.readUInt8())
        peerAddressType = LEAddressType(try input.readUInt8())
        peerAddress = try BDAddress(parsing: &input)
        localResolvablePrivateAddress = try BDAddress(parsing: &input)
        peerResolvablePrivateAddress = try BDAddress(parsing: &input)
        interval = try UInt16(parsingLittleEndian: &input)
        latency = try UInt16(parsingLittleEndian: &input)
        supervisionTimeout = try UInt16(parsingLittleEndian: &input)
        centralClockAccuracy = try input.readUInt8()
    }
    public func encode(into w: inout ByteWriter) {
        w.write(status.rawValue); w.write(littleEndian: handle); w.write(role.rawValue); w.write(peerAddressType.rawValue)
        peerAddress.encode(into: &w); localResolvablePrivateAddress.encode(into: &w); peerResolvablePrivateAddress.encode(into: &w)
        w.write(littleEndian: interval); w.write(littleEndian: latency)
        w.write(littleEndian: supervisionTimeout); w.write(centralClockAccuracy)
    }
    public var summary: String {
        var s = "status=\(status) handle=\(hex(handle)) role=\(role) peer=\(peerAddress) (\(peerAddressType))"
        if peerResolvablePrivateAddress.value != 0 { s += " peerRPA=\(peerResolvablePrivateAddress)" }
        if localResolvablePrivateAddress.value != 0 { s += " localRPA=\(localResolvablePrivateAddress)" }
        return s + " interval=\(Units.interval1250(interval)) latency=\(latency) timeout=\(Units.timeout10(supervisionTimeout))"
    }
}

/// LE Enhanced Connection Complete v2 (7.7.65.10): the v1 fields then advertising handle(1) sync handle(2).
public struct LEEnhancedConnectionCompleteV2: WireCodable, HCISummary {
    public var connection: LEEnhancedConnectionComplete
    public var advertisingHandle: UInt8
    public var syncHandle: UInt16
    public init(connection: LEEnhancedConnectionComplete, advertisingHandle: UInt8 = 0xFF, syncHandle: UInt16 = 0xFFFF) {
        self.connection = connection; self.advertisingHandle = advertisingHandle; self.syncHandle = syncHandle
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        connection = try LEEnhancedConnectionComplete(parsing: &input)
        advertisingHandle = try input.readUInt8()
        syncHandle = try UInt16(parsingLittleEndian: &input)
    }
    public func encode(into w: inout ByteWriter) {
        connection.encode(into: &w); w.write(advertisingHandle); w.write(littleEndian: syncHandle)
    }
    public var summary: String { connection.summary + " advHandle=\(hex(advertisingHandle)) syncHandle=\(hex(syncHandle))" }
}

/// LE Connection Update Complete (7.7.65.3): status(1) handle(2) interval(2) latency(2) timeout(2).
public struct LEConnectionUpdateComplete: WireCodable, HCISummary {
    public var status: HCIStatus
    public var handle: UInt16
    public var interval: UInt16
    public var latency: UInt16
    public var supervisionTimeout: UInt16
    public init(status: HCIStatus, handle: UInt16, interval: UInt16, latency: UInt16, supervisionTimeout: UInt16) {
        self.status = status; self.handle = handle; self.interval = interval; self.latency = latency
        self.supervisionTimeout = supervisionTimeout
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        status = try HCIStatus(parsing: &input)
        handle = try UInt16(parsingLittleEndian: &input)
        interval = try UInt16(parsingLittleEndian: &input)
        latency = try UInt16(parsingLittleEndian: &input)
        supervisionTimeout = try UInt16(parsingLittleEndian: &input)
    }
    public func encode(into w: inout ByteWriter) {
        w.write(status.rawValue); w.write(littleEndian: handle); w.write(littleEndian: interval)
        w.write(littleEndian: latency); w.write(littleEndian: supervisionTimeout)
    }
    public var summary: String {
        "status=\(status) handle=\(hex(handle)) interval=\(Units.interval1250(interval)) latency=\(latency) timeout=\(Units.timeout10(supervisionTimeout))"
    }
}

/// LE Read Remote Features Complete (7.7.65.4): status(1) handle(2) LE features(8).
public struct LEReadRemoteFeaturesComplete: WireCodable, HCISummary {
    public var status: HCIStatus
    public var handle: UInt16
    public var features: UInt64
    public init(status: HCIStatus, handle: UInt16, features: UInt64) {
        self.status = status; self.handle = handle; self.features = features
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        status = try HCIStatus(parsing: &input)
        handle = try UInt16(parsingLittleEndian: &input)
        features = try UInt64(parsingLittleEndian: &input)
    }
    public func encode(into w: inout ByteWriter) {
        w.write(status.rawValue); w.write(littleEndian: handle); w.write(littleEndian: features)
    }
    public var summary: String { "status=\(status) handle=\(hex(handle)) features=\(hex(features))" }
}

/// LE Long Term Key Request (7.7.65.5): handle(2) random number(8) EDIV(2).
public struct LELongTermKeyRequest: WireCodable, HCISummary {
    public var handle: UInt16
    public var randomNumber: UInt64
    public var encryptedDiversifier: UInt16
    public init(handle: UInt16, randomNumber: UInt64, encryptedDiversifier: UInt16) {
        self.handle = handle; self.randomNumber = randomNumber; self.encryptedDiversifier = encryptedDiversifier
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        handle = try UInt16(parsingLittleEndian: &input)
        randomNumber = try UInt64(parsingLittleEndian: &input)
        encryptedDiversifier = try UInt16(parsingLittleEndian: &input)
    }
    public func encode(into w: inout ByteWriter) {
        w.write(littleEndian: handle); w.write(littleEndian: randomNumber); w.write(littleEndian: encryptedDiversifier)
    }
    public var summary: String { "handle=\(hex(handle)) rand=\(hex(randomNumber)) ediv=\(hex(encryptedDiversifier))" }
}

/// LE Remote Connection Parameter Request (7.7.65.6): handle(2) interval min(2) max(2) max latency(2) timeout(2).
public struct LERemoteConnectionParameterRequest: WireCodable, HCISummary {
    public var handle: UInt16
    public var intervalMin: UInt16
    public var intervalMax: UInt16
    public var maxLatency: UInt16
    public var supervisionTimeout: UInt16
    public init(handle: UInt16, intervalMin: UInt16, intervalMax: UInt16, maxLatency: UInt16, supervisionTimeout: UInt16) {
        self.handle = handle; self.intervalMin = intervalMin; self.intervalMax = intervalMax
        self.maxLatency = maxLatency; self.supervisionTimeout = supervisionTimeout
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        handle = try UInt16(parsingLittleEndian: &input)
        intervalMin = try UInt16(parsingLittleEndian: &input)
        intervalMax = try UInt16(parsingLittleEndian: &input)
        maxLatency = try UInt16(parsingLittleEndian: &input)
        supervisionTimeout = try UInt16(parsingLittleEndian: &input)
    }
    public func encode(into w: inout ByteWriter) {
        for v in [handle, intervalMin, intervalMax, maxLatency, supervisionTimeout] { w.write(littleEndian: v) }
    }
    public var summary: String {
        "handle=\(hex(handle)) interval=\(Units.interval1250(intervalMin))–\(Units.interval1250(intervalMax)) latency=\(maxLatency) timeout=\(Units.timeout10(supervisionTimeout))"
    }
}

/// LE Data Length Change (7.7.65.7): handle(2) max TX octets(2) max TX time(2) max RX octets(2) max RX time(2).
public struct LEDataLengthChange: WireCodable, HCISummary {
    public var handle: UInt16
    public var maxTxOctets: UInt16
    public var maxTxTime: UInt16
    public var maxRxOctets: UInt16
    public var maxRxTime: UInt16
    public init(handle: UInt16, maxTxOctets: UInt16, maxTxTime: UInt16, maxRxOctets: UInt16, maxRxTime: UInt16) {
        self.handle = handle; self.maxTxOctets = maxTxOctets; self.maxTxTime = maxTxTime
        self.maxRxOctets = maxRxOctets; self.maxRxTime = maxRxTime
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        handle = try UInt16(parsingLittleEndian: &input)
        maxTxOctets = try UInt16(parsingLittleEndian: &input)
        maxTxTime = try UInt16(parsingLittleEndian: &input)
        maxRxOctets = try UInt16(parsingLittleEndian: &input)
        maxRxTime = try UInt16(parsingLittleEndian: &input)
    }
    public func encode(into w: inout ByteWriter) {
        for v in [handle, maxTxOctets, maxTxTime, maxRxOctets, maxRxTime] { w.write(littleEndian: v) }
    }
    public var summary: String {
        "handle=\(hex(handle)) tx=\(maxTxOctets) B/\(maxTxTime) µs rx=\(maxRxOctets) B/\(maxRxTime) µs"
    }
}

/// LE PHY Update Complete (7.7.65.12): status(1) handle(2) TX PHY(1) RX PHY(1).
public struct LEPHYUpdateComplete: WireCodable, HCISummary {
    public var status: HCIStatus
    public var handle: UInt16
    public var txPHY: LEPHY
    public var rxPHY: LEPHY
    public init(status: HCIStatus, handle: UInt16, txPHY: LEPHY, rxPHY: LEPHY) {
        self.status = status; self.handle = handle; self.txPHY = txPHY; self.rxPHY = rxPHY
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        status = try HCIStatus(parsing: &input)
        handle = try UInt16(parsingLittleEndian: &input)
        txPHY = LEPHY(rawValue: try input.readUInt8())
        rxPHY = LEPHY(rawValue: try input.readUInt8())
    }
    public func encode(into w: inout ByteWriter) {
        w.write(status.rawValue); w.write(littleEndian: handle); w.write(txPHY.rawValue); w.write(rxPHY.rawValue)
    }
    public var summary: String { "status=\(status) handle=\(hex(handle)) tx=\(txPHY) rx=\(rxPHY)" }
}

/// LE Advertising Report (7.7.65.2): num reports(1), then per report: event type(1) address type(1)
/// address(6) data length(1) data RSSI(1, signed dBm; 127 = not available).
public struct LEAdvertisingReport: WireCodable, HCISummary {
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
public struct LEExtendedAdvertisingReport: WireCodable, HCISummary {
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
