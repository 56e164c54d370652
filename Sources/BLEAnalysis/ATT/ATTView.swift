import BLECore
import BLEProtocols

/// One ATT PDU read once from the table: its opcode, its size and, for a PDU that carries one whole attribute value
/// (``ATTOpcode/valueLayout``: Write Request and Command, Signed Write Command, Handle Value Notification and
/// Indication), the handle and where the value lies. The statistics, the evidence, the timeline and the delivery of
/// values all read a PDU through this, never by its opcode byte.
struct ATTView {
    /// The PDU's bytes, opcode first (borrowed for the PDU's time on the analyzer's path).
    let payload: UnsafeRawBufferPointer
    let opcode: ATTOpcode
    /// The handle and the value's bytes of a value-carrying PDU long enough to hold its handle (nil otherwise, also for
    /// a PDU shorter than the table's minimum, which the typed decoder would refuse).
    let span: ATTValueSpan?
    /// The opcode is one whose PDU carries one whole value (the table has a layout for it), whether or not this PDU is
    /// long enough to hold it.
    let carriesValue: Bool

    /// nil for an empty PDU (no opcode).
    @inline(__always)
    init?(_ payload: UnsafeRawBufferPointer) {
        guard let first = payload.first else { return nil }
        self.payload = payload
        opcode = ATTOpcode(rawValue: first)
        let layout = opcode.valueLayout
        carriesValue = layout != nil
        span = layout?.value(in: payload)
    }

    /// Bytes, opcode included.
    var size: Int { payload.count }

    /// The one attribute handle the PDU names (``ATTOpcode/handleOffset``: reads, writes, prepared writes, notifications,
    /// indications, the handle an Error Response names), when the PDU is long enough to hold it.
    var handle: UInt16? {
        guard let at = opcode.handleOffset, payload.count >= at + 2 else { return nil }
        return UInt16(payload[at]) | UInt16(payload[at + 1]) << 8
    }

    /// The value's bytes (``span``), empty when the PDU carries none.
    var value: UnsafeRawBufferPointer {
        guard let span else { return UnsafeRawBufferPointer(start: nil, count: 0) }
        return UnsafeRawBufferPointer(rebasing: payload[span.range])
    }

    /// An Error Response's fields (Core Spec Vol 3, Part F, 3.4.1.1: the request's opcode, the handle, the error), when
    /// the PDU is one and long enough to hold them.
    var errorResponse: (request: ATTOpcode, handle: UInt16, error: ATTErrorCode)? {
        guard opcode == .errorResponse, payload.count >= 5 else { return nil }
        return (ATTOpcode(rawValue: payload[1]), UInt16(payload[2]) | UInt16(payload[3]) << 8, ATTErrorCode(payload[4]))
    }

    /// A notification or an indication.
    var isNotifiedValue: Bool { opcode == .handleValueNotification || opcode == .handleValueIndication }
    /// A Write Request or a Write Command.
    var isWrite: Bool { opcode == .writeRequest || opcode == .writeCommand }
}
