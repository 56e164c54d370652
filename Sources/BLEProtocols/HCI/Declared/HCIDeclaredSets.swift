import BLECore

/// Every declared HCI parameter set: one line each. The command, return-parameter and event tables take their rows for
/// these from here (name, size rule, decoder), so a declared set needs nothing else to be decoded, encoded, named and
/// summarised everywhere.
public enum HCIDeclaredSets {
    public static let all: [any HCIParameterSet.Type] = [
        // What opens, changes and closes a link (Core Spec Vol 4, Part E, 7.7.3–7.7.39, 7.7.65.1–12, 7.7.65.10 v2).
        ConnectionComplete.self, DisconnectionComplete.self, EncryptionChange.self, EncryptionChangeV2.self,
        EncryptionKeyRefreshComplete.self, ReadRemoteVersionInformationComplete.self, LEConnectionComplete.self,
        LEEnhancedConnectionComplete.self, LEEnhancedConnectionCompleteV2.self, LEConnectionUpdateComplete.self,
        LEReadRemoteFeaturesComplete.self, LELongTermKeyRequest.self, LERemoteConnectionParameterRequest.self,
        LEDataLengthChange.self, LEPHYUpdateComplete.self, LEChannelSelectionAlgorithm.self,
        // BR/EDR authentication, pairing, role and mode (7.7.6, 7.7.18, 7.7.20, 7.7.22–24, 7.7.40–41, 7.7.45).
        AuthenticationComplete.self, RoleChange.self, ModeChange.self, PINCodeRequest.self, LinkKeyRequest.self,
        LinkKeyNotification.self, IOCapabilityRequest.self, IOCapabilityResponse.self, SimplePairingComplete.self,
        // Secure Simple Pairing's user steps and the key size in force (7.1.29, 7.5.7, 7.7.42–44, 7.7.48).
        IOCapabilityRequestReply.self, UserConfirmationRequest.self, UserPasskeyRequest.self, RemoteOOBDataRequest.self,
        UserPasskeyNotification.self, ReadEncryptionKeySize.self, ReadEncryptionKeySizeReturn.self,
        // This side's user's answers to the user steps (7.1.30–33).
        UserConfirmationRequestReply.self, UserConfirmationRequestNegativeReply.self, UserPasskeyRequestReply.self,
        UserPasskeyRequestNegativeReply.self,
        // BR/EDR link facts: the remote's name, features and version, mode, subrating, supervision timeout, packet types
        // (7.7.4, 7.7.7, 7.7.11, 7.7.27, 7.7.29, 7.7.34, 7.7.37, 7.7.46; 7.1.14, 7.1.19, 7.2.2–3, 7.2.8, 7.2.14, 7.3.42).
        ConnectionRequest.self, RemoteNameRequestComplete.self, ReadRemoteSupportedFeaturesComplete.self, MaxSlotsChange.self,
        ConnectionPacketTypeChanged.self, ReadRemoteExtendedFeaturesComplete.self, SniffSubrating.self,
        LinkSupervisionTimeoutChanged.self, SniffMode.self, ExitSniffMode.self, SwitchRole.self, SniffSubratingCommand.self,
        WriteLinkSupervisionTimeout.self, ChangeConnectionPacketType.self, RemoteNameRequest.self, AcceptConnectionRequest.self,
        // SCO and eSCO (7.1.26–28, 7.1.45–46, 7.7.35–36).
        SetupSynchronousConnection.self, AcceptSynchronousConnectionRequest.self, RejectSynchronousConnectionRequest.self,
        EnhancedSetupSynchronousConnection.self, EnhancedAcceptSynchronousConnectionRequest.self,
        SynchronousConnectionComplete.self, SynchronousConnectionChanged.self,
        // BR/EDR paging and authentication commands and the LE key reply, their keys never printed (7.1.5, 7.1.10–11,
        // 7.1.15–16, 7.8.25).
        CreateConnection.self, LinkKeyRequestReply.self, LinkKeyRequestNegativeReply.self, AuthenticationRequested.self,
        SetConnectionEncryption.self, LELongTermKeyRequestReply.self,
        // Commands that scan, advertise and set a link's data length, PHY and encryption (7.8.5–7.8.11, 7.8.24,
        // 7.8.33, 7.8.49, 7.8.65).
        LESetScanParameters.self, LESetScanEnable.self, LESetExtendedScanEnable.self, LESetAdvertisingParameters.self,
        LESetAdvertisingEnable.self, LESetDataLength.self, LESetPHY.self, LEEnableEncryption.self,
        // Advertising sets: their address, periodic advertising, removal and end; a name request's cancel (7.8.52,
        // 7.8.59, 7.8.63, 7.7.65.18, 7.1.20); BR/EDR inquiry and page scan (7.3.18).
        LESetAdvertisingSetRandomAddress.self, LERemoveAdvertisingSet.self, LESetPeriodicAdvertisingEnable.self,
        LEAdvertisingSetTerminated.self, RemoteNameRequestCancel.self, WriteScanEnable.self,
        // Connected isochronous groups and streams (Core Spec Vol 4, Part E, 7.8.96–7.8.102, 7.8.109–7.8.110, 7.8.117).
        LEReadISOTXSync.self, LEReadISOTXSyncReturn.self, LESetCIGParameters.self, LESetCIGParametersReturn.self,
        LESetCIGParametersTest.self, LESetCIGParametersTestReturn.self, LECreateCIS.self, LERemoveCIG.self,
        LERemoveCIGReturn.self, LEAcceptCISRequest.self, LERejectCISRequest.self, LESetupISODataPath.self,
        LERemoveISODataPath.self, LEReadISOLinkQuality.self, LEReadISOLinkQualityReturn.self,
        // Broadcast isochronous groups (7.8.103–7.8.107).
        LECreateBIG.self, LECreateBIGTest.self, LETerminateBIG.self, LEBIGCreateSync.self, LEBIGTerminateSync.self,
        LEBIGTerminateSyncReturn.self,
        // Their events (7.7.65.14, 16, 25–30, 34).
        LECISEstablished.self, LECISEstablishedV2.self, LECISRequest.self, LECreateBIGComplete.self,
        LETerminateBIGComplete.self, LEBIGSyncEstablished.self, LEBIGSyncLost.self, LEBIGInfoAdvertisingReport.self,
        LEPeriodicAdvertisingSyncEstablished.self, LEPeriodicAdvertisingSyncLost.self,
    ]

