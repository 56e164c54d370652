/// L2CAP's findings (reassembly, credit-based channels) and ATT's.
extension FindingCode {
    public static let l2capUnexpectedContinuation = FindingCode(
        "l2cap.unexpected-continuation", layer: .l2cap, severity: .warning, title: "Continuation without a start",
        meaning: "An L2CAP continuation fragment arrived with no PDU started: dropped (its start was lost or not captured).")
    public static let l2capIncompleteSDU = FindingCode(
        "l2cap.incomplete-sdu", layer: .l2cap, severity: .warning, title: "PDU abandoned by a new start",
        meaning: "An L2CAP PDU was still incomplete when a new start fragment arrived: discarded.")
    public static let l2capFrameTooLong = FindingCode(
        "l2cap.frame-too-long", layer: .l2cap, severity: .warning, title: "Fragment longer than its PDU",
        meaning: "A fragment carried more bytes than its PDU's length field: the extra bytes are ignored.")
    public static let l2capCutByEnd = FindingCode(
        "l2cap.cut-by-end", layer: .l2cap, severity: .warning, title: "PDU cut by the end of the capture or link",
        meaning: "An L2CAP PDU was still incomplete when the capture or its link ended.")
    public static let l2capCutByCapturer = FindingCode(
        "l2cap.cut-by-capturer", layer: .l2cap, severity: .info, title: "PDU cut by the capturer",
        meaning: "An L2CAP PDU's bytes were cut by the capturer: not decoded.")
    public static let l2capNoCredit = FindingCode(
        "l2cap.no-credit", layer: .l2cap, severity: .warning, title: "K-frame without a credit",
        meaning: "A credit-based channel's K-frame was sent when the sender had no credit left (Core Spec Vol 3, Part A, 10.1).")
    public static let l2capShortKFrame = FindingCode(
        "l2cap.short-kframe", layer: .l2cap, severity: .warning, title: "First K-frame too short",
        meaning: "A credit-based channel's first K-frame of an SDU is too short to hold the SDU length.")
    public static let l2capSDUTooLong = FindingCode(
        "l2cap.sdu-too-long", layer: .l2cap, severity: .warning, title: "SDU longer than announced",
        meaning: "A credit-based SDU carried more bytes than its first K-frame announced.")
    public static let l2capKFrameOverMPS = FindingCode(
        "l2cap.kframe-over-mps", layer: .l2cap, severity: .warning, title: "K-frame over the channel's MPS",
        meaning: "A K-frame larger than the MPS the receiver announced.")
    public static let l2capSDUOverMTU = FindingCode(
        "l2cap.sdu-over-mtu", layer: .l2cap, severity: .warning, title: "SDU over the channel's MTU",
        meaning: "A credit-based SDU larger than the MTU the receiver announced.")

    public static let attEmpty = FindingCode(
        "att.empty", layer: .att, severity: .warning, title: "Empty ATT PDU",
        meaning: "An ATT bearer carried a PDU with no opcode.")
    public static let attRequestUnanswered = FindingCode(
        "att.request-unanswered", layer: .att, severity: .info, title: "ATT request never answered",
        meaning:
            "An ATT request got no response before the link or the capture ended (the peer's 30 s transaction timeout, Core Spec Vol 3, Part F, 3.3.3)."
    )
    public static let attResponseWithoutRequest = FindingCode(
        "att.response-without-request", layer: .att, severity: .info, title: "ATT response without a request",
        meaning: "An ATT response no request of the capture asked for (the capture started after the request, or the peer answered twice).")
    public static let attMTUExchangeOnBearer = FindingCode(
        "att.mtu-exchange-on-bearer", layer: .att, severity: .warning, title: "MTU exchange on an EATT bearer",
        meaning: "An Exchange MTU on an enhanced bearer, where the channel's own MTU rules (Core Spec Vol 3, Part F, 3.4.2).")
    public static let attPreparedWriteGap = FindingCode(
        "att.prepared-write-gap", layer: .att, severity: .warning, title: "Prepared writes not contiguous",
        meaning: "A queue of prepared writes left a gap or overlap in the value they write.")
    public static let attPDUExceedsMTU = FindingCode(
        "att.pdu-exceeds-mtu", layer: .att, severity: .warning, title: "ATT PDU over the ATT_MTU",
        meaning: "An ATT PDU larger than its bearer's ATT_MTU: the receiver may drop it.")
    public static let attResponseOnOtherBearer = FindingCode(
        "att.response-on-other-bearer", layer: .att, severity: .warning, title: "Response on another bearer",
        meaning: "An ATT response came on another bearer than its request's: a response answers only on its own bearer.")
}

extension FindingVocabulary {
    static let l2cap: [FindingCode] = [
        .l2capUnexpectedContinuation, .l2capIncompleteSDU, .l2capFrameTooLong, .l2capCutByEnd, .l2capCutByCapturer,
        .l2capNoCredit, .l2capShortKFrame, .l2capSDUTooLong, .l2capKFrameOverMPS, .l2capSDUOverMTU,
    ]
    static let att: [FindingCode] = [
        .attEmpty, .attRequestUnanswered, .attResponseWithoutRequest, .attMTUExchangeOnBearer, .attPreparedWriteGap,
        .attPDUExceedsMTU, .attResponseOnOtherBearer,
    ]
}
