/// The capture file's and the capturer's findings: what was read, cut, dropped or out of order.
extension FindingCode {
    public static let invalidSize = FindingCode(
        "invalid-size", layer: .capture, severity: .warning, title: "Structure of the wrong size",
        meaning: "A structure had a size other than the one its format fixes; it was not decoded.")
    public static let decodeError = FindingCode(
        "decode-error", layer: .capture, severity: .warning, title: "Structure cannot be decoded",
        meaning: "Bytes that should hold a structure could not be read as one; they are kept as bytes.")
    public static let captureTruncatedFile = FindingCode(
        "capture.truncated-file", layer: .capture, severity: .warning, title: "File ends inside a record",
        meaning: "The file stops in the middle of a record (the capture was copied before it was closed): everything before is read.")
    public static let captureInvalidRecordLength = FindingCode(
        "capture.invalid-record-length", layer: .capture, severity: .warning, title: "Record length impossible",
        meaning: "A record's header gives a length the format cannot hold: reading stopped there, as nothing after it can be framed.")
    public static let captureTruncatedRecords = FindingCode(
        "capture.truncated-records", layer: .capture, severity: .info, title: "Records cut by the capturer",
        meaning: "The capturer kept fewer bytes of some records than were on the wire (snap length, Android's filtered log).")
    public static let captureTimestampOutOfRange = FindingCode(
        "capture.timestamp-out-of-range", layer: .capture, severity: .warning, title: "Sub-second field out of range",
        meaning: "Records whose microsecond or nanosecond field is one second or more: read as the format defines it.")
    public static let captureNonHCIRecords = FindingCode(
        "capture.non-hci-records", layer: .capture, severity: .warning, title: "Records that are not HCI",
        meaning: "Records whose H4 packet indicator is no HCI packet type: counted, not decoded.")
    public static let captureReadError = FindingCode(
        "capture.read-error", layer: .capture, severity: .error, title: "File cannot be read",
        meaning: "Reading the file failed (I/O, decompression, a broken container): what was read before is analysed.")
    public static let captureSnifferClockWrap = FindingCode(
        "capture.sniffer-clock-wrap", layer: .capture, severity: .info, title: "Records put back on the sniffer's clock",
        meaning:
            "The host software that wrote an air capture dated records whole wraps of the sniffer's counter away from the sniffer's own clock in their pseudo-header (nRF Sniffer: 2^32 µs; Ubertooth: 2^32 × 100 ns): no gap and no step back, its error. blescope uses the sniffer's clock from there on, so its times differ from tshark's."
    )
    public static let captureMillisecondClock = FindingCode(
        "capture.millisecond-clock", layer: .capture, severity: .info, title: "Record times read as milliseconds",
        meaning:
            "A PacketLogger file's seconds field counts milliseconds (every microseconds field 0, HCI commands answered units later where round trips take milliseconds; BTstack's Windows port, 2022-04 to 2023-09): blescope reads it so, from frame 1's time, so its durations are 1/1000 of tshark's and the date is not known."
    )
    public static let captureDamagedBlock = FindingCode(
        "capture.damaged-block", layer: .capture, severity: .warning, title: "pcapng block damaged",
        meaning:
            "A pcapng block whose lengths disagree or whose packet does not hold together: skipped, and reading resumed at the next block that checks out."
    )
    public static let captureNote = FindingCode(
        "capture.note", layer: .capture, severity: .info, title: "Note about the file",
        meaning: "Something about the file worth knowing that is not an error.")

