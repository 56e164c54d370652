import BLEAnalysis
import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Foundation
import Testing

/// Each side's address on an LE link, in its security record (issue 45, privacy): the kind from the HCI address type
/// and a random address's two most significant bits (Core Spec Vol 6, Part B, 1.3.2: 11 static, 01 resolvable private,
/// 00 non-resolvable private), this side's from LE Set Random Address and the Own_Address_Type of the command that made
/// the link (Vol 4, Part E, 7.8.4, 7.8.5, 7.8.12), or the local RPA of LE Enhanced Connection Complete (7.7.65.10); on
/// air from CONNECT_IND's TxAdd and RxAdd (Vol 6, Part B, 2.3.3.1).
@Suite struct LinkAddressesTests {
    static let rpa = BDAddress(0x4A11_2233_4455)  // 0x4A = 0b01…: resolvable private
    static let staticRandom = BDAddress(0xC0FF_EE00_0002)  // 0xC0 = 0b11…: static
    static let identity = BDAddress(0xF0AA_BBCC_DDEE)

    static func connections(_ b: CaptureBuilder) throws -> [Connection] {
        Analyzer.analyze(try b.captureFile()).connections
    }

    static func setRandomAddress(_ a: BDAddress) -> [UInt8] {
        HCIBuild.command(.leSetRandomAddress, parameters: (0..<6).map { UInt8(truncatingIfNeeded: a.value >> UInt64(8 * $0)) })
    }

    static func createConnection(own: LEAddressType) -> [UInt8] {
        let p = LEConnectionParameters(
            intervalMin: 24, intervalMax: 40, maxLatency: 0, supervisionTimeout: 400, minCELength: 0, maxCELength: 0)
        return HCIBuild.command(
            .leCreateConnection(
                LECreateConnection(
                    scanInterval: 0x60, scanWindow: 0x30, initiatorFilterPolicy: 0, peerAddressType: .random, peerAddress: staticRandom,
                    ownAddressType: own, connection: p)))
    }

    static func enhancedComplete(
        role: HCIRole = .central, peerType: LEAddressType, peer: BDAddress, peerRPA: BDAddress, localRPA: BDAddress
    )
        -> [UInt8]
    {
        HCIBuild.event(
            .declared(
                LEEnhancedConnectionComplete {
                    $0.handle = 0x40
                    $0.role = role
                    $0.peerAddressType = peerType
                    $0.peerAddress = peer
                    $0.peerResolvablePrivateAddress = peerRPA
                    $0.localResolvablePrivateAddress = localRPA
                    $0.timing.interval = 24
                    $0.timing.supervisionTimeout = 400
                }))
    }

    /// A central with its own RPA (LE Set Random Address at 1, own address type random at 2) connects to a peer the
    /// controller resolved: peer address type 0x03 (random identity) with the peer's RPA in the Enhanced event (3).
    @Test func aCentralsRPAAndAPeerTheControllerResolved() throws {
        let b = CaptureBuilder().command(Self.setRandomAddress(Self.rpa)).command(Self.createConnection(own: .random))
            .event(
                Self.enhancedComplete(
                    peerType: .randomIdentity, peer: Self.identity, peerRPA: BDAddress(0x5B00_0000_0001), localRPA: BDAddress(0)))
        let r = try #require(try Self.connections(b).first).machine.securityRecord
        let local = try #require(r.addresses[.local]), peer = try #require(r.addresses[.peer])
        #expect(local.kind == .resolvablePrivate && local.address == "4A:11:22:33:44:55" && local.frame == 1)
        #expect(local.shownBy == "LE Set Random Address" && local.ownAddressTypeFrame == 2)
        #expect(peer.kind == .resolvablePrivate && peer.address == "5B:00:00:00:00:01" && peer.identity == "F0:AA:BB:CC:DD:EE (random)")
        #expect(peer.frame == 3 && peer.shownBy == "LE Enhanced Connection Complete")
    }

