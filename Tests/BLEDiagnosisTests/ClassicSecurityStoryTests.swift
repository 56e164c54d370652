import BLEAnalysis
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// The story's BR/EDR security sentence for a link the log shows from its Connection Complete with no authentication,
/// pairing or encryption, as the HappyLeaf tablet's OBD dongle link (139 to 75997, RFCOMM in the clear; tshark shows
/// no Link Key Request, IO Capability or Encryption Change, and Connection Complete's Encryption Mode 0x00).
extension DiagnosisRuleTests {
    @Suite struct ClassicSecurityStory {
        static let handle: UInt16 = 0x000B

        static func security(_ b: CaptureBuilder) throws -> String? {
            try RuleTest.diagnose(b).story.sentences.first { $0.topic == .security }?.text
        }

        @Test func aLinkNeverSecuredIsSaidToCarryDataInTheClear() throws {
            let b = CaptureBuilder().connectBREDR(handle: Self.handle)
                .signal(.connectionRequest(psm: 0x0003, sourceCID: 0x0041), identifier: 1, handle: Self.handle, .tx)
            let text = try Self.security(b)
            #expect(
                text
                    == "Security: BR/EDR: no authentication or pairing in the log; the link was never encrypted: what it carried went in the clear.",
                "\(String(describing: text))")
        }

        /// Near misses: the same link encrypted (Encryption Change on, frame 2) is counted as encrypted; a link the log
        /// shows only by its ACL (it started before the log) gets no claim.
        @Test func anEncryptedLinkOrOneFromBeforeTheLogIsNotSaidUnsecured() throws {
            let encrypted = CaptureBuilder().connectBREDR(handle: Self.handle).encryptionChange(handle: Self.handle)
            let text = try #require(try Self.security(encrypted))
            #expect(text.contains("1 BR/EDR encryption on (2)") && !text.contains("in the clear"), "\(text)")
            let before = CaptureBuilder().signal(
                .connectionRequest(psm: 0x0003, sourceCID: 0x0041), identifier: 1, handle: Self.handle, .tx)
            #expect(try Self.security(before)?.contains("in the clear") != true)
        }
    }

    /// An LE Create Connection by the Filter Accept List (initiator filter policy 1), cancelled (0x02): a background
    /// connection the stack re-arms, told as such (the fossibot Pixel log: 7 creates at policy 0x01, each cancelled).
    /// The near miss: a create to a named peer (policy 0, the zengge log) cancelled is only "cancelled by this side".
    @Suite struct CancelledAttempts {
        @Test(arguments: [true, false]) func aCancelledAcceptListConnectIsABackgroundOne(_ acceptList: Bool) throws {
            let b = CaptureBuilder().createConnection(to: acceptList ? nil : RuleTest.peer).createConnectionCancel()
                .connectionFailed(.unknownConnectionIdentifier)
            let links = try #require(
                try RuleTest.diagnose(b).story.sentences.first { $0.topic == .links && $0.text.contains("ended without a link") }?.text)
            let how = acceptList ? " while connecting in the background by accept list" : ""
            #expect(
                links
                    == "1 LE connection attempt ended without a link: 1 cancelled by this side\(how) (LE Create Connection Cancel, 0x02).",
                "\(links)")
        }
    }
}