    // The completeness items (`info`'s completeness section): what the capture lacks, as a whole.
    public static let encryptedNoKey = FindingCode(
        "encrypted-no-key", layer: .capture, severity: .warning, title: "Encrypted link, no key",
        meaning: "An air capture's link was encrypted and no key decrypted it: what it carried cannot be read.")
    public static let fileCut = FindingCode(
        "file-cut", layer: .capture, severity: .warning, title: "File cut",
        meaning: "The file ends inside a record: nothing after that point is in the log.")
    public static let fileCorrupt = FindingCode(
        "file-corrupt", layer: .capture, severity: .warning, title: "File unreadable past a point",
        meaning: "The file cannot be read past a point: nothing after it is analysed.")
    public static let aclPayloadCut = FindingCode(
        "acl-payload-cut", layer: .capture, severity: .warning, title: "ACL payloads cut by the capturer",
        meaning:
            "The capturer kept only the first bytes of ACL packets (Android's filtered snoop log, btsnooz): values and long PDUs are not seen whole."
    )
    public static let truncatedRecords = FindingCode(
        "truncated-records", layer: .capture, severity: .warning, title: "Records truncated",
        meaning: "Records other than ACL were truncated by the capturer.")
    public static let drops = FindingCode(
        "drops", layer: .capture, severity: .warning, title: "Records dropped",
        meaning: "The capturer says it dropped records: what they held is unknown.")
    public static let timeBackwards = FindingCode(
        "time-backwards", layer: .capture, severity: .warning, title: "Time goes backwards",
        meaning:
            "A record's time is earlier than the one before: under 10 ms it is clock jitter and timing holds; more, and times around it cannot be compared."
    )
    public static let damagedRecords = FindingCode(
        "damaged-records", layer: .capture, severity: .warning, title: "Damaged records",
        meaning:
            "HCI records shorter than their own header says, where the capturer cut nothing (a logger's uninitialised buffer, a writer's bug): what they should have carried is not in the log."
    )
    public static let noTiming = FindingCode(
        "no-timing", layer: .capture, severity: .info, title: "No timing in the log",
        meaning:
            "Every record carries the same time stamp: the log keeps the order of events but no durations, timeouts, gaps or rates can be told from it."
    )
    public static let onlySentPackets = FindingCode(
        "only-sent-packets", layer: .capture, severity: .warning, title: "Only sent packets in the log",
        meaning:
            "The HCI log holds packets this side sent and nothing else: no received packet, no event. Whether the peer answered cannot be told from it."
    )
    public static let timeGap = FindingCode(
        "time-gap", layer: .capture, severity: .info, title: "Long gap in the log",
        meaning: "Nothing was logged for a long time: a pause of the capture, or a quiet radio.")
    public static let controllerReset = FindingCode(
        "controller-reset", layer: .capture, severity: .warning, title: "Controller reset",
        meaning: "The host reset the controller: every link and state before it is gone.")
    public static let hardwareError = FindingCode(
        "hardware-error", layer: .capture, severity: .warning, title: "Controller hardware error",
        meaning: "The controller reported a hardware error: what it did around it is uncertain.")
    public static let startedBeforeCapture = FindingCode(
        "started-before-capture", layer: .capture, severity: .info, title: "Connection started before the capture",
        meaning: "A connection was up when the capture began: its setup is not in the file.")
    public static let snifferClockWrap = FindingCode(
        "sniffer-clock-wrap", layer: .capture, severity: .info, title: "Times on the sniffer's clock",
        meaning:
            "Records the file dated whole wraps of the sniffer's counter away from the sniffer's own clock are put back on it: nothing is missing, but blescope's times there differ from the file's and tshark's."
    )
    public static let millisecondClock = FindingCode(
        "millisecond-clock", layer: .capture, severity: .info, title: "Times read as milliseconds",
        meaning:
            "The log's seconds field counts milliseconds: its times are inferred (durations 1/1000 of the file's and tshark's), and its date is not known."
    )
    public static let linkBeforeLogEnded = FindingCode(
        "link-before-log-ended", layer: .capture, severity: .info, title: "A link from before the log ended",
        meaning:
            "A Disconnection Complete names a handle nothing else in the log names (a link from before the log, or one an HCI Reset dropped): its end is counted and nothing else is claimed of it."
    )
    public static let staleAfterReset = FindingCode(
        "stale-after-reset", layer: .capture, severity: .info, title: "A connection event from before an HCI Reset",
        meaning:
            "A Connection Complete came while the HCI Reset before it still waited for its completion, or an event for a link's facts or end (a Disconnection Complete, a Max Slots Change…) came within a second of the reset for a handle no link holds: the controller sent it before the reset, which ended that connection. No link is counted for it and nothing is claimed of it."
    )
    public static let openAtEnd = FindingCode(
        "open-at-end", layer: .capture, severity: .info, title: "Connection open at the end",
        meaning: "A connection was still open when the capture ended: its outcome is not in the file.")
}

extension FindingVocabulary {
    static let core: [FindingCode] = [.invalidSize, .decodeError]
    static let capture: [FindingCode] = [
        .captureTruncatedFile, .captureInvalidRecordLength, .captureTruncatedRecords, .captureTimestampOutOfRange,
        .captureNonHCIRecords, .captureReadError, .captureDamagedBlock, .captureSnifferClockWrap, .captureMillisecondClock,
        .captureNote, .encryptedNoKey, .fileCut, .fileCorrupt, .snifferClockWrap, .millisecondClock, .aclPayloadCut,
        .truncatedRecords, .drops, .timeBackwards, .timeGap, .damagedRecords, .noTiming, .onlySentPackets, .controllerReset, .hardwareError,
        .startedBeforeCapture, .linkBeforeLogEnded, .staleAfterReset, .openAtEnd,
    ]
}
