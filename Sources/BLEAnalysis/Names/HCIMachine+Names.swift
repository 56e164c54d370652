import BLECapture
import BLECore
import BLEProtocols

/// Extended Inquiry Result (Core Spec Vol 4, Part E, 7.7.38): one response, the device's EIR data beside its address.
///
/// ```
/// | Num_Responses (1) = 1 | BD_ADDR (6) | Page_Scan_Repetition_Mode (1) | Reserved (1) | Class_Of_Device (3) |
/// | Clock_Offset (2) | RSSI (1) | Extended_Inquiry_Response (240) |
/// ```
/// Fails when the event is shorter than its address and fixed fields; an EIR shorter than 240 bytes is read as it is.
struct ExtendedInquiryResult {
    static let code = HCIEventCode.extendedInquiryResult
    var address: BDAddress
    var data: [UInt8]

    init(parsing input: inout ByteReader) throws(DecodeError) {
        _ = try input.readUInt8()
        address = try BDAddress(parsing: &input)
        try input.skip(8)
        data = input.readRemaining()
    }
}

/// The names HCI events give the peers (``PeerNames``): Remote Name Request Complete, the EIR of an Extended Inquiry
/// Result, the Local Name of an LE (extended) advertising report.
extension HCIMachine {
    /// Remote Name Request Complete with success (7.7.7): the name the peer's LMP gave, whole unless it ends mid-character.
    func named(_ n: RemoteNameRequestComplete, _ record: CaptureRecord) {
        let address = n.address.value
        guard sink.names.wants(address, whole: true),
            let name = PeerName(bytes: n.remoteName.raw, source: .remoteNameRequest, frame: record.frame)
        else { return }
        sink.names.observe(name, address: address)
    }

    /// An Extended Inquiry Result's Local Name for the device that answered the inquiry.
    func inquiryAnswered(_ parameters: [UInt8], _ record: CaptureRecord) {
        guard
            let r = try? withByteReader(
                parameters,
                { (input: inout ByteReader) throws(DecodeError) in
                    try ExtendedInquiryResult(parsing: &input)
                })
        else { return }
        sink.names.observe(advertisingData: r.data, address: r.address.value, source: .extendedInquiryResult, frame: record.frame)
    }

    /// The Class of Device of each device an inquiry answered, to its link (``classOfDevice(_:address:_:)``): Inquiry
    /// Result (7.7.2), with RSSI (7.7.33), Extended (7.7.38). Read response by response, 14 octets each (BD_ADDR,
    /// Page_Scan_Repetition_Mode, Reserved (2 octets in 7.7.2), Class_Of_Device, …), as controllers send them and
    /// Wireshark and BlueZ read them.
    func inquiryClasses(_ code: HCIEventCode, _ p: [UInt8], _ record: CaptureRecord) {
        guard let n = p.first.map(Int.init) else { return }
        let size = code == .extendedInquiryResult ? p.count - 1 : 14, at = code == .inquiryResult ? 9 : 8
        for i in 0..<n where 1 + i * size + at + 3 <= p.count {
            let r = 1 + i * size
            let address = (0..<6).reduce(UInt64(0)) { $0 | UInt64(p[r + $1]) << (8 * $1) }
            let cod = UInt32(p[r + at]) | UInt32(p[r + at + 1]) << 8 | UInt32(p[r + at + 2]) << 16
            classOfDevice(cod, address: BDAddress(address).description, record)
        }
    }

    /// The Local Name each report of an LE Advertising Report (7.7.65.2) carries, for the address that advertised it.
    func advertised(_ r: LEAdvertisingReport, _ record: CaptureRecord) {
        for report in r.reports {
            sink.names.observe(advertisingData: report.data, address: report.address.value, source: .advertising, frame: record.frame)
        }
    }

    /// The same for an LE Extended Advertising Report (7.7.65.13). A report the controller says is one part of more
    /// (data status 1) or truncated (2) ends inside its last structure: a name that runs past it is marked cut.
    func advertised(_ r: LEExtendedAdvertisingReport, _ record: CaptureRecord) {
        for report in r.reports {
            sink.names.observe(advertisingData: report.data, address: report.address.value, source: .advertising, frame: record.frame)
        }
    }
}