    /// Near misses: a random address set, then a connection made with own address type public: this side is public
    /// (its address not read in the log), not the RPA; a static peer by its top bits 0b11 (LE Connection Complete,
    /// type random). A peripheral with no advertising parameters in the log, and own address type 0x02 with the plain
    /// LE Connection Complete (which cannot say whether the controller made an RPA): not in the log.
    @Test func ownAddressTypeChoosesAndWhatTheLogDoesNotSayIsNotGuessed() throws {
        let publicOwn = CaptureBuilder().command(Self.setRandomAddress(Self.rpa)).command(Self.createConnection(own: .public))
            .event(HCIBuild.leConnectionComplete(handle: 0x40, peer: Self.staticRandom, peerAddressType: .random))
        let r = try #require(try Self.connections(publicOwn).first).machine.securityRecord
        #expect(r.addresses[.local] == SeenAddress(kind: .public, address: nil, frame: 2, shownBy: "LE Create Connection"))
        #expect(r.addresses[.peer]?.kind == .randomStatic && r.addresses[.peer]?.address == "C0:FF:EE:00:00:02")
        let peripheral = CaptureBuilder().command(Self.setRandomAddress(Self.rpa))
            .event(
                HCIBuild.leConnectionComplete(handle: 0x40, role: .peripheral, peer: BDAddress(0x0011_2233_4455), peerAddressType: .public))
        let p = try #require(try Self.connections(peripheral).first).machine.securityRecord
        #expect(p.addresses[.local] == nil && p.addresses[.peer]?.kind == .public)
        let controllerChose = CaptureBuilder().command(Self.setRandomAddress(Self.rpa)).command(Self.createConnection(own: .publicIdentity))
            .event(HCIBuild.leConnectionComplete(handle: 0x40, peer: Self.staticRandom))
        #expect(try #require(try Self.connections(controllerChose).first).machine.securityRecord.addresses[.local] == nil)
    }

