/// HCI's findings (packets, commands, the controller's reports) and the air link layer's (sniffer captures).
extension FindingCode {
    public static let hciLengthMismatch = FindingCode(
        "hci.length-mismatch", layer: .hci, severity: .error, title: "HCI packet length disagrees with its record",
        meaning: "An HCI packet's length field and the bytes its record holds differ, or its header cannot be read.")
    public static let hciTruncatedRecord = FindingCode(
        "hci.truncated-record", layer: .hci, severity: .info, title: "HCI record cut by the capturer",
        meaning: "The capturer kept fewer bytes of an HCI packet than were on the wire.")
    public static let hciCommandUnanswered = FindingCode(
        "hci.command-unanswered", layer: .hci, severity: .warning, title: "HCI command never answered",
        meaning: "A command got neither Command Complete nor Command Status before the capture ended or the controller reset.")
    public static let hciConnectionInferred = FindingCode(
        "hci.connection-inferred", layer: .hci, severity: .info, title: "Connection inferred from ACL traffic",
        meaning: "ACL traffic on a handle no Connection Complete opened: the capture started mid-connection, so the link was inferred.")
    public static let hciACLCutByCapturer = FindingCode(
        "hci.acl-cut-by-capturer", layer: .hci, severity: .info, title: "ACL packet cut by the capturer",
        meaning: "An ACL packet was cut by the capturer (Android's filtered snoop log): counted with its original length, not decoded.")
    public static let hciEventExtraBytes = FindingCode(
        "hci.event-extra-bytes", layer: .hci, severity: .info, title: "HCI event longer than the spec",
        meaning: "An event carried bytes after the parameters the spec defines: ignored, as controllers of newer versions may add some.")
    public static let hciRepeatedRecord = FindingCode(
        "hci.repeated-record", layer: .hci, severity: .info, title: "HCI record written twice",
        meaning:
            "A command, or a Command Complete or Status, with the bytes and the instant of the record before it: no host or controller repeats one within a microsecond, so the logger wrote it again; counted once."
    )
    public static let hciBQRMalformed = FindingCode(
        "hci.bqr-malformed", layer: .hci, severity: .warning, title: "Quality report cannot be decoded",
        meaning: "An Android Bluetooth Quality Report could not be decoded: its parameters are kept as bytes.")
    public static let hciBQRUnknownReport = FindingCode(
        "hci.bqr-unknown-report", layer: .hci, severity: .info, title: "Quality report of an unknown id",
        meaning: "An Android Bluetooth Quality Report with a report id blescope does not know: kept as bytes.")
    public static let hciBQRWithoutConnection = FindingCode(
        "hci.bqr-without-connection", layer: .hci, severity: .info, title: "Quality reports on no open connection",
        meaning: "Quality reports named a handle no open connection has: kept in the timeline, not taken as connections.")
    public static let decodeMalformed = FindingCode(
        "decode.malformed", layer: .hci, severity: .warning, title: "Malformed packet",
        meaning: "A command, event or PDU of a known type could not be read: kept as bytes, decoding goes on at the next frame.")
    public static let decodeHealth = FindingCode(
        "decode.health", layer: .hci, severity: .warning, title: "Many packets not decoded",
        meaning: "A large share of a protocol's packets could not be decoded: the results built on them are partial.")
    public static let decodeFixedChannel = FindingCode(
        "decode.fixed-channel", layer: .l2cap, severity: .info, title: "Fixed channel not decoded",
        meaning:
            "Traffic on an L2CAP fixed channel in the range the Core reserves, which a platform uses for its own protocol (Apple's 0x003A): counted, not decoded; a fixed channel needs no Connection Request, so nothing of it is missing."
    )
    public static let decodeVendorTrace = FindingCode(
        "decode.vendor-trace", layer: .hci, severity: .info, title: "Vendor trace traffic",
        meaning: "The log carries a controller vendor's trace traffic (debug channels on reserved handles): counted, not decoded as links.")

