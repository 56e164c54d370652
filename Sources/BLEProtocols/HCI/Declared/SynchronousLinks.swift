import BLECore

// SCO and eSCO: the synchronous links a call's audio travels on, each with its own handle beside its ACL (Core Spec 6.0
// Vol 4, Part E, 7.1.26–28, 7.1.45–46, 7.7.35–36; Vol 2, Part B, 4.3–4.4).

/// A link type as Connection Request and the synchronous events name it (7.7.4, 7.7.35).
public enum SynchronousLinkType {
    public static let sco: UInt8 = 0x00
    public static let acl: UInt8 = 0x01
    public static let esco: UInt8 = 0x02
    public static let names: [UInt32: String] = [0: "SCO", 1: "ACL", 2: "eSCO"]
}

/// The air mode of a synchronous link (7.7.35): what is coded on the air. Transparent carries a codec the host
/// chose (mSBC, LC3-SWB), CVSD is narrowband voice.
public struct AirMode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let muLaw = AirMode(rawValue: 0)
    public static let aLaw = AirMode(rawValue: 1)
    public static let cvsd = AirMode(rawValue: 2)
    public static let transparent = AirMode(rawValue: 3)
    public static let names: [UInt32: String] = [0: "µ-law", 1: "A-law", 2: "CVSD", 3: "transparent"]
    public var description: String { Self.names[UInt32(rawValue)] ?? "AirMode(\(hex(rawValue)))" }
}

/// A coding format of Enhanced Setup Synchronous Connection (7.1.45; Assigned Numbers 2.11): format, company, vendor
/// codec.
public struct HCICodingFormat: WireCodable, CustomStringConvertible {
    public var format: UInt8
    public var company: UInt16
    public var vendorCodec: UInt16
    public init(format: UInt8, company: UInt16 = 0, vendorCodec: UInt16 = 0) {
        self.format = format
        self.company = company
        self.vendorCodec = vendorCodec
    }
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        format = try input.readUInt8()
        company = try UInt16(parsingLittleEndian: &input)
        vendorCodec = try UInt16(parsingLittleEndian: &input)
    }
    public func encode(into writer: inout ByteWriter) {
        writer.write(format)
        writer.write(littleEndian: company)
        writer.write(littleEndian: vendorCodec)
    }
    public static let names: [UInt8: String] = [
        0x00: "µ-law", 0x01: "A-law", 0x02: "CVSD", 0x03: "transparent", 0x04: "linear PCM", 0x05: "mSBC", 0x06: "LC3",
        0x07: "G.729A",
    ]
    public var description: String {
        if format == 0xFF { return "vendor \(hex(company, width: 4)):\(hex(vendorCodec, width: 4))" }
        return Self.names[format] ?? "format \(hex(format))"
    }
    static let width = 5
}

/// The voice setting of Setup Synchronous Connection (7.3.28): bits 0–1 the air coding (0 CVSD, 1 µ-law, 2 A-law,
/// 3 transparent data).
public enum VoiceSetting {
    public static func airCoding(_ setting: UInt16) -> String {
        ["CVSD", "µ-law", "A-law", "transparent"][Int(setting & 0x3)]
    }
}

/// Setup Synchronous Connection (7.1.26): add or change a SCO/eSCO link on the ACL `handle`.
public struct SetupSynchronousConnection: HCIParameterSet {
    public var handle: UInt16 = 0
    public var transmitBandwidth: UInt32 = 0
    public var receiveBandwidth: UInt32 = 0
    public var maxLatency: UInt16 = 0
    public var voiceSetting: UInt16 = 0
    public var retransmissionEffort: UInt8 = 0
    public var packetType: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x01, ocf: 0x0028))
    public static let name = "Setup Synchronous Connection"
    public static let fields: [HCIField<Self>] = [
        .handle(\.handle), .u32("txBandwidth", \.transmitBandwidth), .u32("rxBandwidth", \.receiveBandwidth),
        .u16("maxLatency", \.maxLatency, .milliseconds), .u16("voiceSetting", \.voiceSetting, .hex),
        .u8("retransmission", \.retransmissionEffort, .named(retransmissionNames)), .u16("packetType", \.packetType, .hex),
    ]
    static let retransmissionNames: [UInt32: String] = [0: "none", 1: "power", 2: "quality", 0xFF: "don't care"]
}

