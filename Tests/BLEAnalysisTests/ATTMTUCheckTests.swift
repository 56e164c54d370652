import BLECore
import BLEProtocols
import Testing

@testable import BLEAnalysis

/// No ATT PDU may be longer than the ATT_MTU of its bearer (Core Spec Vol 3, Part F, 3.2.8); 23 is the LE default
/// (3.2.8, ATT_MTU 23 until an Exchange MTU).
@Suite struct ATTMTUCheckTests {
    @Test func theLinkJudgesTheFixedBearerByWhereItsMTUCameFrom() {
        var exchanged = LinkFact<Int>(initial: 23, source: .assumed)
        exchanged.set(185, frame: 12, timestamp: Timestamp(microseconds: 0), source: .observed(frame: 12))
        #expect(ATTMTUCheck.judge(size: 185, link: exchanged) == .fits)
        #expect(ATTMTUCheck.judge(size: 186, link: exchanged) == .exceeds(mtu: 185, bearer: nil))
        // No exchange in the capture: a 27-byte PDU proves the MTU is at least 27; nothing is wrong.
        var assumed = LinkFact<Int>(initial: 23, source: .assumed)
        #expect(ATTMTUCheck.judge(size: 23, link: assumed) == .fits)
        #expect(ATTMTUCheck.judge(size: 27, link: assumed) == .provesLargerMTU)
        assumed.set(27, frame: 40, timestamp: Timestamp(microseconds: 0), source: .inferred(.largestATTPDU(frame: 40, bytes: 27)))
        #expect(ATTMTUCheck.judge(size: 64, link: assumed) == .provesLargerMTU)
        #expect(ATTMTUCheck.judge(size: 64, link: LinkFact<Int>(initial: nil, source: .assumed)) == .fits)
    }

    @Test func aDynamicBearerIsJudgedByItsOwnMTUOnceKnown() {
        #expect(ATTMTUCheck.judge(size: 1000, bearer: ATTBearer(kind: .eatt, channel: 0, mtu: nil)) == .fits)
        #expect(ATTMTUCheck.judge(size: 247, bearer: ATTBearer(kind: .eatt, channel: 0, mtu: 247)) == .fits)
        #expect(ATTMTUCheck.judge(size: 248, bearer: ATTBearer(kind: .eatt, channel: 0, mtu: 247)) == .exceeds(mtu: 247, bearer: .eatt))
        #expect(
            FindingKind.attPDUExceedsMTU(ATTOpcode.handleValueNotification, size: 248, mtu: 247, bearer: .eatt).message
                == "ATT \(ATTOpcode.handleValueNotification) of 248 bytes exceeds the eatt bearer's ATT_MTU 247")
    }
}
