import BLEProtocols

/// What a CONNECT_IND (or AUX_CONNECT_REQ) cut short still says: its LLData's fields come in a fixed order (Core Spec
/// Vol 6, Part B, 2.3.3.1: InitA, AdvA, then AA, CRCInit, WinSize, WinOffset, Interval, Latency, Timeout, ChM, Hop and
/// SCA), so the addresses, the access address and the CRC initial value are there once 19 octets are, and the
/// connection's timing once 28 are. Such a request is malformed (a finding says so), but a peripheral may answer it:
/// SweynTooth's CC2540 capture sends Length 28 of 34 and the CC2540 answers on the access address it names. The
/// channel map and the hop increment are missing, so none is claimed.
struct TruncatedConnectInd {
    var initiator: LLDeviceAddress
    var advertiser: LLDeviceAddress
    var accessAddress: LLAccessAddress
    var crcInit: UInt32
    var parameters: LLLinkParameters

    /// InitA, AdvA, AA and CRCInit.
    static let minimumLength = 6 + 6 + 4 + 3
    /// Up to the supervision timeout.
    static let timingLength = minimumLength + 1 + 2 + 2 + 2 + 2

    /// Nil unless `payload` is a connect request shorter than the specification's 34 octets that holds at least
    /// ``minimumLength`` of them.
    init?(_ header: LLAdvertisingHeader, _ payload: UnsafeRawBufferPointer) {
        guard header.type == .connectInd, payload.count >= Self.minimumLength, payload.count < 34 else { return nil }
        func u16(_ at: Int) -> UInt16 { UInt16(payload[at]) | UInt16(payload[at + 1]) << 8 }
        initiator = LinkLayerTracker.address(payload, 0, header.txAddRandom)
        advertiser = LinkLayerTracker.address(payload, 6, header.rxAddRandom)
        accessAddress = LLAccessAddress(UInt32(u16(12)) | UInt32(u16(14)) << 16)
        crcInit = UInt32(payload[16]) | UInt32(payload[17]) << 8 | UInt32(payload[18]) << 16
        parameters =
            payload.count >= Self.timingLength
            ? LLLinkParameters(interval: u16(22), latency: u16(24), timeout: u16(26), channelMap: nil) : LLLinkParameters()
    }
}
