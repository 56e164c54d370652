import BLECore

/// An HCI command opcode: OGF (6 bits) and OCF (10 bits) (Core Spec 5.4 Vol 4, Part E, 5.4.1).
///
/// Open struct: an unknown opcode prints as `HCICommand(0x2087)`, a vendor command (OGF 0x3F) that no vendor table
/// names as `Vendor Command (OCF 0x01F1)`; both are kept. Vendor commands are named by ``VendorSpecific``.
public struct HCICommand: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }
    public init(ogf: UInt8, ocf: UInt16) { rawValue = UInt16(ogf & 0x3F) << 10 | (ocf & 0x03FF) }

    /// Opcode Group Field (bits 10–15).
    @inlinable public var ogf: UInt8 { UInt8(truncatingIfNeeded: rawValue >> 10) }
    /// Opcode Command Field (bits 0–9).
    @inlinable public var ocf: UInt16 { rawValue & 0x03FF }
    /// OGF 0x3F: vendor-specific debug commands.
    public var isVendor: Bool { ogf == 0x3F }

    public static let nop = HCICommand(0x0000)
    public static let inquiry = HCICommand(ogf: 0x01, ocf: 0x0001)
    public static let periodicInquiryMode = HCICommand(ogf: 0x01, ocf: 0x0003)
    public static let createConnection = HCICommand(ogf: 0x01, ocf: 0x0005)
    public static let disconnect = HCICommand(ogf: 0x01, ocf: 0x0006)
    public static let acceptConnectionRequest = HCICommand(ogf: 0x01, ocf: 0x0009)
    public static let changeConnectionPacketType = HCICommand(ogf: 0x01, ocf: 0x000F)
    public static let remoteNameRequest = HCICommand(ogf: 0x01, ocf: 0x0019)
    public static let remoteNameRequestCancel = HCICommand(ogf: 0x01, ocf: 0x001A)
    public static let readRemoteVersionInformation = HCICommand(ogf: 0x01, ocf: 0x001D)
    public static let writeDefaultLinkPolicySettings = HCICommand(ogf: 0x02, ocf: 0x000F)
    public static let setEventMask = HCICommand(ogf: 0x03, ocf: 0x0001)
    public static let reset = HCICommand(ogf: 0x03, ocf: 0x0003)
    public static let writeSynchronousFlowControlEnable = HCICommand(ogf: 0x03, ocf: 0x002F)
    public static let writeScanEnable = HCICommand(ogf: 0x03, ocf: 0x001A)
    public static let hostNumberOfCompletedPackets = HCICommand(ogf: 0x03, ocf: 0x0035)
    public static let writeLinkSupervisionTimeout = HCICommand(ogf: 0x03, ocf: 0x0037)
    public static let setEventMaskPage2 = HCICommand(ogf: 0x03, ocf: 0x0063)
    public static let configureDataPath = HCICommand(ogf: 0x03, ocf: 0x0083)
    public static let readLocalVersionInformation = HCICommand(ogf: 0x04, ocf: 0x0001)
    public static let readBufferSize = HCICommand(ogf: 0x04, ocf: 0x0005)
    public static let readBDADDR = HCICommand(ogf: 0x04, ocf: 0x0009)
    public static let leSetEventMask = HCICommand(ogf: 0x08, ocf: 0x0001)
    public static let leReadBufferSize = HCICommand(ogf: 0x08, ocf: 0x0002)
    public static let leSetRandomAddress = HCICommand(ogf: 0x08, ocf: 0x0005)
    public static let leSetAdvertisingParameters = HCICommand(ogf: 0x08, ocf: 0x0006)
    public static let leSetAdvertisingData = HCICommand(ogf: 0x08, ocf: 0x0008)
    public static let leSetScanResponseData = HCICommand(ogf: 0x08, ocf: 0x0009)
    public static let leSetAdvertisingEnable = HCICommand(ogf: 0x08, ocf: 0x000A)
    public static let leSetScanParameters = HCICommand(ogf: 0x08, ocf: 0x000B)
    public static let leSetScanEnable = HCICommand(ogf: 0x08, ocf: 0x000C)
    public static let leCreateConnection = HCICommand(ogf: 0x08, ocf: 0x000D)
    public static let leCreateConnectionCancel = HCICommand(ogf: 0x08, ocf: 0x000E)
    public static let leClearFilterAcceptList = HCICommand(ogf: 0x08, ocf: 0x0010)
    public static let leAddDeviceToFilterAcceptList = HCICommand(ogf: 0x08, ocf: 0x0011)
    public static let leRemoveDeviceFromFilterAcceptList = HCICommand(ogf: 0x08, ocf: 0x0012)
    public static let leConnectionUpdate = HCICommand(ogf: 0x08, ocf: 0x0013)
    public static let leReadRemoteFeatures = HCICommand(ogf: 0x08, ocf: 0x0016)
    public static let leEnableEncryption = HCICommand(ogf: 0x08, ocf: 0x0019)
    public static let leLongTermKeyRequestReply = HCICommand(ogf: 0x08, ocf: 0x001A)
    public static let leLongTermKeyRequestNegativeReply = HCICommand(ogf: 0x08, ocf: 0x001B)
    public static let leRemoteConnectionParameterRequestReply = HCICommand(ogf: 0x08, ocf: 0x0020)
    public static let leRemoteConnectionParameterRequestNegativeReply = HCICommand(ogf: 0x08, ocf: 0x0021)
    public static let leSetDataLength = HCICommand(ogf: 0x08, ocf: 0x0022)
    public static let leReadMaximumDataLength = HCICommand(ogf: 0x08, ocf: 0x002F)
    public static let leReadPeerResolvableAddress = HCICommand(ogf: 0x08, ocf: 0x002B)
    public static let leReadLocalResolvableAddress = HCICommand(ogf: 0x08, ocf: 0x002C)
    public static let leSetPHY = HCICommand(ogf: 0x08, ocf: 0x0032)
    public static let leSetAdvertisingSetRandomAddress = HCICommand(ogf: 0x08, ocf: 0x0035)
    public static let leSetExtendedAdvertisingEnable = HCICommand(ogf: 0x08, ocf: 0x0039)
    public static let leRemoveAdvertisingSet = HCICommand(ogf: 0x08, ocf: 0x003C)
    public static let leClearAdvertisingSets = HCICommand(ogf: 0x08, ocf: 0x003D)
    public static let leSetPeriodicAdvertisingEnable = HCICommand(ogf: 0x08, ocf: 0x0040)
    public static let leSetExtendedScanParameters = HCICommand(ogf: 0x08, ocf: 0x0041)
    public static let leSetExtendedScanEnable = HCICommand(ogf: 0x08, ocf: 0x0042)
    public static let leExtendedCreateConnection = HCICommand(ogf: 0x08, ocf: 0x0043)
    public static let leReadBufferSizeV2 = HCICommand(ogf: 0x08, ocf: 0x0060)
    public static let leExtendedCreateConnectionV2 = HCICommand(ogf: 0x08, ocf: 0x0085)
    public static let leSetDefaultSubrate = HCICommand(ogf: 0x08, ocf: 0x007D)
    /// The commands that create an LE connection as central (Core Vol 4 Part E 7.8.12, 7.8.66).
    public static let leConnectionCreates: Set<HCICommand> = [
        .leCreateConnection, .leExtendedCreateConnection, .leExtendedCreateConnectionV2,
    ]

    /// The spec name (`"LE Set Scan Enable"`), or nil for an opcode Core 5.4 does not define.
    public var name: String? { HCICommandTable.entries[rawValue]?.name }

    /// The name without knowing the controller's maker: the spec name, the Android host's name for its vendor
    /// commands (`Android LE Advertising Filter`), or the raw form.
    public var description: String { name(manufacturer: nil) }

    /// The name as the controller's maker defines it: the spec name, a vendor table's name
    /// (`Broadcom Launch RAM`), or `Vendor Command (OCF 0x01F1)` when no table names the code.
    public func name(manufacturer: ControllerManufacturer?) -> String {
        if let name { return name }
        if isVendor {
            if let vendor = VendorSpecific.command(self, manufacturer: manufacturer) { return vendor.description }
            return "Vendor Command (OCF \(hex(ocf, width: 4)))"
        }
        return "HCICommand(\(hex(rawValue)))"
    }
}

