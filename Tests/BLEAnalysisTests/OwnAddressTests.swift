import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Foundation
import Testing

/// This side's LE address in the cases the Own_Address_Type alone does not settle (issue 45, privacy): the public
/// address Read BD_ADDR returned (Core Spec Vol 4, Part E, 7.4.6), a random address the controller refused (7.8.4:
/// Command Complete with an error status; the address in force stays), and a peripheral link that came from an
/// extended advertising set (LE Set Extended Advertising Parameters' Own_Address_Type, 7.8.53, with LE Set Advertising
/// Set Random Address, 7.8.52; the set named by LE Advertising Set Terminated, 7.7.65.18).
@Suite struct OwnAddressTests {
    static let rpa = LinkAddressesTests.rpa
    static let peer = BDAddress(0x0011_2233_4455)
    static let ownPublic = BDAddress(0x001B_DC07_32EF)

    static func local(_ b: CaptureBuilder) throws -> SeenAddress? {
        try #require(Analyzer.analyze(try b.captureFile()).connections.first).machine.securityRecord.addresses[.local]
    }

    static func little(_ a: BDAddress) -> [UInt8] { (0..<6).map { UInt8(truncatingIfNeeded: a.value >> UInt64(8 * $0)) } }

    static func readBDAddr(status: UInt8 = 0) -> CaptureBuilder {
        CaptureBuilder().command(HCIBuild.command(.readBDADDR))
            .event(HCIBuild.commandComplete(.readBDADDR, returnParameters: [status] + little(ownPublic)))
    }

