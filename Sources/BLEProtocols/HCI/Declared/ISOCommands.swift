import BLECore

// The isochronous-channel commands (Core Spec 5.4 Vol 4, Part E, 7.8.96–7.8.110, 7.8.117), each declared once.

/// A codec ID (Vol 4, Part E, 7.8.109): coding format (Assigned Numbers 2.11: 0x03 transparent, 0x06 LC3, 0xFF
/// vendor), company ID and vendor codec ID (both 0 unless vendor-specific).
public struct HCICodecID: WireCodable, CustomStringConvertible {
    public var codingFormat: UInt8
    public var companyID: UInt16
    public var vendorCodecID: UInt16
    public init(codingFormat: UInt8 = 0, companyID: UInt16 = 0, vendorCodecID: UInt16 = 0) {
        self.codingFormat = codingFormat; self.companyID = companyID; self.vendorCodecID = vendorCodecID
    }
    public static let transparent = HCICodecID(codingFormat: 0x03)
    public static let lc3 = HCICodecID(codingFormat: 0x06)
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        codingFormat = try input.readUInt8()
        companyID = try UInt16(parsingLittleEndian: &input)
        vendorCodecID = try UInt16(parsingLittleEndian: &input)
    }
    public func encode(into w: inout ByteWriter) {
        w.write(codingFormat); w.write(littleEndian: companyID); w.write(littleEndian: vendorCodecID)
    }
    static let formats: [UInt8: String] = [
        0x00: "µ-law", 0x01: "A-law", 0x02: "CVSD", 0x03: "Transparent", 0x04: "Linear PCM", 0x05: "mSBC", 0x06: "LC3",
        0x07: "G.729A",
    ]
    public var description: String {
        if codingFormat == 0xFF { return "Vendor(\(hex(companyID)):\(hex(vendorCodecID)))" }
        return Self.formats[codingFormat] ?? hex(codingFormat)
    }
}

/// LE Read ISO TX Sync (7.8.96): Connection_Handle.
public struct LEReadISOTXSync: HCIParameterSet {
    public var handle: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x08, ocf: 0x0061))
    public static let name = "LE Read ISO TX Sync"
    public static let fields: [HCIField<Self>] = [.handle(\.handle)]
}

/// LE Read ISO TX Sync return: status, handle, Packet_Sequence_Number(2), TX_Time_Stamp(4, µs), Time_Offset(3, µs).
public struct LEReadISOTXSyncReturn: HCIParameterSet {
    public var status = HCIStatus.success
    public var handle: UInt16 = 0
    public var sequenceNumber: UInt16 = 0
    public var txTimeStamp: UInt32 = 0
    public var timeOffset: UInt32 = 0
    public init() {}
    public static let carrier = HCICarrier.returnParameters(LEReadISOTXSync.command)
    public static let name = "LE Read ISO TX Sync"
    public static let fields: [HCIField<Self>] = [
        .status(\.status), .handle(\.handle), .u16("sequenceNumber", \.sequenceNumber), .u32("txTimeStamp", \.txTimeStamp),
        .u24("timeOffset", \.timeOffset),
    ]
}

/// The parameters of one CIS in LE Set CIG Parameters (7.8.97): CIS_ID, Max_SDU C→P and P→C, PHY C→P and P→C (bit
/// fields), RTN C→P and P→C.
public struct CIGParametersCIS: HCIFieldGroup {
    public var cisID: UInt8 = 0
    public var maxSDUCToP: UInt16 = 0
    public var maxSDUPToC: UInt16 = 0
    public var phyCToP: UInt8 = 0
    public var phyPToC: UInt8 = 0
    public var rtnCToP: UInt8 = 0
    public var rtnPToC: UInt8 = 0
    public init() {}
    public static let fields: [HCIField<Self>] = [
        .u8("cisId", \.cisID), .u16("maxSduCToP", \.maxSDUCToP), .u16("maxSduPToC", \.maxSDUPToC),
        .u8("phyCToP", \.phyCToP, .phyBits), .u8("phyPToC", \.phyPToC, .phyBits), .u8("rtnCToP", \.rtnCToP),
        .u8("rtnPToC", \.rtnPToC),
    ]
}

