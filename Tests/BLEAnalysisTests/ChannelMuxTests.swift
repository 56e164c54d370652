import BLEAnalysisTestSupport
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEAnalysis

/// One connection's mux and the frames fed to it.
final class MuxDriver {
    var mux = ChannelMux(creditBudget: CreditChannelBudget())
    var frame = 0

    /// Feeds the L2CAP PDU carrying `payload` on `cid`, sent `direction`, as the next frame (at frame × 1 ms).
    func feed(cid: UInt16, _ payload: [UInt8], _ direction: Direction) -> ChannelOutput {
        frame += 1
        let bytes = HCIBuild.l2cap(cid: cid, payload: payload)
        let time = Timestamp(microseconds: Int64(frame) * 1000)
        return bytes.withUnsafeBytes { raw in
            mux.feed(
                L2CAPPDU(bytes: raw, firstFrame: frame, lastFrame: frame, firstTimestamp: time, fragments: 1), direction: direction,
                timestamp: time)
        }
    }

    /// One signalling command on the LE (0x0005) or BR/EDR (0x0001) signalling channel: what it changed.
    func signal(_ command: L2CAPSignalCommand, id: UInt8, _ direction: Direction, cid: UInt16 = 0x0005) -> [ChannelEvent] {
        guard case .signalling(let outcomes) = feed(cid: cid, L2CAPSignal(identifier: id, command: command).bytes, direction) else {
            Issue.record("not signalling")
            return []
        }
        #expect(outcomes.count == 1 && outcomes.first?.signal.identifier == id)
        return outcomes.first?.events ?? []
    }

    /// A K-frame on `cid`: the first of an SDU carries its length (3.4.3).
    func kframe(cid: UInt16, sduLength: Int? = nil, _ payload: [UInt8], _ direction: Direction) -> ChannelOutput {
        feed(cid: cid, L2CAPKFrame(sduLength: sduLength.map { UInt16($0) }, payload: payload).bytes, direction)
    }

    static func kframeOutcome(_ output: ChannelOutput) -> KFrameOutcome? {
        if case .kframe(let k) = output { return k }
        Issue.record("not a K-frame: \(output)")
        return nil
    }

    /// LE Credit Based Connection Request from this side to SPSM 0x0080 on its CID 0x0040, 2 credits for the peer;
    /// the peer's response: its CID 0x0041, 3 credits for this side (4.22–4.23).
    func openLECreditChannel(result: UInt16 = 0) -> [ChannelEvent] {
        let request = signal(
            .leCreditBasedConnectionRequest(spsm: 0x0080, sourceCID: 0x0040, mtu: 512, mps: 64, initialCredits: 2), id: 1, .tx)
        #expect(request.isEmpty)
        return signal(
            .leCreditBasedConnectionResponse(destinationCID: 0x0041, mtu: 256, mps: 64, initialCredits: 3, result: result), id: 1, .rx)
    }
}

/// The L2CAP channels of one connection (Core Spec Vol 3, Part A), fed whole L2CAP PDUs built from typed values
/// (``HCIBuild/l2cap(cid:payload:)``, ``L2CAPSignal``, ``L2CAPKFrame``) as the reassemblers hand them over. Expected
/// outputs follow the spec: the fixed CIDs of 2.1, the channels the signalling of 4.x opens, the credits of 10.1 and 4.24,
/// the SDU length of 3.4.3.
@Suite struct ChannelMuxTests {
    @Test func fixedChannelsGoToTheirProtocols() {
        let d = MuxDriver()
        guard case .att(.fixed) = d.feed(cid: 0x0004, ATTPDU.readRequest(handle: 0x0003).bytes, .tx) else {
            Issue.record("0x0004 is the ATT fixed channel")
            return
        }
        guard case .smp = d.feed(cid: 0x0006, SMPPDU.securityRequest([.bonding]).bytes, .rx),
            case .smp = d.feed(cid: 0x0007, SMPPDU.pairingFailed(SMPPairingFailedReason(0x05)).bytes, .rx)
        else {
            Issue.record("0x0006 and 0x0007 are the LE and BR/EDR security manager channels")
            return
        }
        guard case .unknownCID = d.feed(cid: 0x0040, [1, 2, 3], .rx) else {
            Issue.record("no channel was opened on 0x0040")
            return
        }
    }

