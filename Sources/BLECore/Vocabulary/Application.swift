/// What rides on the links: isochronous data, attribute values, chunked transfers, firmware updates, advertising;
/// and blescope's own bounds.
extension FindingCode {
    public static let isoUnexpectedContinuation = FindingCode(
        "iso.unexpected-continuation", layer: .audio, severity: .warning, title: "ISO fragment without a first",
        meaning: "An ISO data fragment arrived with no SDU started: dropped.")
    public static let isoIncompleteSDU = FindingCode(
        "iso.incomplete-sdu", layer: .audio, severity: .warning, title: "ISO SDU abandoned by a new one",
        meaning: "An ISO SDU was incomplete when a new one began: discarded.")
    public static let isoSDUTooLong = FindingCode(
        "iso.sdu-too-long", layer: .audio, severity: .warning, title: "ISO SDU longer than announced",
        meaning: "An ISO SDU carried more bytes than its ISO_SDU_Length: the extra is ignored.")
    public static let isoSDUShort = FindingCode(
        "iso.sdu-short", layer: .audio, severity: .info, title: "ISO SDU shorter than announced",
        meaning: "An ISO SDU ended with fewer bytes than its ISO_SDU_Length announced.")
    public static let isoCutByEnd = FindingCode(
        "iso.cut-by-end", layer: .audio, severity: .info, title: "ISO SDU cut by the end of the capture",
        meaning: "An ISO SDU was incomplete when the capture ended.")
    public static let isoCutByCapturer = FindingCode(
        "iso.cut-by-capturer", layer: .audio, severity: .info, title: "ISO data cut by the capturer",
        meaning: "HCI ISO data packets were cut by the capturer: not counted as SDUs.")

    public static let codecInvalid = FindingCode(
        "codec.invalid", layer: .application, severity: .warning, title: "Value fails its codec",
        meaning: "An attribute or channel value failed its codec's checks (checksum, length, constant): decoded anyway, marked invalid.")

    public static let transferTooLong = FindingCode(
        "transfer.too-long", layer: .application, severity: .warning, title: "Transfer message too long",
        meaning: "A chunked message grew past the size blescope keeps: the rest is not kept.")
    public static let transferIncomplete = FindingCode(
        "transfer.incomplete", layer: .application, severity: .warning, title: "Transfer message cut",
        meaning: "A chunked message was cut by the link's or the capture's end before its end marker.")
    public static let transferEmpty = FindingCode(
        "transfer.empty", layer: .application, severity: .warning, title: "Transfer end marker with no data",
        meaning: "An end-of-message marker came with no data before it.")
    public static let transferMissingChunks = FindingCode(
        "transfer.missing-chunks", layer: .application, severity: .warning, title: "Transfer chunks missing",
        meaning: "Numbered chunks of a transfer never arrived.")
    public static let transferDuplicateChunk = FindingCode(
        "transfer.duplicate-chunk", layer: .application, severity: .warning, title: "Transfer chunk received again",
        meaning: "A numbered chunk of a transfer arrived twice.")
    public static let transferIndexOutOfRange = FindingCode(
        "transfer.index-out-of-range", layer: .application, severity: .warning, title: "Transfer record beyond its count",
        meaning: "A record index beyond the count the transfer announced.")
    public static let transferInvalidRecord = FindingCode(
        "transfer.invalid-record", layer: .application, severity: .warning, title: "Transfer record fails validation",
        meaning: "A transferred record failed its codec's validation.")
    public static let transferSuperseded = FindingCode(
        "transfer.superseded", layer: .application, severity: .warning, title: "Transfer superseded",
        meaning: "A new count arrived before all the records announced by the previous one.")
    public static let transferSMPBadHeader = FindingCode(
        "transfer.smp-bad-header", layer: .application, severity: .warning, title: "Not an SMP (MCUmgr) message start",
        meaning: "A write to the MCUmgr characteristic does not start with a valid SMP header.")

