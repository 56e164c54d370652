import BLECore

/// Typed Command Complete return parameters (Core Spec 5.4 Vol 4, Part E, 7.7.14 and each command's section).
public enum HCIReturnParameters: Hashable, Sendable {
    /// No return parameters (e.g. the NOP opcode 0x0000 that announces free command slots).
    case none
    /// Only a status byte (Reset, LE Set Scan Enable … most setter commands).
    case status(HCIStatus)
    /// Status and connection handle (LE Set Data Length, LTK Request Reply …).
    case statusAndHandle(HCIStatusAndHandle)
    case readBufferSize(ReadBufferSizeReturn)
    case leReadBufferSize(LEReadBufferSizeReturn)
    case leReadBufferSizeV2(LEReadBufferSizeV2Return)
    case readLocalVersionInformation(ReadLocalVersionInformationReturn)
    /// Any return parameter set declared once (``HCIParameterSet``, listed in ``HCIDeclaredSets``).
    case declared(HCIDeclared)
    /// Return parameters of a command without a typed decoder: first byte taken as status when present.
    case raw([UInt8])

    /// The status byte, when the return parameters start with one.
    public var status: HCIStatus? {
        switch self {
        case .none: nil
        case let .status(s): s
        case let .statusAndHandle(v): v.status
        case let .readBufferSize(v): v.status
        case let .leReadBufferSize(v): v.status
        case let .leReadBufferSizeV2(v): v.status
        case let .readLocalVersionInformation(v): v.status
        case let .declared(d): d.status
        case let .raw(b): b.first.map(HCIStatus.init(rawValue:))
        }
    }

    public var bytes: [UInt8] {
        switch self {
        case .none: []
        case let .status(s): [s.rawValue]
        case let .statusAndHandle(v): v.bytes
        case let .readBufferSize(v): v.bytes
        case let .leReadBufferSize(v): v.bytes
        case let .leReadBufferSizeV2(v): v.bytes
        case let .readLocalVersionInformation(v): v.bytes
        case let .declared(d): d.value.bytes
        case let .raw(b): b
        }
    }

    public var summary: String {
        switch self {
        case .none: ""
        case let .status(s): "status=\(s)"
        case let .statusAndHandle(v): v.summary
        case let .readBufferSize(v): v.summary
        case let .leReadBufferSize(v): v.summary
        case let .leReadBufferSizeV2(v): v.summary
        case let .readLocalVersionInformation(v): v.summary
        case let .declared(d): d.summary
        case let .raw(b):
            b.isEmpty ? "" : "status=\(HCIStatus(b[0]))" + (b.count > 1 ? " return=" + hexString(b.dropFirst()) : "")
        }
    }

    /// Decodes the return parameters of `opcode`, typed when the table knows the command.
    public static func decode(opcode: HCICommand, bytes: [UInt8]) throws(DecodeError) -> HCIReturnParameters {
        if bytes.isEmpty { return .none }
        if let decode = HCICommandTable.entries[opcode.rawValue]?.decodeReturn, bytes.count > 1 {
            return try withByteReader(bytes) { (r: inout ByteReader) throws(DecodeError) -> HCIReturnParameters in
                let v = try decode(&r)
                try r.expectEnd()
                return v
            }
        }
        if bytes.count == 1 { return .status(HCIStatus(bytes[0])) }
        return .raw(bytes)
    }
}

/// Read Local Version Information return (Core Spec 5.4 Vol 4, Part E, 7.4.1): status(1) HCI_Version(1)
/// HCI_Subversion(2) LMP_Version(1) Company_Identifier(2) LMP_Subversion(2). The company identifier is the
/// controller's maker, which decides what its vendor-specific commands and events mean (``VendorSpecific``).
public struct ReadLocalVersionInformationReturn: WireCodable, HCISummary {
    public var status: HCIStatus
    /// HCI version (Assigned Numbers, same values as the LMP/LL version: 0x09 = 5.0 …).
    public var hciVersion: UInt8
    /// HCI_Subversion (HCI_Revision before Core 5.3).
    public var hciSubversion: UInt16
    public var lmpVersion: UInt8
    public var manufacturer: ControllerManufacturer
    public var lmpSubversion: UInt16
    public init(
        status: HCIStatus = .success, hciVersion: UInt8, hciSubversion: UInt16, lmpVersion: UInt8,
        manufacturer: ControllerManufacturer, lmpSubversion: UInt16
    ) {
        self.status = status; self.hciVersion = hciVersion; self.hciSubversion = hciSubversion
        self.lmpVersion = lmpVersion; self.manufacturer = manufacturer; self.lmpSubversion = lmpSubversion
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        status = try HCIStatus(parsing: &input)
        hciVersion = try input.readUInt8()
        hciSubversion = try UInt16(parsingLittleEndian: &input)
        lmpVersion = try input.readUInt8()
        manufacturer = ControllerManufacturer(try UInt16(parsingLittleEndian: &input))
        lmpSubversion = try UInt16(parsingLittleEndian: &input)
    }
    public func encode(into w: inout ByteWriter) {
        w.write(status.rawValue); w.write(hciVersion); w.write(littleEndian: hciSubversion); w.write(lmpVersion)
        w.write(littleEndian: manufacturer.rawValue); w.write(littleEndian: lmpSubversion)
    }
    /// `5.0` for the version numbers Assigned Numbers defines, hex otherwise.
    public static func versionName(_ v: UInt8) -> String {
        let names = ReadRemoteVersionInformationComplete.versions
        return Int(v) < names.count ? names[Int(v)] : hex(v)
    }
    public var summary: String {
        "status=\(status) hci=\(Self.versionName(hciVersion)) hciSubversion=\(hex(hciSubversion)) lmp=\(Self.versionName(lmpVersion)) "
            + "company=\(hex(manufacturer.rawValue)) lmpSubversion=\(hex(lmpSubversion))"
    }
}