/// LE Set CIG Parameters (7.8.97): CIG_ID, SDU_Interval C→P and P→C (µs, 24 bits), Worst_Case_SCA, Packing, Framing,
/// Max_Transport_Latency C→P and P→C (ms), then CIS_Count and each CIS's parameters.
public struct LESetCIGParameters: HCIParameterSet {
    public var cigID: UInt8 = 0
    public var sduIntervalCToP: UInt32 = 0
    public var sduIntervalPToC: UInt32 = 0
    public var worstCaseSCA: UInt8 = 0
    public var packing: UInt8 = 0
    public var framing: UInt8 = 0
    public var maxTransportLatencyCToP: UInt16 = 0
    public var maxTransportLatencyPToC: UInt16 = 0
    public var cis: [CIGParametersCIS] = []
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x08, ocf: 0x0062))
    public static let name = "LE Set CIG Parameters"
    public static let fields: [HCIField<Self>] = [
        .u8("cigId", \.cigID), .u24("sduIntervalCToP", \.sduIntervalCToP), .u24("sduIntervalPToC", \.sduIntervalPToC),
        .u8("worstCaseSca", \.worstCaseSCA), .u8("packing", \.packing, .named(packings)),
        .u8("framing", \.framing, .named(framings)), .u16("maxTransportLatencyCToP", \.maxTransportLatencyCToP, .milliseconds),
        .u16("maxTransportLatencyPToC", \.maxTransportLatencyPToC, .milliseconds), .list("cis", \.cis),
    ]
}

let packings: [UInt32: String] = [0: "sequential", 1: "interleaved"]
let framings: [UInt32: String] = [0: "unframed", 1: "framed"]

/// The return of LE Set CIG Parameters and its Test form: status, CIG_ID, CIS_Count, Connection_Handle[i] (the CIS
/// handles, in the order of the CIS_IDs).
public struct LESetCIGParametersReturn: HCIParameterSet {
    public var status = HCIStatus.success
    public var cigID: UInt8 = 0
    public var handles: [UInt16] = []
    public init() {}
    public static let carrier = HCICarrier.returnParameters(LESetCIGParameters.command)
    public static let name = "LE Set CIG Parameters"
    public static let fields: [HCIField<Self>] = [.status(\.status), .u8("cigId", \.cigID), .counted("handles", \.handles, width: 2)]
}

/// The parameters of one CIS in LE Set CIG Parameters Test (7.8.98).
public struct CIGTestCIS: HCIFieldGroup {
    public var cisID: UInt8 = 0
    public var nse: UInt8 = 0
    public var maxSDUCToP: UInt16 = 0
    public var maxSDUPToC: UInt16 = 0
    public var maxPDUCToP: UInt16 = 0
    public var maxPDUPToC: UInt16 = 0
    public var phyCToP: UInt8 = 0
    public var phyPToC: UInt8 = 0
    public var bnCToP: UInt8 = 0
    public var bnPToC: UInt8 = 0
    public init() {}
    public static let fields: [HCIField<Self>] = [
        .u8("cisId", \.cisID), .u8("nse", \.nse), .u16("maxSduCToP", \.maxSDUCToP), .u16("maxSduPToC", \.maxSDUPToC),
        .u16("maxPduCToP", \.maxPDUCToP), .u16("maxPduPToC", \.maxPDUPToC), .u8("phyCToP", \.phyCToP, .phyBits),
        .u8("phyPToC", \.phyPToC, .phyBits), .u8("bnCToP", \.bnCToP), .u8("bnPToC", \.bnPToC),
    ]
}

