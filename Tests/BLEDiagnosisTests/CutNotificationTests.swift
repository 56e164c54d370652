import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// A notification whose record the capturer cut is still a notification: its opcode and handle are kept, its value
/// is not. The Mi Watch btsnooz log (records cut to 15 of 18–22 bytes: notifications on 0x000b at 815, 818, 827) and
/// Windows' BTVS (a HID mouse's reports logged as opcode and handle alone, 28,842 of the 40-minute log's 32,245
/// notifications, tshark `btatt.opcode == 0x1b`). GATT-05 counts them as sent; the Data line counts them and says how
/// many were cut. The near miss: a cut notification on another handle leaves the subscribed one silent.
extension DiagnosisRuleTests {
    @Suite struct CutNotifications {
        typealias GATT = DiagnosisRuleTests.GATT

        /// A Handle Value Notification on `handle` of link 0x40 as BTVS logs it: the ACL and L2CAP headers say 8 value
        /// bytes (ACL 15, L2CAP 11), the record stops after the handle. `btsnooz`: the file says the record was cut
        /// (its original length 15 + 4), as Android's filtered log does.
        static func cutNotification(_ b: CaptureBuilder, handle: UInt16, btsnooz: Bool) -> CaptureBuilder {
            let kept: [UInt8] = [0x40, 0x20, 15, 0, 11, 0, 0x04, 0x00, 0x1B, UInt8(handle & 0xFF), UInt8(handle >> 8)]
            return b.record(.acl, .rx, kept, originalLength: btsnooz ? 19 : nil)
        }

        /// Subscribed to 0x0012 (CCCD 0x0013) at 1 s; a cut notification on `notified`; the link ended at 41 s.
        static func subscribed(cutOn notified: UInt16, btsnooz: Bool) -> (CaptureBuilder, write: Int) {
            var b = GATT.discovered(GATT.connected()).at(1)
            let write = b.nextFrame
            b = b.att(.writeRequest(handle: 0x0013, value: [0x01, 0x00]), handle: 0x40, .tx).att(.writeResponse, handle: 0x40, .rx)
            b = Self.cutNotification(b.at(2), handle: notified, btsnooz: btsnooz).at(41)
                .disconnect(handle: 0x40, reason: .connectionTerminatedByLocalHost)
            return (b, write)
        }

        @Test(arguments: [false, true])
        func aCutNotificationIsANotificationSent(btsnooz: Bool) throws {
            let r = try RuleTest.diagnose(Self.subscribed(cutOn: 0x0012, btsnooz: btsnooz).0)
            #expect(r.of("GATT-05").isEmpty)
            let data = try #require(r.story.sentences.first { $0.text.hasPrefix("Data:") })
            #expect(data.text.contains("1 notification received (1 cut by the capturer: their values are not in the log)"), "\(data.text)")
        }

        @Test func nearMissACutNotificationOnAnotherHandleLeavesTheSubscriptionSilent() throws {
            let (b, write) = Self.subscribed(cutOn: 0x0025, btsnooz: false)
            let d = try #require(try RuleTest.diagnose(b).of("GATT-05").first)
            // 0x0012 stays silent; the peer's notification on 0x0025 shows its notifications work: context, not a fault.
            #expect(d.frame == write && d.message.contains("Subscribed to 0x0012"))
            #expect(d.severity == .info && d.message.contains("the peer notified 0x0025 meanwhile"), "\(d.message)")
        }
    }
}
