import BLECapture
import BLECore
import BLEProtocols

// Here rather than beside `HCIPacket` in BLEProtocols: a capture record is BLECapture's, and BLEProtocols does not
// import BLECapture, so that a clean build compiles the two side by side (docs/performance.md#build-time).
extension HCIPacket {
    /// Decodes a record; a length mismatch or malformed header becomes a finding. Extra bytes after the
    /// declared length are ignored (with a warning) and the packet is still returned.
    public static func decode(_ record: CaptureRecord, findings: inout [Finding]) -> HCIPacket? {
        guard record.kind.isHCI else { return nil }
        if record.isTruncated {
            findings.append(
                Finding(
                    .info,
                    .hciTruncatedRecord(
                        kind: record.kind, included: record.includedLength,
                        original: record.originalLength), frame: record.frame))
            return nil
        }
        var r = record.reader
        do throws(DecodeError) {
            let packet: HCIPacket
            switch record.kind {
            case .command: packet = .command(try HCICommandPacket(parsing: &r))
            case .event: packet = .event(try HCIEventPacket(parsing: &r))
            case .acl: packet = .acl(try ACLPacket(parsing: &r))
            case .sco: packet = .sco(try SCOPacket(parsing: &r))
            default: packet = .iso(try ISOPacket(parsing: &r))
            }
            if !r.isAtEnd {
                findings.append(
                    Finding(
                        .warning, .hciLengthMismatch(kind: record.kind, declared: r.offset, present: r.count),
                        frame: record.frame, offset: record.fileOffset))
            }
            return packet
        } catch {
            findings.append(
                Finding(
                    .error, .hciLengthMismatch(kind: record.kind, error: error), frame: record.frame,
                    offset: record.fileOffset))
            return nil
        }
    }
}
