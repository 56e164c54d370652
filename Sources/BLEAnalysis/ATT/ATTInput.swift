import BLECore
import BLEProtocols

/// What a link's ATT path (`ConnectionMachine+ATT.swift`) carries from one step to the next for one PDU.
extension ConnectionMachine {
    /// One ATT PDU and where it came from: the context ``processATT(_:)`` works in.
    struct ATTInput {
        var payload: UnsafeRawBufferPointer
        /// The frame the PDU (or the SDU carrying it) completed at.
        var frame: Int
        /// Bytes of the L2CAP PDU (or K-frame SDU) that carried it, for throughput.
        var l2capBytes: Int
        var direction: Direction
        var timestamp: Timestamp
        /// The CID in the L2CAP header (0x0004 on the LE fixed channel).
        var cid: UInt16 = 0x0004
        /// The bearer: the connection's fixed one unless the PDU came on a dynamic channel.
        var bearer: ATTBearerSlot = .fixed
    }

    /// Where the values of one ATT PDU come from: what ``applyATT(_:bearer:request:in:event:)`` and
    /// ``deliverValue(_:kind:handle:typeHint:in:event:)`` need besides the PDU and the value.
    struct ATTContext {
        /// The database that serves the PDU (``serverDatabase(_:_:)``).
        var db: GATTSide
        var direction: Direction
        var frame: Int
        var timestamp: Timestamp
        /// Bytes of the L2CAP PDU (or K-frame SDU) that carried it, for throughput; 0 for a value assembled from several PDUs.
        var l2capBytes: Int
    }
}