/// LE Set CIG Parameters Test (7.8.98): the link-layer parameters given directly.
public struct LESetCIGParametersTest: HCIParameterSet {
    public var cigID: UInt8 = 0
    public var sduIntervalCToP: UInt32 = 0
    public var sduIntervalPToC: UInt32 = 0
    public var ftCToP: UInt8 = 0
    public var ftPToC: UInt8 = 0
    public var isoInterval: UInt16 = 0
    public var worstCaseSCA: UInt8 = 0
    public var packing: UInt8 = 0
    public var framing: UInt8 = 0
    public var cis: [CIGTestCIS] = []
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x08, ocf: 0x0063))
    public static let name = "LE Set CIG Parameters Test"
    public static let fields: [HCIField<Self>] = [
        .u8("cigId", \.cigID), .u24("sduIntervalCToP", \.sduIntervalCToP), .u24("sduIntervalPToC", \.sduIntervalPToC),
        .u8("ftCToP", \.ftCToP), .u8("ftPToC", \.ftPToC), .u16("isoInterval", \.isoInterval, .interval1250),
        .u8("worstCaseSca", \.worstCaseSCA), .u8("packing", \.packing, .named(packings)),
        .u8("framing", \.framing, .named(framings)), .list("cis", \.cis),
    ]
}

/// The return of LE Set CIG Parameters Test: as LE Set CIG Parameters'.
public struct LESetCIGParametersTestReturn: HCIParameterSet {
    public var base = LESetCIGParametersReturn()
    public init() {}
    public static let carrier = HCICarrier.returnParameters(LESetCIGParametersTest.command)
    public static let name = "LE Set CIG Parameters Test"
    public static let fields: [HCIField<Self>] = LESetCIGParametersReturn.fields.reparented(\.base)
}

/// One CIS of LE Create CIS (7.8.99): CIS_Connection_Handle, ACL_Connection_Handle.
public struct CreateCISPair: HCIFieldGroup {
    public var cisHandle: UInt16 = 0
    public var aclHandle: UInt16 = 0
    public init() {}
    public static let fields: [HCIField<Self>] = [.handle("cisHandle", \.cisHandle), .handle("aclHandle", \.aclHandle)]
}

/// LE Create CIS (7.8.99): CIS_Count, then (CIS handle, ACL handle) per CIS.
public struct LECreateCIS: HCIParameterSet {
    public var pairs: [CreateCISPair] = []
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x08, ocf: 0x0064))
    public static let name = "LE Create CIS"
    public static let fields: [HCIField<Self>] = [.list("cis", \.pairs)]
}

/// LE Remove CIG (7.8.100): CIG_ID.
public struct LERemoveCIG: HCIParameterSet {
    public var cigID: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x08, ocf: 0x0065))
    public static let name = "LE Remove CIG"
    public static let fields: [HCIField<Self>] = [.u8("cigId", \.cigID)]
}

/// LE Remove CIG return: status, CIG_ID.
public struct LERemoveCIGReturn: HCIParameterSet {
    public var status = HCIStatus.success
    public var cigID: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.returnParameters(LERemoveCIG.command)
    public static let name = "LE Remove CIG"
    public static let fields: [HCIField<Self>] = [.status(\.status), .u8("cigId", \.cigID)]
}

/// LE Accept CIS Request (7.8.101): Connection_Handle (the CIS).
public struct LEAcceptCISRequest: HCIParameterSet {
    public var handle: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x08, ocf: 0x0066))
    public static let name = "LE Accept CIS Request"
    public static let fields: [HCIField<Self>] = [.handle(\.handle)]
}

/// LE Reject CIS Request (7.8.102): Connection_Handle, Reason.
public struct LERejectCISRequest: HCIParameterSet {
    public var handle: UInt16 = 0
    public var reason = HCIStatus.success
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x08, ocf: 0x0067))
    public static let name = "LE Reject CIS Request"
    public static let fields: [HCIField<Self>] = [.handle(\.handle), .status("reason", \.reason)]
}

