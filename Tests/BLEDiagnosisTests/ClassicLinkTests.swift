import BLEAnalysis
import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

/// BR/EDR links as first-class links: their transport from their first event, their own facts (role and switches, mode
/// and sniff, subrating, supervision timeout, packet types, the remote's version, features and name) with where each
/// came from, no LE fact ever, and SCO/eSCO links on handles of their own beside their ACL. Captures built from typed
/// packets; the expected values are the packets' own.
@Suite struct ClassicLinkTests {
    static let peer = BDAddress(0x00_1A_7D_DA_71_13)

    static func analyze(_ b: CaptureBuilder) throws -> Analyzer {
        let options = AnalyzerOptions(evidence: true)
        return try AnalyzerRun.analyze(b, options: options).0
    }

    /// This side pages the headset (central), the link opens on 0x000B; its facts follow.
    static func linkWithFacts() -> CaptureBuilder {
        CaptureBuilder()
            .declaredCommand(
                CreateConnection {
                    $0.address = peer; $0.packetType = 0xCC18
                }
            )  // 1
            .connectBREDR(handle: 0x000B, peer: peer)  // 2
            .declaredEvent(
                MaxSlotsChange {
                    $0.handle = 0x000B; $0.maxSlots = 5
                }
            )  // 3
            .declaredEvent(
                ReadRemoteVersionInformationComplete {
                    $0.handle = 0x000B; $0.version = 13; $0.companyIdentifier = 0x02B0; $0.subversion = 0x0713
                }
            )  // 4
            .declaredEvent(
                RemoteNameRequestComplete {
                    $0.address = peer; $0.remoteName = RemoteName("OPPO Enco Buds3 Pro")
                }
            )  // 5
            .declaredCommand(
                WriteLinkSupervisionTimeout {
                    $0.handle = 0x000B; $0.timeout = 0x1F40
                }
            )  // 6
            .event(HCIBuild.commandComplete(WriteLinkSupervisionTimeout.opcodeForTests, returnParameters: [0x00, 0x0B, 0x00]))  // 7
            .declaredEvent(
                ModeChange {
                    $0.handle = 0x000B; $0.mode = 2; $0.interval = 800
                }
            )  // 8: sniff 500 ms
            .declaredEvent(
                SniffSubrating {
                    $0.handle = 0x000B; $0.maxTxLatency = 1600; $0.maxRxLatency = 1600; $0.minRemoteTimeout = 2
                }
            )  // 9
            .declaredEvent(
                RoleChange {
                    $0.address = peer; $0.role = 1
                }
            )  // 10: now peripheral
            .declaredEvent(
                ModeChange {
                    $0.handle = 0x000B; $0.mode = 0
                }
            )  // 11: active
            .declaredEvent(
                ConnectionPacketTypeChanged {
                    $0.handle = 0x000B; $0.packetType = 0x3306 | 0xCC18
                })  // 12: no EDR
    }

    @Test func brEDRLinkFactsWithTheirSources() throws {
        let a = try Self.analyze(Self.linkWithFacts())
        let c = try #require(a.connections.first)
        #expect(c.isBREDR && !c.isLE)
        #expect(c.link.transport.value == .bredr && c.link.transport.source == .observed(frame: 2))
        // The page at frame 1 makes this side central; the Role Change at 10 switches it.
        #expect(c.link.role.changes.map(\.value) == [.central, .peripheral])
        #expect(c.link.role.changes.first?.source == .inferred(.paging(frame: 1, accepted: false)))
        #expect(c.role == .peripheral)
        let f = try #require(c.link.classic)
        #expect(f.roleSwitchFrames == [10])
        #expect(f.maxSlots.value == 5)
        #expect(f.remoteVersion.value == RemoteVersion(version: 13, company: 0x02B0, subversion: 0x0713))
        #expect(f.remoteVersion.value?.versionName == "5.4")
        // Asked before the link opened? No: at frame 5, with the link open, observed there.
        #expect(f.remoteName.value == "OPPO Enco Buds3 Pro" && f.remoteName.source == .observed(frame: 5))
        // 0x1F40 slots = 5000 ms, from the command at 6, in force at its Command Complete at 7.
        #expect(f.supervisionTimeout.value == 0x1F40 && f.supervisionTimeout.source == .observed(frame: 7))
        #expect(f.mode.changes.map(\.value) == [LinkMode(mode: 2, interval: 800), .active])
        #expect(f.mode.changes.first?.value.intervalMilliseconds == 500)
        #expect(f.subrating.value?.maxTxLatency == 1600)
        #expect(f.packetTypes.value.map(ACLPacketTypes.allowsEDR) == false)
        // No LE fact on a BR/EDR link: unknown, never a default.
        #expect(c.link.phy.value == nil && c.link.dataLength.value == nil && c.link.mtu.value == nil)
        #expect(c.link.snapshot.transport == .bredr)
    }