/// Decodes a command's parameters into a typed value.
public typealias HCICommandParameterDecoder = @Sendable (inout ByteReader) throws(DecodeError) -> HCICommandParameters
/// Decodes a command's Command Complete return parameters into a typed value.
public typealias HCIReturnParameterDecoder = @Sendable (inout ByteReader) throws(DecodeError) -> HCIReturnParameters

/// One row of the HCI command table: name, parameter decoder (when typed), return-parameter decoder.
public struct HCICommandInfo: Sendable {
    public var name: String
    public var decode: HCICommandParameterDecoder?
    public var decodeReturn: HCIReturnParameterDecoder?
}

/// The HCI command table: every Core 5.4 opcode with its name, and decoders for the typed ones.
public enum HCICommandTable {
    public static let entries: [UInt16: HCICommandInfo] = {
        var table: [UInt16: HCICommandInfo] = [:]
        for (ogf, rows) in HCICommand.nameGroups {
            for (ocf, name) in rows {
                table[HCICommand(ogf: ogf, ocf: ocf).rawValue] = HCICommandInfo(name: name)
            }
        }
        for (opcode, decode) in decoders + HCIDeclaredSets.commandDecoders { table[opcode.rawValue]?.decode = decode }
        for (opcode, decode) in returnDecoders + HCIDeclaredSets.returnDecoders { table[opcode.rawValue]?.decodeReturn = decode }
        return table
    }()