    /// Connection Parameter Update Request and Response (4.20–4.21): named, no channel changes.
    @Test func parameterUpdatesAreNamed() {
        let d = MuxDriver()
        let request = d.signal(.connectionParameterUpdateRequest(intervalMin: 6, intervalMax: 12, latency: 0, timeout: 500), id: 7, .rx)
        #expect(request == [.parameterUpdateRequest(ParameterRequest(intervalMin: 6, intervalMax: 12, latency: 0, timeout: 500))])
        #expect(d.signal(.connectionParameterUpdateResponse(result: 0x0001), id: 7, .tx) == [.parameterUpdateResponse(result: 1)])
    }

    @Test func malformedSignallingChangesNothing() {
        let d = MuxDriver()
        // An LE Credit Based Connection Request (0x14) whose length says 10 bytes but carries 2.
        guard case .malformedSignalling = d.feed(cid: 0x0005, [0x14, 0x01, 0x0A, 0x00, 0x80, 0x00], .tx) else {
            Issue.record("a short command decodes")
            return
        }
        #expect(d.mux.channels.isEmpty && d.mux.credit.channels.isEmpty)
    }

    /// An SDU over K-frames, the credits spent, a K-frame without a credit (10.1), and LE Flow Control Credit ending
    /// the wait (4.24).
    @Test func creditChannelsReassembleSDUsAndCountCredits() throws {
        let d = MuxDriver()
        #expect(d.openLECreditChannel() == [.channelsChanged])
        #expect(d.mux.channels.first?.psm == L2CAPPSM(0x0080) && d.mux.channels.first?.mode == .leCredit)
        // The peer sends to this side's CID 0x0040 with the 2 credits of the request: a 5-byte SDU in two K-frames.
        let first = try #require(MuxDriver.kframeOutcome(d.kframe(cid: 0x0040, sduLength: 5, [0xA1, 0xA2], .rx)))
        #expect(first.spsm == 0x0080 && first.sdu == nil && !first.withoutCredit)
        #expect(d.mux.heldBytes == 2)
        let second = try #require(MuxDriver.kframeOutcome(d.kframe(cid: 0x0040, [0xA3, 0xA4, 0xA5], .rx)))
        #expect(second.sdu?.bytes == [0xA1, 0xA2, 0xA3, 0xA4, 0xA5] && second.sdu?.firstFrame == 3 && second.sdu?.announced == 5)
        #expect(second.sdu?.kframeBytes == (4 + 2 + 2) + (4 + 3) && !second.withoutCredit && !second.sduLongerThanAnnounced)
        #expect(second.bearer == nil)
        // No credit left: the third K-frame is a protocol error, and the SDU it starts says 2 bytes but carries 3.
        let third = try #require(MuxDriver.kframeOutcome(d.kframe(cid: 0x0040, sduLength: 2, [1, 2, 3], .rx)))
        #expect(third.withoutCredit && third.sduLongerThanAnnounced)
        // This side gives 4 credits for its CID 0x0040: the peer waited from frame 4, its last credit, to frame 6.
        let credited = d.signal(.flowControlCreditIndication(cid: 0x0040, credits: 4), id: 2, .tx)
        #expect(
            credited == [
                .creditStallEnded(
                    CreditStall(
                        cid: 0x0040, startFrame: 4, startTime: Timestamp(microseconds: 4000), endFrame: 6,
                        endTime: Timestamp(microseconds: 6000)))
            ])
        // This side sends to the peer's CID 0x0041 with the response's credits.
        #expect(try #require(MuxDriver.kframeOutcome(d.kframe(cid: 0x0041, sduLength: 1, [0x42], .tx))).sdu?.bytes == [0x42])
    }

    /// Each side's request or response states what it takes (Core Spec Vol 3, Part A, 4.22–4.23): this side MTU 512, MPS
    /// 64 on its CID 0x0040; the peer MTU 256, MPS 64 on 0x0041. A K-frame whose payload (SDU length included) is longer
    /// than its receiver's MPS, and an SDU announcing more than its receiver's MTU, are named (3.4.3); at the limits,
    /// nothing is.
    @Test func kframesOverTheMPSAndSDUsOverTheMTUAreNamed() throws {
        let d = MuxDriver()
        _ = d.openLECreditChannel()
        let overMPS = try #require(MuxDriver.kframeOutcome(d.kframe(cid: 0x0040, sduLength: 63, Array(repeating: 7, count: 63), .rx)))
        #expect(overMPS.overMPS == 65 && overMPS.overMTU == nil && overMPS.sdu?.bytes.count == 63)
        let atLimits = try #require(MuxDriver.kframeOutcome(d.kframe(cid: 0x0041, sduLength: 256, Array(repeating: 1, count: 62), .tx)))
        #expect(atLimits.overMPS == nil && atLimits.overMTU == nil && atLimits.sdu == nil)
        let overMTU = try #require(MuxDriver.kframeOutcome(d.kframe(cid: 0x0040, sduLength: 513, [1, 2], .rx)))
        #expect(overMTU.overMTU == 513 && overMTU.overMPS == nil)
    }

    @Test func aFirstKFrameTooShortForTheSDULengthIsNamed() throws {
        let d = MuxDriver()
        _ = d.openLECreditChannel()
        let short = try #require(MuxDriver.kframeOutcome(d.kframe(cid: 0x0040, [0x05], .rx)))
        #expect(short.tooShortToStart && short.sdu == nil)
    }

    /// A refused LE credit-based connection (result 0x0002, SPSM not supported) names the SPSM of its request and opens
    /// nothing: the channel the request prepared for the peer's data is closed again.
    @Test func aRefusedCreditConnectionIsNamedAndOpensNothing() {
        let d = MuxDriver()
        #expect(d.openLECreditChannel(result: 0x0002) == [.creditConnectionRefused(psm: 0x0080, result: 2)])
        #expect(d.mux.channels.isEmpty && d.mux.credit.channels.isEmpty)
        guard case .unknownCID = d.kframe(cid: 0x0040, sduLength: 1, [0], .rx) else {
            Issue.record("a refused channel carries data")
            return
        }
    }

    /// Disconnection (4.6–4.7) closes both directions of a credit-based channel.
    @Test func disconnectionClosesTheChannel() {
        let d = MuxDriver()
        _ = d.openLECreditChannel()
        #expect(d.signal(.disconnectionRequest(destinationCID: 0x0041, sourceCID: 0x0040), id: 3, .tx).isEmpty)
        #expect(d.signal(.disconnectionResponse(destinationCID: 0x0041, sourceCID: 0x0040), id: 3, .rx) == [.channelsChanged])
        #expect(d.mux.credit.channels.isEmpty)
        guard case .unknownCID = d.kframe(cid: 0x0040, sduLength: 1, [0], .rx) else {
            Issue.record("a closed channel carries data")
            return
        }
    }

    /// Credit Based Connection Request to EATT (SPSM 0x0027) for two channels, the second refused (4.25–4.26): one
    /// enhanced ATT bearer, with the smaller of the two MTUs, and each SDU on it is one ATT PDU of that bearer.
    @Test func enhancedATTSDUsNameTheirBearer() throws {
        let d = MuxDriver()
        let request = d.signal(
            .creditBasedConnectionRequest(spsm: 0x0027, mtu: 517, mps: 64, initialCredits: 5, sourceCIDs: [0x0040, 0x0041]), id: 4, .tx)
        #expect(request.isEmpty && d.mux.credit.channels.count == 2)
        let response = d.signal(
            .creditBasedConnectionResponse(mtu: 247, mps: 64, initialCredits: 5, result: 0, destinationCIDs: [0x0050, 0x0000]), id: 4,
            .rx)
        #expect(response == [.bearerOpened(0, kind: .eatt, channel: 0, mtu: 247), .channelsChanged])
        // The refused 0x0041 is closed; 0x0040 (peer → this side) and 0x0050 (this side → peer) are open.
        #expect(Set(d.mux.credit.channels.keys) == [CreditKey(direction: .rx, cid: 0x0040), CreditKey(direction: .tx, cid: 0x0050)])
        let notification = ATTPDU.handleValueNotification(handle: 0x0021, value: [0x01, 0x02]).bytes
        let out = try #require(MuxDriver.kframeOutcome(d.kframe(cid: 0x0040, sduLength: notification.count, notification, .rx)))
        #expect(out.spsm == 0x0027 && out.bearer == 0 && out.sdu?.bytes == notification)
    }

    /// A BR/EDR channel to PSM 0x001F in basic mode is an ATT bearer (Part F, 3.2.11 via Part A, 3.1): its MTU is the
    /// L2CAP default 672 until a Configure Request names one (4.4, 5.1), then the smaller of the two.
    @Test func aBasicModeATTChannelIsABearer() {
        let d = MuxDriver()
        let mtu: (UInt16) -> [UInt8] = { [0x01, 0x02, UInt8($0 & 0xFF), UInt8($0 >> 8)] }
        #expect(d.signal(.connectionRequest(psm: 0x001F, sourceCID: 0x0040), id: 1, .tx, cid: 0x0001).isEmpty)
        let opened = d.signal(.connectionResponse(destinationCID: 0x0070, sourceCID: 0x0040, result: 0, status: 0), id: 1, .rx, cid: 0x0001)
        #expect(opened == [.bearerOpened(0, kind: .bredr, channel: 0, mtu: 672), .channelsChanged])
        let local = d.signal(.configureRequest(destinationCID: 0x0070, flags: 0, options: mtu(1000)), id: 2, .tx, cid: 0x0001)
        #expect(local == [.bearerMTU(0, mtu: 672), .channelsChanged])
        let remote = d.signal(.configureRequest(destinationCID: 0x0040, flags: 0, options: mtu(512)), id: 3, .rx, cid: 0x0001)
        #expect(remote == [.bearerMTU(0, mtu: 512), .channelsChanged])
        guard case .att(.dynamic(0)) = d.feed(cid: 0x0040, ATTPDU.readResponse(value: [7]).bytes, .rx),
            case .att(.dynamic(0)) = d.feed(cid: 0x0070, ATTPDU.readRequest(handle: 3).bytes, .tx)
        else {
            Issue.record("not on the bearer")
            return
        }
        // RFCOMM (PSM 0x0003) is known by its PSM, not decoded.
        _ = d.signal(.connectionRequest(psm: 0x0003, sourceCID: 0x0042), id: 4, .tx, cid: 0x0001)
        _ = d.signal(.connectionResponse(destinationCID: 0x0071, sourceCID: 0x0042, result: 0, status: 0), id: 4, .rx, cid: 0x0001)
        guard case .undecoded(let psm, _) = d.feed(cid: 0x0071, [0x01], .tx), psm == L2CAPPSM(0x0003) else {
            Issue.record("RFCOMM not named by its PSM")
            return
        }
    }

    /// The capture-wide budget bounds credit-based channels over every connection; a connection that ends gives its
    /// places back.
    @Test func creditChannelsPastTheBudgetAreNamed() {
        let budget = CreditChannelBudget(limit: 1)
        var a = ChannelMux(creditBudget: budget), b = ChannelMux(creditBudget: budget)
        let t = Timestamp(microseconds: 0)
        let request = L2CAPSignal(
            identifier: 1, command: .leCreditBasedConnectionRequest(spsm: 0x0080, sourceCID: 0x0040, mtu: 100, mps: 64, initialCredits: 1))
        let first = a.apply(request, direction: .tx, frame: 1, timestamp: t).events
        let second = b.apply(request, direction: .tx, frame: 2, timestamp: t).events
        #expect(first.isEmpty && second == [.creditChannelLimit])
        a.close()
        #expect(budget.open == 0)
        let third = b.apply(request, direction: .tx, frame: 3, timestamp: t).events
        #expect(third.isEmpty)
    }
}
