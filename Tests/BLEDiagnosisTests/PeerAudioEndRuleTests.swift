import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// DC-02 on a BR/EDR link whose audio ran on an eSCO link beside it (``DC02PeerEndedLink/lastFromPeer(_:before:in:)``,
/// ``DC02PeerEndedLink/removedAudio(_:before:in:)``). BTstack's hands-free log (corpus): the gateway sent 6,846 SCO
/// packets up to 34740, this side removed the eSCO link (Disconnect 34722, Disconnection Complete 0x16 at 34741), and
/// the gateway ended the ACL with 0x13 at 34750, 2.9 s later. DC-02 warned "last packet from it 23.5 s before" (the
/// ACL's last, 475) with "idle timeout" as the likely cause.
extension DiagnosisRuleTests {
    @Suite struct PeerAudioEnd {
        /// A call's eSCO link 0x000C on the ACL 0x000B (``ClassicLinkTests/call(eSCOStatus:)``, frames 1–4), a notification
        /// from the peer on the ACL (5), from 20 s three SCO packets each way; then, with `removed`, this side takes the
        /// eSCO link down (Disconnect, its status, its Disconnection Complete 0x16); with `aclAfter`, a notification
        /// after that; at 23 s the peer ends the ACL (0x13).
        static func call(removed: Bool, aclAfter: Bool = false) -> (CaptureBuilder, lastSCO: Int, removal: Int, end: Int) {
            var b = ClassicLinkTests.call().notify(handle: 0x0025, [1], connection: 0x000B).at(20)
            for _ in 0..<3 { b = b.sco(handle: 0x000C, .rx).sco(handle: 0x000C, .tx) }
            let lastSCO = b.nextFrame - 2
            if removed {
                b = b.disconnectCommand(handle: 0x000C, reason: .remoteUserTerminatedConnection)
                    .event(HCIBuild.disconnectionComplete(handle: 0x000C, reason: .connectionTerminatedByLocalHost))
            }
            let removal = b.nextFrame - 1
            if aclAfter { b = b.notify(handle: 0x0025, [2], connection: 0x000B) }
            b = b.at(23)
            let end = b.nextFrame
            return (b.disconnect(handle: 0x000B, reason: .remoteUserTerminatedConnection), lastSCO, removal, end)
        }

        @Test func thePeerEndingALinkAfterItsAudioWasRemovedIsInfo() throws {
            let (b, lastSCO, removal, end) = Self.call(removed: true)
            let d = try #require(try RuleTest.diagnose(b).of("DC-02").first)
            #expect(d.severity == .info && d.frame == end)
            #expect(d.supporting.map(\.frame) == [lastSCO, removal])
            // The last SCO packet from the peer at 20.004 s (frame 10), the end at 23 s: 2.996 s, shown as 3.00 s.
            #expect(
                d.message
                    == "00:1A:7D:DA:71:13 ended the connection (0x13 Remote User Terminated Connection) at frame \(end); nothing failed before it (last packet from it on its eSCO link 3.00 s before). It follows the removal of its eSCO link 0x000c by this side (frame \(removal)): the session's orderly end."
            )
        }

        /// The near misses: the eSCO link still up when the peer ends the ACL (the call cut), and ACL traffic after its
        /// removal (the link in use again): no orderly end, a warning, and the peer's last packet is still the SCO one
        /// or the ACL's, whichever came later.
        @Test func thePeerEndingALinkWithItsAudioUpOrInUseAfterIsAWarning() throws {
            let (up, lastSCO, _, upEnd) = Self.call(removed: false)
            let cut = try #require(try RuleTest.diagnose(up).of("DC-02").first)
            #expect(cut.severity == .warning && cut.frame == upEnd && !cut.message.contains("orderly"))
            #expect(cut.supporting.first?.frame == lastSCO && cut.message.contains("last packet from it on its eSCO link"))
            let (used, _, removal, end) = Self.call(removed: true, aclAfter: true)
            let again = try #require(try RuleTest.diagnose(used).of("DC-02").first)
            #expect(again.severity == .warning && again.frame == end && !again.message.contains("orderly"))
            #expect(again.supporting.first?.frame == removal + 1 && again.message.contains("last packet from it 2.9"))
        }
    }
}