    /// The Enhanced event's local RPA names this side's address whatever the command said (own address type 0x02:
    /// the controller made it); a non-resolvable private random address (top bits 0b00) is told apart.
    @Test func theEnhancedEventsLocalRPAAndANonResolvablePeer() throws {
        let b = CaptureBuilder().command(Self.createConnection(own: .publicIdentity))
            .event(Self.enhancedComplete(peerType: .random, peer: BDAddress(0x3A00_0000_0009), peerRPA: BDAddress(0), localRPA: Self.rpa))
        let r = try #require(try Self.connections(b).first).machine.securityRecord
        #expect(
            r.addresses[.local]
                == SeenAddress(kind: .resolvablePrivate, address: "4A:11:22:33:44:55", frame: 2, shownBy: "LE Enhanced Connection Complete")
        )
        #expect(r.addresses[.peer]?.kind == .nonResolvablePrivate && r.addresses[.peer]?.identity == nil)
    }

    /// On air, CONNECT_IND's TxAdd (the initiator, this side) and RxAdd: NordicBuilder's initiator 11:22:33:44:55:66
    /// random (top bits 0b00: non-resolvable private), advertiser C0:FF:EE:00:00:01 public (RxAdd 0, whatever its bits).
    @Test func onAirTheConnectIndsAddressFlags() throws {
        var b = NordicBuilder()
        b.connect()
        b.data(.continuation, [], central: true, event: 1)
        let owned = b.records.map { r in
            OwnedRecord(
                frame: r.frame, timestamp: Timestamp(microseconds: r.micros), direction: .unknown, kind: .linkLayer,
                originalLength: r.origLen, linkType: 272, bytes: r.bytes)
        }
        let capture = try CaptureFile.open(bytes: CaptureWriter.pcap(owned, linkType: 272), name: "air.pcap")
        let r = try #require(Analyzer.analyze(capture).connections.first).machine.securityRecord
        #expect(
            r.addresses[.local] == SeenAddress(kind: .nonResolvablePrivate, address: "11:22:33:44:55:66", frame: 1, shownBy: "CONNECT_IND"))
        #expect(r.addresses[.peer] == SeenAddress(kind: .public, address: "C0:FF:EE:00:00:01", frame: 1, shownBy: "CONNECT_IND"))
    }

    /// Real captures, values read with tshark. The msp-aaaa Android log (corpus): its 12 RPAs; LE Set Random Address
    /// 44:2a:22:73:32:2b at 82 (top bits 01), LE Extended Create Connection own address type 0x01 at 236, LE Enhanced
    /// Connection Complete at 238 (handle 0x0002, peer type 0x00, 46:62:d7:5d:44:bf, local RPA zeros); its 6th link at
    /// 3136 with the address set at 3096 (7a:df:52:47:d8:8e, own address type at 3134). The crackle LE Secure
    /// Connections air capture (shared): CONNECT_IND at 44, TxAdd 0 (5c:f3:70:73:3e:f4), RxAdd 1 (7d:43:82:42:23:16,
    /// top bits 01).
    @Test func realCapturesAsTsharkReadsThem() throws {
        if let dir = TestEnvironment.corpusDirectory {
            let path = dir + "/android-btsnoop-qcom-0edc_msp-aaaa-le-att-smp.log"
            if FileManager.default.fileExists(atPath: path) {
                let analyzer = Analyzer.analyze(try CaptureFile.open(path: path))
                // tshark: 12 LE Set Random Address, every one an RPA (top bits 01), 900.009–900.018 s apart.
                let own = analyzer.addressRotation.own
                #expect(own.count == 12 && own.first?.frame == 82 && own.last?.frame == 26448 && own.last?.address == "5E:32:7B:23:D8:85")
                #expect(abs((analyzer.addressRotation.ownMedianIntervalSeconds ?? 0) - 900.013) < 0.006)
                let links = analyzer.connections.filter(\.isLE)
                let first = links[0].machine.securityRecord.addresses, sixth = links[5].machine.securityRecord.addresses
                #expect(links[0].startFrame == 238 && links[5].startFrame == 3136)
                #expect(
                    first[.local]
                        == SeenAddress(
                            kind: .resolvablePrivate, address: "44:2A:22:73:32:2B", frame: 82, shownBy: "LE Set Random Address",
                            ownAddressTypeFrame: 236))
                #expect(
                    first[.peer]
                        == SeenAddress(kind: .public, address: "46:62:D7:5D:44:BF", frame: 238, shownBy: "LE Enhanced Connection Complete"))
                #expect(
                    sixth[.local]?.address == "7A:DF:52:47:D8:8E" && sixth[.local]?.frame == 3096
                        && sixth[.local]?.ownAddressTypeFrame == 3134)
            }
        }
        guard let shared = TestEnvironment.sharedCaptures else { return }
        let air = shared + "/lell-rf-lt256_crackle-lesc-pairing.pcapng"
        guard FileManager.default.fileExists(atPath: air) else { return }
        let r = try #require(Analyzer.analyze(try CaptureFile.open(path: air)).connections.first).machine.securityRecord
        #expect(r.addresses[.local] == SeenAddress(kind: .public, address: "5C:F3:70:73:3E:F4", frame: 44, shownBy: "CONNECT_IND"))
        #expect(
            r.addresses[.peer] == SeenAddress(kind: .resolvablePrivate, address: "7D:43:82:42:23:16", frame: 44, shownBy: "CONNECT_IND"))
    }

    /// This side's RPA rotation (Vol 6, Part B, 1.3.2.2; Vol 3, Part C, Appendix A: T_GAP(private_addr_int) 15 min):
    /// RPAs set at 0, 300 and 1,200 s, the second set twice (no change) and a static address before the third (no
    /// RPA): 3 addresses, gaps 300 and 900 s, median 600 s. Near miss: static and non-resolvable addresses only: nothing.
    @Test func thisSidesRPAsAndTheirInterval() throws {
        let b = CaptureBuilder(step: 300_000_000).command(Self.setRandomAddress(Self.rpa))
            .command(Self.setRandomAddress(BDAddress(0x5B00_0000_0001))).command(Self.setRandomAddress(BDAddress(0x5B00_0000_0001)))
            .command(Self.setRandomAddress(Self.staticRandom)).command(Self.setRandomAddress(BDAddress(0x6C00_0000_0002)))
        let r = Analyzer.analyze(try b.captureFile()).addressRotation
        #expect(
            r.own.map(\.frame) == [1, 2, 5] && r.own.map(\.address) == ["4A:11:22:33:44:55", "5B:00:00:00:00:01", "6C:00:00:00:00:02"])
        #expect(r.ownMedianIntervalSeconds == 600)
        let quiet = CaptureBuilder().command(Self.setRandomAddress(Self.staticRandom)).command(
            Self.setRandomAddress(BDAddress(0x3A00_0000_0009)))
        #expect(Analyzer.analyze(try quiet.captureFile()).addressRotation.isEmpty)
    }

    /// A peer identity behind two RPAs the controller resolved (peer address type 0x02, two links): one peer, its two
    /// addresses by link. Near misses: the same RPA on both links, and a public peer: no rotation.
    @Test func aPeerSeenBehindTwoRPAs() throws {
        func link(_ rpa: BDAddress, type: LEAddressType = .publicIdentity, peer: BDAddress = Self.identity) -> CaptureBuilder {
            CaptureBuilder().event(Self.enhancedComplete(peerType: type, peer: peer, peerRPA: rpa, localRPA: BDAddress(0)))
                .disconnect(handle: 0x40)
        }
        let two = link(Self.rpa).event(
            Self.enhancedComplete(
                peerType: .publicIdentity, peer: Self.identity, peerRPA: BDAddress(0x5B00_0000_0001), localRPA: BDAddress(0)))
        let r = Analyzer.analyze(try two.captureFile()).addressRotation
        #expect(r.peers.map(\.identity) == ["F0:AA:BB:CC:DD:EE"])
        #expect(r.peers.first?.addresses.map(\.address) == ["4A:11:22:33:44:55", "5B:00:00:00:00:01"])
        #expect(r.peers.first?.addresses.map(\.connection) == [1, 2] && r.peers.first?.addresses.map(\.frame) == [1, 3])
        let same = link(Self.rpa).event(
            Self.enhancedComplete(peerType: .publicIdentity, peer: Self.identity, peerRPA: Self.rpa, localRPA: BDAddress(0)))
        #expect(Analyzer.analyze(try same.captureFile()).addressRotation.peers.isEmpty)
        let publicPeer = link(BDAddress(0), type: .public).event(
            Self.enhancedComplete(peerType: .public, peer: Self.identity, peerRPA: BDAddress(0), localRPA: BDAddress(0)))
        #expect(Analyzer.analyze(try publicPeer.captureFile()).addressRotation.isEmpty)
    }

    /// The kind by the top two bits, every one (Vol 6, Part B, 1.3.2, Figures 1.2–1.4).
    @Test(arguments: [
        (UInt64(0xC000_0000_0000), LEAddressKind.randomStatic), (0xFFFF_FFFF_FFFF, .randomStatic), (0x4000_0000_0000, .resolvablePrivate),
        (0x7FFF_FFFF_FFFF, .resolvablePrivate), (0x3FFF_FFFF_FFFF, .nonResolvablePrivate), (0x8000_0000_0000, .reservedRandom),
    ])
    func theTopTwoBitsTellTheKind(_ value: UInt64, _ kind: LEAddressKind) {
        #expect(LEAddressKind(random: value) == kind)
    }
}
