import BLECore
import BLEProtocols

/// What the ATT router (`Analyzer+ATT.swift`) carries from one step to the next for one PDU.
extension Analyzer {
    /// One ATT PDU and where it came from: the context ``processATT(_:connection:state:)`` works in.
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
        var connection: Int
        /// A strong reference. The crash once blamed on `unowned(unsafe)` here (BackgroundTimelineJSONTests, debug
        /// builds only) came from no dying object: an incremental debug build had left that test's object file compiled
        /// against an older stored-property layout of `Analyzer`. Its store to `onEvent` landed on `observers`, and the
        /// observer loop in `decodeAndDeliver` crashed (reproduced on 2026-11-24 by a layout change; recompiling the test
        /// file alone cured it). After changing the stored properties of a public class, rebuild its dependents in full.
        var state: ConnectionState
        /// The database that serves the PDU (``serverDatabase(_:_:)``).
        var db: GATTSide
        var direction: Direction
        var frame: Int
        var timestamp: Timestamp
        /// Bytes of the L2CAP PDU (or K-frame SDU) that carried it, for throughput; 0 for a value assembled from several PDUs.
        var l2capBytes: Int
    }
}