    public static let llMalformed = FindingCode(
        "ll.malformed", layer: .link, severity: .warning, title: "Link-layer packet cannot be read",
        meaning: "A link-layer packet whose CRC passed could not be read.")
    public static let llControlMalformed = FindingCode(
        "ll.control-malformed", layer: .link, severity: .warning, title: "LL control PDU cannot be read",
        meaning: "An LL control PDU's parameters could not be read.")
    public static let llReservedLLID = FindingCode(
        "ll.reserved-llid", layer: .link, severity: .warning, title: "Data PDU with reserved LLID",
        meaning: "A data PDU with the reserved LLID 00: ignored.")
    public static let llUnsupportedLinkType = FindingCode(
        "ll.unsupported-link-type", layer: .link, severity: .warning, title: "Link type not decoded",
        meaning: "The capture's link type is not one the link-layer tracker decodes.")
    public static let llEncryptedNoKey = FindingCode(
        "ll.encrypted-no-key", layer: .link, severity: .warning, title: "Encrypted PDUs no key decrypts",
        meaning:
            "A link's encrypted PDUs could not be decrypted (no key, or the encryption's start was not captured): counted, kept out of the decode."
    )
    public static let llMICFailed = FindingCode(
        "ll.mic-failed", layer: .link, severity: .warning, title: "Encrypted PDUs failed their MIC",
        meaning: "Decrypted PDUs whose MIC did not check: a wrong key, or corrupt packets.")
    public static let llCRCErrors = FindingCode(
        "ll.crc-errors", layer: .link, severity: .warning, title: "Connection packets with bad CRC",
        meaning: "Many packets of a connection failed their CRC: the sniffer was far or missed the hopping.")
    public static let llNoEmptyPDUs = FindingCode(
        "ll.no-empty-pdus", layer: .link, severity: .info, title: "Sniffer kept only packets with payload",
        meaning:
            "An air capture's connection holds no empty PDU: the sniffer or a tool after it kept only packets with payload, so the packets between two in the file are missing. Acknowledgements, retransmissions and the link's silences cannot be judged; a packet repeated with the same sequence number is not taken for a retransmission."
    )
    public static let llAdvertisingCRC = FindingCode(
        "ll.advertising-crc", layer: .link, severity: .warning, title: "Advertising packets with bad CRC",
        meaning: "Advertising packets failed their CRC: the sniffer was far from the devices.")
    public static let llTerminateUnacknowledged = FindingCode(
        "ll.terminate-unacknowledged", layer: .link, severity: .info, title: "LL_TERMINATE_IND not acknowledged",
        meaning:
            "No packet of the other side acknowledged an LL_TERMINATE_IND: the link ended by its supervision timeout after it, or the sniffer missed the acknowledgement."
    )
    public static let llSnifferMissed = FindingCode(
        "ll.sniffer-missed", layer: .link, severity: .info, title: "Parts of a connection the sniffer did not capture",
        meaning:
            "Connection events the sniffer heard no packet of, packets the other side's acknowledgement shows were sent but the file does not hold, and packets heard with a bad CRC: what the link carried there is not in the capture, so an absence across them cannot be told."
    )
    public static let llUnansweredPDUs = FindingCode(
        "ll.unanswered-pdus", layer: .link, severity: .info, title: "Data PDUs on unannounced access addresses",
        meaning: "Data PDUs at access addresses no CONNECT_IND announced, never answered: not taken as connections.")
}

extension FindingVocabulary {
    static let hci: [FindingCode] = [
        .hciLengthMismatch, .hciTruncatedRecord, .hciCommandUnanswered, .hciConnectionInferred, .hciACLCutByCapturer,
        .hciEventExtraBytes, .hciRepeatedRecord, .hciBQRMalformed, .hciBQRUnknownReport, .hciBQRWithoutConnection, .decodeMalformed,
        .decodeHealth, .decodeFixedChannel, .decodeVendorTrace,
    ]
    static let linkLayer: [FindingCode] = [
        .llMalformed, .llControlMalformed, .llReservedLLID, .llUnsupportedLinkType, .llEncryptedNoKey, .llMICFailed,
        .llCRCErrors, .llAdvertisingCRC, .llTerminateUnacknowledged, .llUnansweredPDUs, .llNoEmptyPDUs, .llSnifferMissed,
    ]
}
