import BLEProtocols

/// One ATT bearer of a connection as the capture showed it: the LE fixed channel, or a dynamic channel
/// its signalling opened to PSM 0x001F (BR/EDR) or 0x0027 (EATT) (Core Spec Vol 3, Part F, 3.2.11; Part G, 5.2–5.3).
public struct ATTBearerSummary: Hashable, Sendable {
    public var kind: ATTBearerKind
    /// The CID on PDUs sent `tx` (host → controller, or central → peripheral on air) and `rx`; 0x0004 both ways
    /// on the fixed channel. On a dynamic channel each is the receiving side's endpoint.
    public var txCID: UInt16
    public var rxCID: UInt16
    /// ATT_MTU: Exchange MTU on the fixed channel (23 until one); on a dynamic channel the smaller of the two
    /// L2CAP MTUs (Part G, 5.3.1 for EATT; Part F, 3.2.8), nil while neither side said one.
    public var mtu: Int?
    /// The frame of the response that opened the channel (nil for the fixed channel).
    public var openFrame: Int?
}

extension Connection {
    /// The fixed bearer (LE connections only: BR/EDR has no ATT fixed channel), then every dynamic ATT bearer in the
    /// order its channel opened (closed ones included).
    public var attBearers: [ATTBearerSummary] {
        var list = isLE ? [ATTBearerSummary(kind: .leFixed, txCID: 0x0004, rxCID: 0x0004, mtu: currentMTU, openFrame: nil)] : []
        for c in channels {
            let kind: ATTBearerKind? =
                switch (c.psm, c.mode) {
                case (.att, .basic): .bredr
                case (.eatt, .enhancedCredit): .eatt
                default: nil
                }
            guard let kind else { continue }
            list.append(
                ATTBearerSummary(
                    kind: kind, txCID: c.cid(sentIn: .tx), rxCID: c.cid(sentIn: .rx), mtu: c.commonMTU,
                    openFrame: c.openFrame))
        }
        return list
    }
}
