import BLECapture
import BLEProtocols

/// An HCI record that holds fewer bytes than its own header says while the capture file marks nothing cut, told apart
/// by whether its headers hold together: one writer for ``ACLPath`` (`Analyzer.processACL`) and ``CompletenessTracker``.
///
/// - `cutByLogger`: the headers are whole and agree with each other (an ACL start fragment whose L2CAP length plus 4 is
///   the ACL length; a command of a defined OGF; an event code the specification or a vendor defines), only the payload
///   is left out. Windows' Bluetooth Virtual Sniffer (BTVS) logs HID input reports without their values and LE Start
///   Encryption without its key; a home-made host logs Change Local Name's 248 bytes as the name it holds. Counted as a
///   capturer's cut: the packet was whole on the link.
/// - `damaged`: the header itself does not hold together (a logger's 0xCC filler read as ACL on handle 0x0CCC, 52,428
///   bytes stated in 20): it names nothing, so it makes no link.
enum RecordShortfall: Equatable {
    case none, cutByLogger, damaged

    static func of(_ record: CaptureRecord) -> RecordShortfall {
        guard !record.isTruncated else { return .none }
        let b = record.bytes
        switch record.kind {
        case .acl where b.count >= 4:
            let stated = Int(b[2]) | Int(b[3]) << 8
            guard stated > b.count - 4 else { return .none }
            let boundary = (b[1] >> 4) & 0x3
            let isStart = boundary == 0b00 || boundary == 0b10
            guard isStart, b.count >= 8 else { return .damaged }
            return (Int(b[4]) | Int(b[5]) << 8) + 4 == stated ? .cutByLogger : .damaged
        case .iso where b.count >= 4:
            return (Int(b[2]) | Int(b[3]) << 8) & 0x3FFF > b.count - 4 ? .damaged : .none
        case .sco where b.count >= 3:
            return Int(b[2]) > b.count - 3 ? .damaged : .none
        case .command where b.count >= 3:
            guard Int(b[2]) > b.count - 3 else { return .none }
            let group = b[1] >> 2  // OGF: link control 0x01 … LE 0x08, vendor 0x3F
            return (0x01...0x08).contains(group) || group == 0x3F ? .cutByLogger : .damaged
        case .event where b.count >= 2:
            guard Int(b[1]) > b.count - 2 else { return .none }
            return b[0] != 0 && (b[0] <= 0x5F || b[0] == 0xFF) ? .cutByLogger : .damaged
        default:
            return .none
        }
    }
}