/// Accept Synchronous Connection Request (7.1.27): accept BD_ADDR's SCO/eSCO request with these settings.
public struct AcceptSynchronousConnectionRequest: HCIParameterSet {
    public var address = BDAddress(0)
    public var transmitBandwidth: UInt32 = 0
    public var receiveBandwidth: UInt32 = 0
    public var maxLatency: UInt16 = 0
    public var voiceSetting: UInt16 = 0
    public var retransmissionEffort: UInt8 = 0
    public var packetType: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x01, ocf: 0x0029))
    public static let name = "Accept Synchronous Connection Request"
    public static let fields: [HCIField<Self>] = [
        .address("address", \.address), .u32("txBandwidth", \.transmitBandwidth), .u32("rxBandwidth", \.receiveBandwidth),
        .u16("maxLatency", \.maxLatency, .milliseconds), .u16("voiceSetting", \.voiceSetting, .hex),
        .u8("retransmission", \.retransmissionEffort, .named(SetupSynchronousConnection.retransmissionNames)),
        .u16("packetType", \.packetType, .hex),
    ]
}

/// Reject Synchronous Connection Request (7.1.28): refuse BD_ADDR's SCO/eSCO request with a reason.
public struct RejectSynchronousConnectionRequest: HCIParameterSet {
    public var address = BDAddress(0)
    public var reason = HCIStatus.success
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x01, ocf: 0x002A))
    public static let name = "Reject Synchronous Connection Request"
    public static let fields: [HCIField<Self>] = [.address("address", \.address), .status("reason", \.reason)]
}

/// What Enhanced Setup and Enhanced Accept Synchronous Connection share after the handle or address (7.1.45–46): the
/// coding formats on the air and at the host, the data paths, latency, packet types and retransmission effort.
public struct EnhancedSynchronousSettings: HCIFieldGroup {
    public var transmitBandwidth: UInt32 = 0
    public var receiveBandwidth: UInt32 = 0
    public var transmitCoding = HCICodingFormat(format: 0)
    public var receiveCoding = HCICodingFormat(format: 0)
    public var transmitFrameSize: UInt16 = 0
    public var receiveFrameSize: UInt16 = 0
    public var inputBandwidth: UInt32 = 0
    public var outputBandwidth: UInt32 = 0
    public var inputCoding = HCICodingFormat(format: 0)
    public var outputCoding = HCICodingFormat(format: 0)
    public var inputCodedDataSize: UInt16 = 0
    public var outputCodedDataSize: UInt16 = 0
    public var inputPCMFormat: UInt8 = 0
    public var outputPCMFormat: UInt8 = 0
    public var inputMSBPosition: UInt8 = 0
    public var outputMSBPosition: UInt8 = 0
    public var inputDataPath: UInt8 = 0
    public var outputDataPath: UInt8 = 0
    public var inputTransportUnitSize: UInt8 = 0
    public var outputTransportUnitSize: UInt8 = 0
    public var maxLatency: UInt16 = 0
    public var packetType: UInt16 = 0
    public var retransmissionEffort: UInt8 = 0
    public init() {}
    public static let fields: [HCIField<Self>] = [
        .u32("txBandwidth", \.transmitBandwidth), .u32("rxBandwidth", \.receiveBandwidth),
        .value("txCoding", \.transmitCoding, bytes: HCICodingFormat.width),
        .value("rxCoding", \.receiveCoding, bytes: HCICodingFormat.width),
        .u16("txFrameSize", \.transmitFrameSize), .u16("rxFrameSize", \.receiveFrameSize),
        .u32("inputBandwidth", \.inputBandwidth, .hidden), .u32("outputBandwidth", \.outputBandwidth, .hidden),
        .value("inputCoding", \.inputCoding, bytes: HCICodingFormat.width),
        .value("outputCoding", \.outputCoding, bytes: HCICodingFormat.width),
        .u16("inputCodedDataSize", \.inputCodedDataSize, .hidden), .u16("outputCodedDataSize", \.outputCodedDataSize, .hidden),
        .u8("inputPCMFormat", \.inputPCMFormat, .hidden), .u8("outputPCMFormat", \.outputPCMFormat, .hidden),
        .u8("inputMSB", \.inputMSBPosition, .hidden), .u8("outputMSB", \.outputMSBPosition, .hidden),
        .u8("inputDataPath", \.inputDataPath, .named(dataPaths)), .u8("outputDataPath", \.outputDataPath, .named(dataPaths)),
        .u8("inputUnitSize", \.inputTransportUnitSize, .hidden), .u8("outputUnitSize", \.outputTransportUnitSize, .hidden),
        .u16("maxLatency", \.maxLatency, .milliseconds), .u16("packetType", \.packetType, .hex),
        .u8("retransmission", \.retransmissionEffort, .named(SetupSynchronousConnection.retransmissionNames)),
    ]
    static let dataPaths: [UInt32: String] = [0: "HCI", 1: "vendor 1", 2: "vendor 2", 3: "vendor 3", 4: "vendor 4"]
}