    /// LE Meta subevent rows (``HCIEventTable/subevents`` merges them).
    static let subeventRows: [UInt8: HCIEventEntry] = {
        var rows: [UInt8: HCIEventEntry] = [:]
        for type in all { if case .leSubevent(let s) = type.carrier { rows[s.rawValue] = eventRow(type) } }
        return rows
    }()

    /// Event rows by code.
    static let eventRows: [UInt8: HCIEventEntry] = {
        var rows: [UInt8: HCIEventEntry] = [:]
        for type in all { if case .event(let c) = type.carrier { rows[c.rawValue] = eventRow(type) } }
        return rows
    }()

    /// (opcode, decoder) for command parameters (``HCICommandTable`` adds them to its decoders).
    static let commandDecoders: [(HCICommand, HCICommandParameterDecoder)] = all.compactMap { type in
        if case .command(let c) = type.carrier { (c, commandDecoder(type)) } else { nil }
    }

    /// (opcode, decoder) for Command Complete return parameters.
    static let returnDecoders: [(HCICommand, HCIReturnParameterDecoder)] = all.compactMap { type in
        if case .returnParameters(let c) = type.carrier { (c, returnDecoder(type)) } else { nil }
    }

    static func eventRow<T: HCIParameterSet>(_ type: T.Type) -> HCIEventEntry {
        HCIEventEntry(T.name, size: T.size) { (r: inout ByteReader) throws(DecodeError) -> HCIEventParameters in
            .declared(HCIDeclared(try T(parsing: &r)))
        }
    }

    static func commandDecoder<T: HCIParameterSet>(_ type: T.Type) -> HCICommandParameterDecoder {
        { (r: inout ByteReader) throws(DecodeError) -> HCICommandParameters in .declared(HCIDeclared(try T(parsing: &r))) }
    }

    static func returnDecoder<T: HCIParameterSet>(_ type: T.Type) -> HCIReturnParameterDecoder {
        { (r: inout ByteReader) throws(DecodeError) -> HCIReturnParameters in .declared(HCIDeclared(try T(parsing: &r))) }
    }
}

/// A decoded declared parameter set, as the event, command and return-parameter enums carry it: the value, compared
/// and hashed by its type and wire form.
public struct HCIDeclared: Hashable, Sendable, CustomStringConvertible {
    public let value: any HCIParameterSet
    public init(_ value: any HCIParameterSet) { self.value = value }

    /// The value as `T`, when it is one: `decoded.declared?.as(LECISEstablished.self)`.
    public func `as`<T: HCIParameterSet>(_ type: T.Type) -> T? { value as? T }

    public var carrier: HCICarrier { type(of: value).carrier }
    public var name: String { type(of: value).name }
    public var summary: String { value.summary }
    public var description: String { value.description }
    public var connectionHandle: UInt16? { value.connectionHandle }
    public var status: HCIStatus? { value.status }

    public static func == (a: HCIDeclared, b: HCIDeclared) -> Bool {
        ObjectIdentifier(type(of: a.value)) == ObjectIdentifier(type(of: b.value)) && a.value.bytes == b.value.bytes
    }
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(type(of: value)))
        hasher.combine(value.bytes)
    }
}