/// LE Setup ISO Data Path (7.8.109): Connection_Handle, Data_Path_Direction (0 host→controller, 1 controller→host),
/// Data_Path_ID (0 HCI, 1–0xFE vendor), Codec_ID(5), Controller_Delay(3, µs), Codec_Configuration (length-prefixed).
public struct LESetupISODataPath: HCIParameterSet {
    public var handle: UInt16 = 0
    public var direction: UInt8 = 0
    public var dataPathID: UInt8 = 0
    public var codecID = HCICodecID()
    public var controllerDelay: UInt32 = 0
    public var codecConfiguration: [UInt8] = []
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x08, ocf: 0x006E))
    public static let name = "LE Setup ISO Data Path"
    public static let directions: [UInt32: String] = [0: "host→controller", 1: "controller→host"]
    public static let fields: [HCIField<Self>] = [
        .handle(\.handle), .u8("direction", \.direction, .named(directions)),
        .u8("dataPath", \.dataPathID, .named([0: "HCI"])), .value("codec", \.codecID, bytes: 5),
        .u24("controllerDelay", \.controllerDelay), .lengthPrefixed("codecConfiguration", \.codecConfiguration),
    ]
}

/// LE Remove ISO Data Path (7.8.110): Connection_Handle, Data_Path_Direction (bit 0 input, bit 1 output).
public struct LERemoveISODataPath: HCIParameterSet {
    public var handle: UInt16 = 0
    public var directions: UInt8 = 0
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x08, ocf: 0x006F))
    public static let name = "LE Remove ISO Data Path"
    public static let fields: [HCIField<Self>] = [
        .handle(\.handle), .u8("directions", \.directions, .named([1: "host→controller", 2: "controller→host", 3: "both"])),
    ]
}

/// LE Read ISO Link Quality (7.8.117): Connection_Handle.
public struct LEReadISOLinkQuality: HCIParameterSet {
    public var handle: UInt16 = 0
    public init() {}
    public static let carrier = HCICarrier.command(HCICommand(ogf: 0x08, ocf: 0x0075))
    public static let name = "LE Read ISO Link Quality"
    public static let fields: [HCIField<Self>] = [.handle(\.handle)]
}

/// LE Read ISO Link Quality return (7.8.117): counters since the CIS or BIS started, each 32 bits.
public struct LEReadISOLinkQualityReturn: HCIParameterSet {
    public var status = HCIStatus.success
    public var handle: UInt16 = 0
    public var txUnackedPackets: UInt32 = 0
    public var txFlushedPackets: UInt32 = 0
    public var txLastSubeventPackets: UInt32 = 0
    public var retransmittedPackets: UInt32 = 0
    public var crcErrorPackets: UInt32 = 0
    public var rxUnreceivedPackets: UInt32 = 0
    public var duplicatePackets: UInt32 = 0
    public init() {}
    public static let carrier = HCICarrier.returnParameters(LEReadISOLinkQuality.command)
    public static let name = "LE Read ISO Link Quality"
    public static let fields: [HCIField<Self>] = [
        .status(\.status), .handle(\.handle), .u32("txUnacked", \.txUnackedPackets), .u32("txFlushed", \.txFlushedPackets),
        .u32("txLastSubevent", \.txLastSubeventPackets), .u32("retransmitted", \.retransmittedPackets),
        .u32("crcErrors", \.crcErrorPackets), .u32("rxUnreceived", \.rxUnreceivedPackets), .u32("duplicates", \.duplicatePackets),
    ]
}

extension HCIParameterSet {
    /// The command a set's carrier names (command parameters or their return).
    public static var command: HCICommand {
        switch carrier {
        case .command(let c), .returnParameters(let c): c
        default: HCICommand(0)
        }
    }
}

extension Array {
    /// Fields of a group moved under a parent's key path (a return that is another's return).
    func reparented<Parent, G>(_ path: WritableKeyPath<Parent, G> & Sendable) -> [HCIField<Parent>]
    where Element == HCIField<G>, G: HCIParameterSet {
        HCIField<Parent>.inlineFields(self, path)
    }
}
