import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import Testing

/// `HCIPacket.decode(_:findings:)`, which reads a capture record (BLEAnalysis, where records and packets meet).
@Suite("HCI packets from capture records")
struct HCIRecordDecodeTests {
    @Test func recordDecodeReportsFindings() {
        var findings: [Finding] = []
        let good: [UInt8] = [0x05, 0x04, 0x00, 0x40, 0x00, 0x13, 0xAA]
        let packet = good.withUnsafeBytes { buf in
            HCIPacket.decode(
                CaptureRecord(
                    frame: 7, timestamp: Timestamp(microseconds: 0), direction: .rx, kind: .event,
                    originalLength: buf.count, includedLength: buf.count, fileOffset: 100, bytes: buf),
                findings: &findings)
        }
        #expect(packet != nil)
        #expect(findings.count == 1 && findings[0].frame == 7 && findings[0].kind.code.id == "hci.length-mismatch")
        let short: [UInt8] = [0x05, 0x04, 0x00]
        let none = short.withUnsafeBytes { buf in
            HCIPacket.decode(
                CaptureRecord(
                    frame: 8, timestamp: Timestamp(microseconds: 0), direction: .rx, kind: .event,
                    originalLength: buf.count, includedLength: buf.count, fileOffset: 120, bytes: buf),
                findings: &findings)
        }
        #expect(none == nil && findings.count == 2 && findings[1].severity == .error)
    }
}