    static func p<T: WireCodable>(_ wrap: @escaping @Sendable (T) -> HCICommandParameters) -> HCICommandParameterDecoder {
        { (r: inout ByteReader) throws(DecodeError) -> HCICommandParameters in wrap(try T(parsing: &r)) }
    }
    static func r<T: WireCodable>(_ wrap: @escaping @Sendable (T) -> HCIReturnParameters) -> HCIReturnParameterDecoder {
        { (r: inout ByteReader) throws(DecodeError) -> HCIReturnParameters in wrap(try T(parsing: &r)) }
    }
    static let empty: HCICommandParameterDecoder = { (r: inout ByteReader) throws(DecodeError) -> HCICommandParameters in .empty }

    static let decoders: [(HCICommand, HCICommandParameterDecoder)] = [
        (.reset, empty),
        (.readBufferSize, empty),
        (.leReadBufferSize, empty),
        (.leReadBufferSizeV2, empty),
        (.leCreateConnectionCancel, empty),
        (.disconnect, p(HCICommandParameters.disconnect)),
        (.readRemoteVersionInformation, p(HCICommandParameters.readRemoteVersionInformation)),
        (.leReadRemoteFeatures, p(HCICommandParameters.leReadRemoteFeatures)),
        (.leSetExtendedScanParameters, p(HCICommandParameters.leSetExtendedScanParameters)),
        (.leSetExtendedAdvertisingEnable, p(HCICommandParameters.leSetExtendedAdvertisingEnable)),
        (.leCreateConnection, p(HCICommandParameters.leCreateConnection)),
        (.leExtendedCreateConnection, p(HCICommandParameters.leExtendedCreateConnection)),
        (.leExtendedCreateConnectionV2, p(HCICommandParameters.leExtendedCreateConnectionV2)),
        (.leConnectionUpdate, p(HCICommandParameters.leConnectionUpdate)),
        (.leRemoteConnectionParameterRequestReply, p(HCICommandParameters.leRemoteConnectionParameterRequestReply)),
        (
            .leRemoteConnectionParameterRequestNegativeReply,
            p(HCICommandParameters.leRemoteConnectionParameterRequestNegativeReply)
        ),
    ]

    static let returnDecoders: [(HCICommand, HCIReturnParameterDecoder)] = [
        (.readBufferSize, r(HCIReturnParameters.readBufferSize)),
        (.leReadBufferSize, r(HCIReturnParameters.leReadBufferSize)),
        (.leReadBufferSizeV2, r(HCIReturnParameters.leReadBufferSizeV2)),
        (.leSetDataLength, r(HCIReturnParameters.statusAndHandle)),
        (.leRemoteConnectionParameterRequestReply, r(HCIReturnParameters.statusAndHandle)),
        (.leRemoteConnectionParameterRequestNegativeReply, r(HCIReturnParameters.statusAndHandle)),
        (.leLongTermKeyRequestReply, r(HCIReturnParameters.statusAndHandle)),
        (.leLongTermKeyRequestNegativeReply, r(HCIReturnParameters.statusAndHandle)),
        (.readLocalVersionInformation, r(HCIReturnParameters.readLocalVersionInformation)),
        // Status and the CIS/BIS handle (Core Spec Vol 4, Part E, 7.8.102, 7.8.109, 7.8.110).
        (HCICommand(ogf: 0x08, ocf: 0x0067), r(HCIReturnParameters.statusAndHandle)),
        (HCICommand(ogf: 0x08, ocf: 0x006E), r(HCIReturnParameters.statusAndHandle)),
        (HCICommand(ogf: 0x08, ocf: 0x006F), r(HCIReturnParameters.statusAndHandle)),
    ]
}