    public static let otaCRCMismatch = FindingCode(
        "ota.crc-mismatch", layer: .application, severity: .error, title: "Update CRC differs",
        meaning: "The device's CRC of the image it received differs from the bytes sent.")
    public static let otaOffsetMismatch = FindingCode(
        "ota.offset-mismatch", layer: .application, severity: .error, title: "Update offset differs",
        meaning: "The device reports another number of bytes received than were sent.")
    public static let otaError = FindingCode(
        "ota.error", layer: .application, severity: .error, title: "Update protocol error",
        meaning: "The update protocol reported an error, or the update broke a rule of its protocol.")
    public static let otaNote = FindingCode(
        "ota.note", layer: .application, severity: .warning, title: "Update note",
        meaning: "Something about an update worth knowing (a retry, a step of its protocol).")
    public static let otaIncomplete = FindingCode(
        "ota.incomplete", layer: .application, severity: .warning, title: "Update cut",
        meaning: "An update was cut by the link's or the capture's end before it finished.")
    public static let otaMissingPackets = FindingCode(
        "ota.missing-packets", layer: .application, severity: .warning, title: "Update packets never sent",
        meaning: "Numbered image packets of an update were never sent.")

    public static let advertsTooManyDevices = FindingCode(
        "adverts.too-many-devices", layer: .advertising, severity: .warning, title: "Too many advertisers",
        meaning: "More advertising devices than blescope tracks: later ones are counted, not tracked.")
    public static let advertsMalformedData = FindingCode(
        "adverts.malformed-data", layer: .advertising, severity: .info, title: "Malformed advertising data",
        meaning: "An advertising payload whose AD structures do not parse.")
    public static let advertsTruncatedReport = FindingCode(
        "adverts.truncated-report", layer: .advertising, severity: .warning, title: "Advertising report cut",
        meaning: "An advertising report was cut by the capturer: not decoded.")

    public static let limitHeldBytes = FindingCode(
        "limit.held-bytes", layer: .limits, severity: .warning, title: "Unfinished work over its budget",
        meaning: "Unfinished PDUs, SDUs, long reads and prepared writes held more bytes than the budget: the partial ones were dropped.")
    public static let limitConnections = FindingCode(
        "limit.connections", layer: .limits, severity: .warning, title: "Too many connections open",
        meaning: "More connections open at once than blescope tracks: further handles are not tracked.")
    public static let limitConnectionsTotal = FindingCode(
        "limit.connections-total", layer: .limits, severity: .warning, title: "Too many connections in the capture",
        meaning: "More connections in the capture than blescope keeps: later ones are counted, not decoded.")
    public static let limitCreditChannels = FindingCode(
        "limit.credit-channels", layer: .limits, severity: .warning, title: "Too many credit-based channels",
        meaning: "More LE credit-based channels open at once than blescope reassembles.")
    public static let limitPendingCommands = FindingCode(
        "limit.pending-commands", layer: .limits, severity: .warning, title: "Too many commands pending",
        meaning: "More HCI commands waiting for an answer at once than blescope pairs.")
    public static let limitQualityReports = FindingCode(
        "limit.quality-reports", layer: .limits, severity: .warning, title: "Too many quality reports",
        meaning: "More quality reports on one connection than blescope keeps: later ones are in the timeline only.")
    public static let limitFindings = FindingCode(
        "limit.findings", layer: .limits, severity: .info, title: "Findings not listed",
        meaning: "More findings of one code than are listed: the rest are counted, with the first frame.")
}

extension FindingVocabulary {
    static let audio: [FindingCode] = [
        .isoUnexpectedContinuation, .isoIncompleteSDU, .isoSDUTooLong, .isoSDUShort, .isoCutByEnd, .isoCutByCapturer,
    ]
    static let application: [FindingCode] = [
        .codecInvalid, .transferTooLong, .transferIncomplete, .transferEmpty, .transferMissingChunks,
        .transferDuplicateChunk, .transferIndexOutOfRange, .transferInvalidRecord, .transferSuperseded,
        .transferSMPBadHeader, .otaCRCMismatch, .otaOffsetMismatch, .otaError, .otaNote, .otaIncomplete,
        .otaMissingPackets, .advertsTooManyDevices, .advertsMalformedData, .advertsTruncatedReport,
    ]
    static let limits: [FindingCode] = [
        .limitHeldBytes, .limitConnections, .limitConnectionsTotal, .limitCreditChannels, .limitPendingCommands,
        .limitQualityReports, .limitFindings,
    ]
}
