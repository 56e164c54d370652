/// A link-layer control procedure (Core Spec 5.4, Vol 6, Part B, 5.1): the PDUs that open it, whether every link
/// layer must support it, and what the link goes without when the peer refuses it.
///
/// A procedure is optional when the FeatureSet has a bit for it (Vol 6, Part B, 4.6): a peer without the feature
/// answers its PDU with LL_UNKNOWN_RSP (Vol 6, Part B, 2.4.2), and the procedure ends there. The mandatory ones
/// (connection update, channel map update, feature and version exchange, termination) have no bit: every link layer
/// supports them.
public struct LLProcedure: Hashable, Sendable {
    /// The procedure's name in the spec ("Channel Classification Enable").
    public var name: String
    /// Its section of Core 5.4, Vol 6, Part B ("5.1.21").
    public var section: String
    /// The FeatureSet bit that says a link layer supports it (Vol 6, Part B, 4.6); nil when every link layer must.
    public var featureBit: Int?
    /// The PDUs that open it (what a peer that does not support it names in LL_UNKNOWN_RSP or LL_REJECT_EXT_IND).
    public var opens: [LLControlOpcode]
    /// What the link goes without when the peer refuses it, nil when nothing: the procedure only tunes what the
    /// initiator can do on its own (it classifies channels itself, keeps the worst-case clock accuracy…).
    public var lost: String?

    public var isOptional: Bool { featureBit != nil }

    init(_ name: String, _ section: String, bit: Int?, opens: [LLControlOpcode], lost: String?) {
        self.name = name
        self.section = section
        self.featureBit = bit
        self.opens = opens
        self.lost = lost
    }
}

/// The LL control procedures of Core 5.4, Vol 6, Part B, 5.1, with their FeatureSet bits (4.6).
public enum LLProcedureTable {
    public static let procedures: [LLProcedure] = [
        .init("Connection Update", "5.1.1", bit: nil, opens: [.connectionUpdateInd], lost: "the new connection parameters"),
        .init("Channel Map Update", "5.1.2", bit: nil, opens: [.channelMapInd], lost: "the new channel map"),
        .init("Encryption Start", "5.1.3", bit: 0, opens: [.encReq, .pauseEncReq], lost: "encryption: the link stays in the clear"),
        .init("Feature Exchange", "5.1.4", bit: nil, opens: [.featureReq], lost: "the peer's features"),
        .init("Peripheral-initiated Feature Exchange", "5.1.4", bit: 3, opens: [.peripheralFeatureReq], lost: "the central's features"),
        .init("Version Exchange", "5.1.5", bit: nil, opens: [.versionInd], lost: "the peer's version"),
        .init("ACL Termination", "5.1.6", bit: nil, opens: [.terminateInd], lost: "an orderly termination"),
        .init(
            "Connection Parameters Request", "5.1.7", bit: 1, opens: [.connectionParamReq],
            lost: "the parameters asked for, until the L2CAP parameter update carries them"),
        .init("LE Ping", "5.1.8", bit: 4, opens: [.pingReq], lost: nil),
        .init("Data Length Update", "5.1.9", bit: 5, opens: [.lengthReq], lost: "longer PDUs: the link keeps 27-byte payloads"),
        .init("PHY Update", "5.1.10", bit: 8, opens: [.phyReq], lost: "the faster or longer-range PHY: the link stays on 1M"),
        .init("Minimum Number Of Used Channels", "5.1.11", bit: 16, opens: [.minUsedChannelsInd], lost: nil),
        .init("Constant Tone Extension Request", "5.1.12", bit: 17, opens: [.cteReq], lost: "the direction-finding tone"),
        .init(
            "Periodic Advertising Sync Transfer", "5.1.13", bit: 25, opens: [.periodicSyncInd],
            lost: "the sync transfer: the peer must scan for the train itself"),
        .init("Sleep Clock Accuracy Update", "5.1.14", bit: 26, opens: [.clockAccuracyReq], lost: nil),
        .init("Connected Isochronous Stream Creation", "5.1.15", bit: 28, opens: [.cisReq], lost: "the isochronous stream"),
        .init("Power Control Request", "5.1.17", bit: 33, opens: [.powerControlReq], lost: nil),
        .init("Power Change Indication", "5.1.18", bit: 34, opens: [.powerChangeInd], lost: nil),
        .init("Connection Subrate Update", "5.1.19", bit: 37, opens: [.subrateInd], lost: nil),
        .init("Connection Subrate Request", "5.1.20", bit: 37, opens: [.subrateReq], lost: nil),
        .init("Channel Classification Enable", "5.1.21", bit: 39, opens: [.channelReportingInd], lost: nil),
        .init("Channel Classification Reporting", "5.1.22", bit: 39, opens: [.channelStatusInd], lost: nil),
        .init(
            "Periodic Advertising with Responses Sync Transfer", "5.1.23", bit: 25, opens: [.periodicSyncWRInd],
            lost: "the sync transfer: the peer must scan for the train itself"),
    ]

    /// The procedure `opcode` opens, nil for a PDU that answers or closes one.
    public static func procedure(opening opcode: LLControlOpcode) -> LLProcedure? {
        procedures.first { $0.opens.contains(opcode) }
    }
}
