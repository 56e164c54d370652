import BLECore
import BLEProtocols

/// Whether an ATT PDU fits the ATT_MTU of its bearer: no PDU may be longer (Core Spec Vol 3, Part F, 3.2.8, 5.2.1).
///
/// On the LE fixed bearer the MTU is the link's (``LinkState/mtu``). When the capture holds no Exchange MTU (the MTU is
/// only assumed, or inferred from an earlier PDU), a longer PDU proves the MTU is at least its size: the link is judged
/// against that from then on, said to be inferred, and nothing is wrong. A dynamic bearer is judged against its own MTU
/// (from the channel's configuration or credit-based connection), once known.
enum ATTMTUCheck {
    enum Verdict: Equatable {
        case fits
        /// Longer than the MTU the link only assumed or inferred: the link's MTU is at least the PDU's size.
        case provesLargerMTU
        /// Longer than the MTU in force: on a dynamic bearer of `bearer` kind, or on the link (nil).
        case exceeds(mtu: Int, bearer: ATTBearerKind?)
    }

    /// A PDU of `size` bytes on the LE fixed bearer of a link whose ATT_MTU is `mtu`.
    @inline(__always)
    static func judge(size: Int, link mtu: LinkFact<Int>) -> Verdict {
        guard let value = mtu.value, size > value else { return .fits }
        switch mtu.source {
        case .assumed, .inferred(.largestATTPDU): return .provesLargerMTU
        default: return .exceeds(mtu: value, bearer: nil)
        }
    }

    /// A PDU of `size` bytes on a dynamic bearer.
    static func judge(size: Int, bearer: ATTBearer) -> Verdict {
        guard let mtu = bearer.mtu, size > mtu else { return .fits }
        return .exceeds(mtu: mtu, bearer: bearer.kind)
    }
}

extension FindingKind {
    static func attPDUExceedsMTU(_ opcode: ATTOpcode, size: Int, mtu: Int, bearer: ATTBearerKind?) -> FindingKind {
        .init(
            .attPDUExceedsMTU,
            message: "ATT \(opcode) of \(size) bytes exceeds the \(bearer.map { "\($0) bearer's" } ?? "connection's") ATT_MTU \(mtu)")
    }
}