    /// Read BD_ADDR answers 00:1B:DC:07:32:EF at 2, LE Create Connection with own address type public at 3: this side
    /// is that public address (shown by the answer at 2, the type at 3). Near misses: Read BD_ADDR refused (status
    /// 0x01): public, its address not in the log; own address type 0x02 with the plain LE Connection Complete: still not
    /// in the log (the controller may have made an RPA).
    @Test func readBDAddrNamesThePublicAddress() throws {
        let connect = HCIBuild.leConnectionComplete(handle: 0x40, peer: Self.peer, peerAddressType: .public)
        let b = Self.readBDAddr().command(LinkAddressesTests.createConnection(own: .public)).event(connect)
        #expect(
            try Self.local(b)
                == SeenAddress(kind: .public, address: "00:1B:DC:07:32:EF", frame: 2, shownBy: "Read BD_ADDR", ownAddressTypeFrame: 3))
        let refused = Self.readBDAddr(status: 0x01).command(LinkAddressesTests.createConnection(own: .public)).event(connect)
        #expect(try Self.local(refused) == SeenAddress(kind: .public, address: nil, frame: 3, shownBy: "LE Create Connection"))
        let controllerChose = Self.readBDAddr().command(LinkAddressesTests.createConnection(own: .publicIdentity)).event(connect)
        #expect(try Self.local(controllerChose) == nil)
    }

    /// LE Set Random Address 4A:…:55 at 1 (success at 2), then 5B:…:01 at 3 refused at 4 (0x0C Command Disallowed: the
    /// controller was advertising or scanning): the link made with own address type random at 5 used 4A:…:55, and the
    /// refused RPA is no rotation. Near miss: the second accepted: 5B:…:01, two RPAs.
    @Test func aRefusedRandomAddressIsNotUsed() throws {
        func capture(secondStatus: UInt8) -> CaptureBuilder {
            CaptureBuilder().command(LinkAddressesTests.setRandomAddress(Self.rpa))
                .event(HCIBuild.commandComplete(.leSetRandomAddress))
                .command(LinkAddressesTests.setRandomAddress(BDAddress(0x5B00_0000_0001)))
                .event(HCIBuild.commandComplete(.leSetRandomAddress, returnParameters: [secondStatus]))
                .command(LinkAddressesTests.createConnection(own: .random))
                .event(HCIBuild.leConnectionComplete(handle: 0x40, peer: Self.peer, peerAddressType: .public))
        }
        let refused = Analyzer.analyze(try capture(secondStatus: 0x0C).captureFile())
        let local = try #require(refused.connections.first).machine.securityRecord.addresses[.local]
        #expect(local?.address == "4A:11:22:33:44:55" && local?.frame == 1 && local?.ownAddressTypeFrame == 5)
        #expect(refused.addressRotation.own.map(\.frame) == [1])
        let accepted = Analyzer.analyze(try capture(secondStatus: 0).captureFile())
        #expect(try #require(accepted.connections.first).machine.securityRecord.addresses[.local]?.address == "5B:00:00:00:00:01")
        #expect(accepted.addressRotation.own.map(\.frame) == [1, 3])
    }

    /// LE Set Extended Advertising Parameters: Advertising_Handle, Event_Properties 0x0013 (legacy ADV_IND), intervals
    /// 0x0000A0, channels 0x07, then `own`, peer public zeros, filter 0, TX power 0x7F, PHYs 1, skip 0, SID 0, notify 0.
    static func extendedAdvertisingParameters(set: UInt8, own: UInt8) -> [UInt8] {
        let p: [UInt8] =
            [set, 0x13, 0x00, 0xA0, 0, 0, 0xA0, 0, 0, 0x07, own, 0] + [UInt8](repeating: 0, count: 6) + [0, 0x7F, 1, 0, 1, 0, 0]
        return HCIBuild.command(HCICommand(ogf: 0x08, ocf: 0x0036), parameters: p)
    }

    static func peripheralFromSet(_ set: UInt8, terminatedStatus: HCIStatus = .success) -> CaptureBuilder {
        CaptureBuilder().command(extendedAdvertisingParameters(set: 1, own: 0x01))
            .command(HCIBuild.command(.leSetAdvertisingSetRandomAddress, parameters: [1] + little(LinkAddressesTests.staticRandom)))
            .command(extendedAdvertisingParameters(set: 2, own: 0x00))
            .event(
                LinkAddressesTests.enhancedComplete(
                    role: .peripheral, peerType: .public, peer: Self.peer, peerRPA: BDAddress(0), localRPA: BDAddress(0))
            )
            .event(
                HCIBuild.event(
                    .declared(
                        LEAdvertisingSetTerminated {
                            $0.status = terminatedStatus
                            $0.advertisingHandle = set
                            $0.connectionHandle = 0x40
                        })))
    }

    /// A peripheral link (4) from advertising set 1 (LE Advertising Set Terminated at 5): set 1's own address type
    /// random (1) with its random address C0:FF:EE:00:00:02 (2): random static. Near misses: from set 2 (own type
    /// public at 3): public, its address not in the log; a Terminated with an error (0x3C, advertising timeout) names
    /// no link: not in the log.
    @Test func aPeripheralLinkFromAnExtendedAdvertisingSet() throws {
        #expect(
            try Self.local(Self.peripheralFromSet(1))
                == SeenAddress(
                    kind: .randomStatic, address: "C0:FF:EE:00:00:02", frame: 2, shownBy: "LE Set Advertising Set Random Address",
                    ownAddressTypeFrame: 1))
        #expect(
            try Self.local(Self.peripheralFromSet(2))
                == SeenAddress(kind: .public, address: nil, frame: 3, shownBy: "LE Set Extended Advertising Parameters"))
        #expect(try Self.local(Self.peripheralFromSet(1, terminatedStatus: HCIStatus(rawValue: 0x3C))) == nil)
    }

    /// Real captures, values read with tshark. btstack's 2014 LE pairing log (corpus): Read BD_ADDR answers
    /// 00:1b:dc:07:32:ef at 26, LE Set Advertising Parameters own address type 0x00 at 93, LE Connection Complete
    /// (peripheral) at 99. The robam Android log: Read BD_ADDR b0:02:47:7e:76:96 at 10, LE Create Connection own address
    /// type 0x00 at 479, the link at 481. The mabip-amuza Android log: LE Set Random Address 56:47:c2:9b:a1:79 at 14157
    /// refused at 14158 (0x0C): not among this side's RPAs.
    @Test func realCapturesAsTsharkReadsThem() throws {
        guard let dir = TestEnvironment.corpusDirectory else { return }
        func analyzed(_ name: String) throws -> Analyzer? {
            let path = dir + "/" + name
            return FileManager.default.fileExists(atPath: path) ? Analyzer.analyze(try CaptureFile.open(path: path)) : nil
        }
        if let a = try analyzed("pklg-btstack-be_le-sm-pairing-2014.pklg") {
            let link = try #require(a.connections.filter(\.isLE).first)
            #expect(link.startFrame == 99)
            #expect(
                link.machine.securityRecord.addresses[.local]
                    == SeenAddress(kind: .public, address: "00:1B:DC:07:32:EF", frame: 26, shownBy: "Read BD_ADDR", ownAddressTypeFrame: 93)
            )
        }
        if let a = try analyzed("android-btsnoop-cfa_robam-appliance-ota-fff0-writecmd.cfa") {
            let link = try #require(a.connections.filter(\.isLE).first)
            #expect(link.startFrame == 481)
            #expect(
                link.machine.securityRecord.addresses[.local]
                    == SeenAddress(
                        kind: .public, address: "B0:02:47:7E:76:96", frame: 10, shownBy: "Read BD_ADDR", ownAddressTypeFrame: 479))
        }
        if let a = try analyzed("android-btsnoop_mabip-amuza-classic-rfcomm-6h.log") {
            let frames = a.addressRotation.own.map(\.frame)
            #expect(frames.contains(13959) && frames.contains(14369) && !frames.contains(14157))
        }
    }
}