/// Status(1) and Connection_Handle(2) return parameters.
public struct HCIStatusAndHandle: WireCodable, HCISummary {
    public var status: HCIStatus
    public var handle: UInt16
    public init(status: HCIStatus, handle: UInt16) { self.status = status; self.handle = handle }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        status = try HCIStatus(parsing: &input)
        handle = try UInt16(parsingLittleEndian: &input)
    }
    public func encode(into w: inout ByteWriter) { w.write(status.rawValue); w.write(littleEndian: handle) }
    public var summary: String { "status=\(status) handle=\(hex(handle))" }
}

/// Read Buffer Size return (7.4.5): status(1) ACL data packet length(2) synchronous data packet length(1)
/// total ACL packets(2) total synchronous packets(2).
public struct ReadBufferSizeReturn: WireCodable, HCISummary {
    public var status: HCIStatus
    public var aclDataPacketLength: UInt16
    public var synchronousDataPacketLength: UInt8
    public var totalACLDataPackets: UInt16
    public var totalSynchronousDataPackets: UInt16
    public init(
        status: HCIStatus, aclDataPacketLength: UInt16, synchronousDataPacketLength: UInt8,
        totalACLDataPackets: UInt16, totalSynchronousDataPackets: UInt16
    ) {
        self.status = status; self.aclDataPacketLength = aclDataPacketLength
        self.synchronousDataPacketLength = synchronousDataPacketLength
        self.totalACLDataPackets = totalACLDataPackets; self.totalSynchronousDataPackets = totalSynchronousDataPackets
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        status = try HCIStatus(parsing: &input)
        aclDataPacketLength = try UInt16(parsingLittleEndian: &input)
        synchronousDataPacketLength = try input.readUInt8()
        totalACLDataPackets = try UInt16(parsingLittleEndian: &input)
        totalSynchronousDataPackets = try UInt16(parsingLittleEndian: &input)
    }
    public func encode(into w: inout ByteWriter) {
        w.write(status.rawValue); w.write(littleEndian: aclDataPacketLength); w.write(synchronousDataPacketLength)
        w.write(littleEndian: totalACLDataPackets); w.write(littleEndian: totalSynchronousDataPackets)
    }
    public var summary: String {
        "status=\(status) aclLength=\(aclDataPacketLength) aclPackets=\(totalACLDataPackets) scoLength=\(synchronousDataPacketLength) scoPackets=\(totalSynchronousDataPackets)"
    }
}

/// LE Read Buffer Size v1 return (7.8.2): status(1) LE ACL data packet length(2) total LE ACL packets(1).
public struct LEReadBufferSizeReturn: WireCodable, HCISummary {
    public var status: HCIStatus
    public var aclDataPacketLength: UInt16
    public var totalACLDataPackets: UInt8
    public init(status: HCIStatus, aclDataPacketLength: UInt16, totalACLDataPackets: UInt8) {
        self.status = status; self.aclDataPacketLength = aclDataPacketLength; self.totalACLDataPackets = totalACLDataPackets
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        status = try HCIStatus(parsing: &input)
        aclDataPacketLength = try UInt16(parsingLittleEndian: &input)
        totalACLDataPackets = try input.readUInt8()
    }
    public func encode(into w: inout ByteWriter) {
        w.write(status.rawValue); w.write(littleEndian: aclDataPacketLength); w.write(totalACLDataPackets)
    }
    public var summary: String { "status=\(status) aclLength=\(aclDataPacketLength) aclPackets=\(totalACLDataPackets)" }
}

/// LE Read Buffer Size v2 return (7.8.2): v1 fields then ISO data packet length(2) total ISO packets(1).
public struct LEReadBufferSizeV2Return: WireCodable, HCISummary {
    public var status: HCIStatus
    public var aclDataPacketLength: UInt16
    public var totalACLDataPackets: UInt8
    public var isoDataPacketLength: UInt16
    public var totalISODataPackets: UInt8
    public init(
        status: HCIStatus, aclDataPacketLength: UInt16, totalACLDataPackets: UInt8,
        isoDataPacketLength: UInt16, totalISODataPackets: UInt8
    ) {
        self.status = status; self.aclDataPacketLength = aclDataPacketLength; self.totalACLDataPackets = totalACLDataPackets
        self.isoDataPacketLength = isoDataPacketLength; self.totalISODataPackets = totalISODataPackets
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        status = try HCIStatus(parsing: &input)
        aclDataPacketLength = try UInt16(parsingLittleEndian: &input)
        totalACLDataPackets = try input.readUInt8()
        isoDataPacketLength = try UInt16(parsingLittleEndian: &input)
        totalISODataPackets = try input.readUInt8()
    }
    public func encode(into w: inout ByteWriter) {
        w.write(status.rawValue); w.write(littleEndian: aclDataPacketLength); w.write(totalACLDataPackets)
        w.write(littleEndian: isoDataPacketLength); w.write(totalISODataPackets)
    }
    public var summary: String {
        "status=\(status) aclLength=\(aclDataPacketLength) aclPackets=\(totalACLDataPackets) isoLength=\(isoDataPacketLength) isoPackets=\(totalISODataPackets)"
    }
}