    @Test func anLELinkHasNoBREDRFacts() throws {
        let a = try Self.analyze(
            CaptureBuilder().connect(handle: 0x0040).declaredEvent(
                ModeChange {
                    $0.handle = 0x0040; $0.mode = 2
                }))
        let c = try #require(a.connections.first)
        #expect(c.isLE && c.link.classic == nil)
        #expect(c.link.phy.value == .le1M && c.link.mtu.value == 23)
        #expect(c.role == .central)
    }

    @Test func aNameAskedBeforeTheLinkIsItsWhenItOpens() throws {
        let a = try Self.analyze(
            CaptureBuilder()
                .declaredEvent(
                    RemoteNameRequestComplete {
                        $0.address = Self.peer; $0.remoteName = RemoteName("Car Kit")
                    }
                )  // 1
                .declaredEvent(
                    ConnectionRequest {
                        $0.address = Self.peer; $0.linkType = 1
                    }
                )  // 2: the peer pages
                .connectBREDR(handle: 0x000B, peer: Self.peer))  // 3
        let c = try #require(a.connections.first)
        #expect(c.link.classic?.remoteName.value == "Car Kit")
        #expect(c.link.classic?.remoteName.source == .observed(frame: 1))
        #expect(c.role == .peripheral && c.link.role.source == .inferred(.paging(frame: 2, accepted: true)))
    }

    /// The Realtek headset log (corpus batch 13, tshark): the phone's Connection Request event (51), this side's Accept
    /// Connection Request (52), Connection Complete (54): the peer paged, and the link is told so from the event's frame.
    static func pagedByThePeer(accept: Bool = true, event: Bool = true) -> CaptureBuilder {
        var b = CaptureBuilder()
        if event {
            b = b.declaredEvent(
                ConnectionRequest {
                    $0.address = Self.peer; $0.linkType = 1
                })
        }
        if accept {
            b = b.declaredCommand(
                AcceptConnectionRequest {
                    $0.address = Self.peer; $0.role = 1
                })
        }
        return b.connectBREDR(handle: 0x0002, peer: Self.peer)
    }