/// Enhanced Setup Synchronous Connection (7.1.45): add or change a SCO/eSCO link on the ACL `handle`, with codecs.
public struct EnhancedSetupSynchronousConnection: HCIParameterSet {
    public var handle: UInt16 = 0
    public var settings = EnhancedSynchronousSettings()
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x01, ocf: 0x003D))
    public static let name = "Enhanced Setup Synchronous Connection"
    public static let fields: [HCIField<Self>] = [.handle(\.handle)] + HCIField.inline(\.settings)
}

/// Enhanced Accept Synchronous Connection Request (7.1.46): accept BD_ADDR's request with these codecs and settings.
public struct EnhancedAcceptSynchronousConnectionRequest: HCIParameterSet {
    public var address = BDAddress(0)
    public var settings = EnhancedSynchronousSettings()
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x01, ocf: 0x003E))
    public static let name = "Enhanced Accept Synchronous Connection Request"
    public static let fields: [HCIField<Self>] = [.address("address", \.address)] + HCIField.inline(\.settings)
}

/// Synchronous Connection Complete (7.7.35): the SCO/eSCO link to BD_ADDR is up on its own handle (or failed), with its
/// timing (slots), packet lengths and air mode.
public struct SynchronousConnectionComplete: HCIParameterSet {
    public var status = HCIStatus.success
    public var handle: UInt16 = 0
    public var address = BDAddress(0)
    public var linkType: UInt8 = 0
    public var transmissionInterval: UInt8 = 0
    public var retransmissionWindow: UInt8 = 0
    public var rxPacketLength: UInt16 = 0
    public var txPacketLength: UInt16 = 0
    public var airMode = AirMode.muLaw
    public init() {}
    public static let carrier = HCICarrier.event(HCIEventCode(0x2C))
    public static let name = "Synchronous Connection Complete"
    public static let fields: [HCIField<Self>] = [
        .status(\.status), .handle(\.handle), .address("address", \.address),
        .u8("link", \.linkType, .named(SynchronousLinkType.names)), .u8("interval", \.transmissionInterval),
        .u8("window", \.retransmissionWindow), .u16("rxLength", \.rxPacketLength), .u16("txLength", \.txPacketLength),
        .code("airMode", \.airMode),
    ]
}

/// Synchronous Connection Changed (7.7.36): an eSCO link's timing and packet lengths changed.
public struct SynchronousConnectionChanged: HCIParameterSet {
    public var status = HCIStatus.success
    public var handle: UInt16 = 0
    public var transmissionInterval: UInt8 = 0
    public var retransmissionWindow: UInt8 = 0
    public var rxPacketLength: UInt16 = 0
    public var txPacketLength: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.event(HCIEventCode(0x2D))
    public static let name = "Synchronous Connection Changed"
    public static let fields: [HCIField<Self>] = [
        .status(\.status), .handle(\.handle), .u8("interval", \.transmissionInterval), .u8("window", \.retransmissionWindow),
        .u16("rxLength", \.rxPacketLength), .u16("txLength", \.txPacketLength),
    ]
}