    @Test func aLinkThePeerPagedIsToldFromItsConnectionRequest() throws {
        let c = try #require(try Self.analyze(Self.pagedByThePeer()).connections.first)
        #expect(c.link.role.source == .inferred(.paging(frame: 1, accepted: true)))
        #expect(c.paging?.byThisSide == false && c.paging?.frame == 1)
        let texts = try RuleTest.diagnose(Self.pagedByThePeer()).story.sentences.map(\.text)
        #expect(
            texts.contains {
                $0.hasPrefix("1 BR/EDR link with 00:1A:7D:DA:71:13 ×1, the peer connected to this side (its Connection Request, 1): ")
            }, "\(texts)")
        // The Accept alone (the event not logged): the page shows at the accept.
        #expect(try Self.analyze(Self.pagedByThePeer(event: false)).connections.first?.paging?.frame == 1)
    }

    /// The Echo Auto log (corpus batch 17, tshark): the peer pages (Connection Request 9258), this side accepts asking to
    /// become central (Accept Connection Request role 0x00, 9259), the Role Change to central comes before Connection
    /// Complete. The page stays the peer's; the switch follows it.
    @Test func aPeerPageAcceptedAsCentralStaysThePeers() throws {
        let b = CaptureBuilder()
            .declaredEvent(
                ConnectionRequest {
                    $0.address = Self.peer; $0.linkType = 1
                }
            )  // 1
            .declaredCommand(
                AcceptConnectionRequest {
                    $0.address = Self.peer; $0.role = 0
                }
            )  // 2
            .declaredEvent(
                RoleChange {
                    $0.address = Self.peer; $0.role = 0
                }
            )  // 3
            .connectBREDR(handle: 0x0002, peer: Self.peer)  // 4
        let c = try #require(try Self.analyze(b).connections.first)
        #expect(c.paging?.byThisSide == false && c.paging?.frame == 1)
        #expect(c.role == .central)
        #expect(c.link.role.changes.map(\.frame) == [4, 4] && c.link.role.source == .observed(frame: 3))
        #expect(c.link.classic?.roleSwitchFrames == [3])
        let texts = try RuleTest.diagnose(b).story.sentences.map(\.text)
        #expect(
            texts.contains {
                $0.hasPrefix("1 BR/EDR link with 00:1A:7D:DA:71:13 ×1, the peer connected to this side (its Connection Request, 1): ")
            }, "\(texts)")
    }

    /// Near miss: a Role Change with no page held (the link's start not in the log) is the role's first fact.
    @Test func nearMissARoleChangeWithNoPageIsTheFirstFact() throws {
        let b = CaptureBuilder()
            .declaredEvent(
                RoleChange {
                    $0.address = Self.peer; $0.role = 0
                }
            )  // 1
            .connectBREDR(handle: 0x0002, peer: Self.peer)  // 2
        let c = try #require(try Self.analyze(b).connections.first)
        #expect(c.paging == nil && c.role == .central)
        #expect(c.link.role.source == .observed(frame: 1))
        #expect(c.link.classic?.roleSwitchFrames == [])
    }

    /// Near miss: this side's Create Connection opens the link: told as this side's.
    @Test func nearMissALinkThisSidePagedIsThisSides() throws {
        let b = CaptureBuilder().declaredCommand(CreateConnection { $0.address = Self.peer }).connectBREDR(handle: 0x0002, peer: Self.peer)
        let c = try #require(try Self.analyze(b).connections.first)
        #expect(c.paging?.byThisSide == true && c.paging?.frame == 1)
        let texts = try RuleTest.diagnose(b).story.sentences.map(\.text)
        #expect(
            texts.contains { $0.hasPrefix("1 BR/EDR link with 00:1A:7D:DA:71:13 ×1, this side connected (Create Connection 1): ") },
            "\(texts)")
        // No page in the log at all: nothing said.
        let none = try RuleTest.diagnose(CaptureBuilder().connectBREDR(handle: 0x0002, peer: Self.peer)).story.sentences.map(\.text)
        #expect(none.contains { $0.hasPrefix("1 BR/EDR link with 00:1A:7D:DA:71:13 ×1: ") }, "\(none)")
    }

    /// The Sony log: the controller sends Connection Packet Type Changed (and Max Slots Change) for an incoming link a
    /// few ms before its Connection Complete. That is no link from before the log: one link, not one replaced by another.
    @Test func aPacketTypeChangeBeforeConnectionCompleteMakesNoLink() throws {
        let a = try Self.analyze(
            CaptureBuilder()
                .declaredEvent(
                    ConnectionRequest {
                        $0.address = Self.peer; $0.linkType = 1
                    }
                )  // 1
                .declaredEvent(
                    ConnectionPacketTypeChanged {
                        $0.handle = 0x0005; $0.packetType = 0xCC18
                    }
                )  // 2
                .declaredEvent(
                    MaxSlotsChange {
                        $0.handle = 0x0005; $0.maxSlots = 5
                    }
                )  // 3
                .connectBREDR(handle: 0x0005, peer: Self.peer))  // 4
        #expect(a.connections.count == 1)
        let c = try #require(a.connections.first)
        #expect(!c.inferred && c.startFrame == 4 && c.isBREDR)
    }

    // MARK: transport of a link up before the capture

    @Test func transportOfAnInferredLinkFromItsFirstChannel() throws {
        let bredr = try Self.analyze(
            CaptureBuilder().signal(.connectionRequest(psm: 0x0019, sourceCID: 0x0041), identifier: 1, handle: 0x0002, .tx))
        let c = try #require(bredr.connections.first)
        #expect(c.inferred && c.isBREDR)
        #expect(c.link.transport.source == .inferred(.transportShownBy(frame: 1, what: "L2CAP \(L2CAPCID(0x0001).description)")))
        let le = try Self.analyze(CaptureBuilder().att(.readRequest(handle: 3), handle: 0x0040, .tx))
        #expect(le.connections.first?.isLE == true)
        // A vendor channel shows neither: the transport stays unknown, and the link is counted as neither.
        let unknown = try Self.analyze(CaptureBuilder().l2cap(cid: 0x0EDC, payload: [1, 2, 3], handle: 0x0040, .rx))
        let u = try #require(unknown.connections.first)
        #expect(u.link.transport.value == nil && !u.isLE && !u.isBREDR)
    }

    @Test func transportOfAnInferredLinkFromABREDREvent() throws {
        let a = try Self.analyze(
            CaptureBuilder().declaredEvent(
                ModeChange {
                    $0.handle = 0x0003; $0.mode = 2; $0.interval = 800
                }))
        let c = try #require(a.connections.first)
        #expect(c.isBREDR && c.link.classic?.mode.value?.isSniff == true)
        #expect(c.link.transport.source == .inferred(.transportShownBy(frame: 1, what: "Mode Change")))
    }

    // MARK: SCO and eSCO

    /// The phone sets up an eSCO link for a call on the ACL 0x000B (mSBC asked), the controller gives it 0x000C; the
    /// call ends (0x000C removed), then the ACL ends.
    static func call(eSCOStatus: HCIStatus = .success) -> CaptureBuilder {
        CaptureBuilder()
            .connectBREDR(handle: 0x000B, peer: peer)  // 1
            .declaredCommand(
                EnhancedSetupSynchronousConnection {
                    $0.handle = 0x000B; $0.settings.transmitCoding = HCICodingFormat(format: 0x05)
                    $0.settings.receiveCoding = HCICodingFormat(format: 0x05); $0.settings.packetType = 0x0380
                }
            )  // 2
            .event(HCIBuild.commandStatus(EnhancedSetupSynchronousConnection.opcodeForTests))  // 3
            .declaredEvent(
                SynchronousConnectionComplete {
                    $0.status = eSCOStatus; $0.handle = 0x000C; $0.address = peer; $0.linkType = 2; $0.transmissionInterval = 12
                    $0.retransmissionWindow = 2; $0.rxPacketLength = 60; $0.txPacketLength = 60; $0.airMode = .transparent
                })  // 4
    }

    @Test func eSCORemovalIsNotTheACLsEnd() throws {
        let a = try Self.analyze(
            Self.call()
                .sco(handle: 0x000C, .tx).sco(handle: 0x000C, .rx).sco(handle: 0x000C, .rx)  // 5–7
                .event(HCIBuild.disconnectionComplete(handle: 0x000C, reason: .connectionTerminatedByLocalHost))  // 8
                .att(.readRequest(handle: 3), handle: 0x000B, .tx)  // 9: not a new link
                .event(HCIBuild.disconnectionComplete(handle: 0x000B, reason: .connectionTerminatedByLocalHost)))  // 10
        let sync = a.classicAnalysis.synchronousLinks
        #expect(sync.count == 1)
        let e = try #require(sync.first)
        #expect(e.established && e.isESCO && e.handle == 0x000C && e.aclConnection == 1)
        #expect(e.requestFrame == 2 && e.requestedCoding == "mSBC" && e.resultFrame == 4 && e.airMode == .transparent)
        #expect(e.intervalMilliseconds == 7.5)
        #expect(e.startFrame == 4 && e.endFrame == 8 && e.endReason == .connectionTerminatedByLocalHost)
        #expect(e.packets.tx == 1 && e.packets.rx == 2 && e.bytes.rx == 2 * 60)
        // The ACL ended at 10, not at 8; one connection only.
        #expect(a.connections.count == 1)
        #expect(a.connections[0].endFrame == 10)
        let evidence = Evidence(pass: a)
        let disconnections = evidence.events.filter { if case .disconnectionComplete = $0.kind { true } else { false } }
        #expect(disconnections.map(\.frame) == [10])
        let removed = evidence.events.filter { if case .synchronousDisconnected = $0.kind { true } else { false } }
        #expect(removed.map(\.frame) == [8] && removed.first?.connection == 1)
    }

    @Test func aDisconnectionOfTheACLIsStillItsEnd() throws {
        // Near miss: the ACL's own Disconnection Complete ends it, and its open eSCO link with it.
        let a = try Self.analyze(
            Self.call().event(HCIBuild.disconnectionComplete(handle: 0x000B, reason: .connectionTimeout)))  // 5
        #expect(a.connections.first?.endFrame == 5)
        #expect(a.classicAnalysis.synchronousLinks.first?.endFrame == 5)
        #expect(a.classicAnalysis.synchronousLinks.first?.endReason == nil)
    }

    @Test func failedESCOSetup() throws {
        let a = try Self.analyze(Self.call(eSCOStatus: .unsupportedRemoteFeature))
        let e = try #require(a.classicAnalysis.synchronousLinks.first)
        #expect(!e.established && e.status == .unsupportedRemoteFeature && e.resultFrame == 4 && e.handle == nil)
        #expect(e.requestFrame == 2 && e.aclConnection == 1)
        // A setup refused by its Command Status ends there.
        let refused = try Self.analyze(
            CaptureBuilder().connectBREDR(handle: 0x000B, peer: Self.peer)
                .declaredCommand(
                    SetupSynchronousConnection {
                        $0.handle = 0x000B; $0.voiceSetting = 0x0060
                    }
                )
                .event(HCIBuild.commandStatus(SetupSynchronousConnection.opcodeForTests, status: .commandDisallowed)))
        let r = try #require(refused.classicAnalysis.synchronousLinks.first)
        #expect(!r.established && r.status == .commandDisallowed && r.resultFrame == 3 && r.requestedCoding == "CVSD")
    }

    /// Who wanted the audio link: the blueprobe Echo Auto log's phone sets up the Clip 3's CVSD eSCO itself (Setup
    /// Synchronous Connection 13698, up at 13705); a headset that asks is accepted (Accept Synchronous Connection
    /// Request) instead.
    @Test func theCallsAudioLinkSaysWhoAskedForIt() throws {
        let ours = try RuleTest.diagnose(Self.call()).story.sentences.map(\.text)
        #expect(
            ours.contains { $0.contains("eSCO link up at frame 4 (transparent, every 7.50 ms), mSBC asked by this side (2)") }, "\(ours)")
        let accepted = CaptureBuilder().connectBREDR(handle: 0x000B, peer: Self.peer)
            .declaredCommand(
                AcceptSynchronousConnectionRequest {
                    $0.address = Self.peer; $0.voiceSetting = 0x0060
                }
            )  // 2
            .event(HCIBuild.commandStatus(AcceptSynchronousConnectionRequest.opcodeForTests))
            .declaredEvent(
                SynchronousConnectionComplete {
                    $0.handle = 0x000C; $0.address = Self.peer; $0.linkType = 2; $0.transmissionInterval = 12; $0.airMode = .cvsd
                })
        let theirs = try RuleTest.diagnose(accepted).story.sentences.map(\.text)
        #expect(theirs.contains { $0.contains("CVSD asked by the peer (accepted at 2)") }, "\(theirs)")
    }

    @Test func scoByConnectionCompleteIsNoACL() throws {
        let a = try Self.analyze(
            CaptureBuilder().connectBREDR(handle: 0x000B, peer: Self.peer)
                .event(
                    HCIBuild.event(
                        .declared(
                            ConnectionComplete {
                                $0.handle = 0x0101; $0.address = Self.peer; $0.linkType = 0
                            }))))
        #expect(a.connections.count == 1)
        let s = try #require(a.classicAnalysis.synchronousLinks.first)
        #expect(s.established && !s.isESCO && s.handle == 0x0101 && s.aclConnection == 1)
    }
}

extension HCIParameterSet {
    /// The declared command's opcode.
    static var opcodeForTests: HCICommand {
        if case .command(let c) = carrier { return c }
        return HCICommand(0)
    }
}
