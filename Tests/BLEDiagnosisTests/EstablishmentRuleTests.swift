import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// CE-01 … CE-05: the four causes behind Android's "GATT 133" and a failed feature exchange, each on a capture that
/// shows it and on the benign pattern that must stay quiet.
extension DiagnosisRuleTests {
    @Suite struct Establishment {
        // MARK: CE-01 connect gave up

        @Test(arguments: [false, true])
        func aConnectCancelledAfter30sAndCompletedWith0x02IsGATT133(_ extended: Bool) throws {
            // An Android log (its stack asks LE Get Vendor Capabilities first): "GATT 133" is Android's word.
            var b = CaptureBuilder().vendorCommand(HCICommand(ogf: 0x3F, ocf: 0x153))
            let create = b.nextFrame
            b = extended ? b.extendedCreateConnection(to: RuleTest.peer) : b.createConnection(to: RuleTest.peer)
            b = b.at(30)
            let cancel = b.nextFrame
            b = b.createConnectionCancel()
            let complete = b.nextFrame
            b = b.connectionFailed(.unknownConnectionIdentifier)
            let r = try RuleTest.diagnose(b)
            let d = try #require(r.of("CE-01").first)
            #expect(r.of("CE-01").count == 1)
            #expect(d.severity == .critical && d.frame == complete && d.device == RuleTest.peerText)
            #expect(d.supporting.map(\.frame) == [create, cancel] && d.frames == [create, cancel, complete])
            #expect(d.message.hasPrefix("Connecting to \(RuleTest.peerText) gave up after 30.0 s"))
            #expect(d.message.contains("cancel at frame \(cancel)") && d.message.contains("GATT 133"))
            #expect(r.findings.first?.rule == "CE-01")  // the headline
        }

        @Test func threeAttemptsThatGaveUpFoldIntoOneLine() throws {
            var b = CaptureBuilder()
            var completes: [Int] = []
            for i in 0..<3 {
                b = b.at(Double(i) * 40).createConnection(to: RuleTest.peer).at(Double(i) * 40 + 30).createConnectionCancel()
                completes.append(b.nextFrame)
                b = b.connectionFailed(.unknownConnectionIdentifier)
            }
            let found = try RuleTest.diagnose(b).of("CE-01")
            #expect(found.count == 1 && found.first?.count == 3 && found.first?.occurrences == completes)
        }

        enum BenignCancel: String, CaseIterable {
            /// The app cancelled after 2 s (its own time-out or the user).
            case appCancelAfter2s
            /// A background connection through the accept list, cancelled after minutes when the list changed.
            case backgroundAfterMinutes
            /// Bluetooth switched off: the stack cancels and disconnects every link (reason 0x15).
            case bluetoothOff
            /// The controller reset right after the cancel.
            case reset
        }

        @Test(arguments: BenignCancel.allCases)
        func nearMissACancelTheAppOrTheSystemAskedFor(_ benign: BenignCancel) throws {
            var b = CaptureBuilder().connect(handle: 0x41, peer: RuleTest.otherPeer)
            switch benign {
            case .appCancelAfter2s: b = b.createConnection(to: RuleTest.peer).at(2).createConnectionCancel()
            case .backgroundAfterMinutes: b = b.createConnection(to: nil).at(300).createConnectionCancel()
            case .bluetoothOff, .reset: b = b.createConnection(to: RuleTest.peer).at(30).createConnectionCancel()
            }
            b = b.connectionFailed(.unknownConnectionIdentifier)
            if benign == .bluetoothOff { b = b.disconnectCommand(handle: 0x41, reason: .remotePowerOff) }
            if benign == .reset { b = b.reset() }
            #expect(try RuleTest.diagnose(b).of("CE-01").isEmpty)
        }

        // MARK: CE-02 failed to be established

        @Test func aConnectionDroppedWith0x3EBeforeAnyTrafficFailedToBeEstablished() throws {
            var b = CaptureBuilder()
            let connect = b.nextFrame
            b = b.connect(handle: 0x40, peer: RuleTest.peer).at(0.2)
            let drop = b.nextFrame
            b = b.disconnect(handle: 0x40, reason: .connectionFailedToBeEstablished)
            let d = try #require(try RuleTest.diagnose(b).of("CE-02").first)
            #expect(d.severity == .critical && d.frame == drop && d.device == RuleTest.peerText && d.connection == 1)
            #expect(d.supporting.map(\.frame) == [connect])
            #expect(
                d.message.hasPrefix("The connection to \(RuleTest.peerText) failed to be established (0x3E at frame \(drop)), 200 ms after")
            )
        }

        @Test func fiveFailedAttemptsFoldIntoOneLineWithEveryFrame() throws {
            var b = CaptureBuilder()
            var drops: [Int] = []
            for i in 0..<5 {
                b = b.at(Double(i) * 10).connect(handle: 0x40, peer: RuleTest.peer).at(Double(i) * 10 + 0.3)
                drops.append(b.nextFrame)
                b = b.disconnect(handle: 0x40, reason: .connectionFailedToBeEstablished)
            }
            let r = try RuleTest.diagnose(b)
            let d = try #require(r.of("CE-02").first)
            #expect(r.of("CE-02").count == 1 && d.count == 5 && d.occurrences == drops)
            #expect(d.headline == "failed to be established (0x3E) to C0:11:22…")
            #expect(Set(drops).isSubset(of: Set(d.frames)))
        }

        @Test func aConnectionCompleteWithStatus0x3EIsTheSameFailure() throws {
            var b = CaptureBuilder().createConnection(to: RuleTest.peer)
            let complete = b.nextFrame
            b = b.connectionFailed(.connectionFailedToBeEstablished, peer: RuleTest.peer)
            let d = try #require(try RuleTest.diagnose(b).of("CE-02").first)
            #expect(d.frame == complete && d.severity == .critical)
        }

        @Test func nearMissALinkLostLaterBySupervisionTimeout() throws {
            let b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer).notify(handle: 0x25, [1], connection: 0x40).at(10)
                .disconnect(handle: 0x40, reason: .connectionTimeout)
            let r = try RuleTest.diagnose(b)
            #expect(r.of("CE-02").isEmpty && r.of("DC-01").count == 1)
        }

        // MARK: CE-03 create refused

        @Test(arguments: [HCIStatus.commandDisallowed, .memoryCapacityExceeded, .invalidCommandParameters])
        func theControllerRefusingACreateConnectionNamesWhy(_ status: HCIStatus) throws {
            var b = CaptureBuilder()
            let create = b.nextFrame
            b = b.createConnection(to: RuleTest.peer, status: status)
            let r = try RuleTest.diagnose(b)
            let d = try #require(r.of("CE-03").first)
            #expect(d.severity == .error && d.frame == create + 1 && d.supporting.map(\.frame) == [create])
            #expect(d.device == RuleTest.peerText && d.message.contains("to \(RuleTest.peerText) (\(hex(status.rawValue))"))
            let why = [0x0C: "already pending", 0x07: "out of connection resources", 0x12: "parameters are invalid"][Int(status.rawValue)]!
            #expect(d.message.contains(why))
            #expect(r.of("HH-04").isEmpty)  // explained here, not a generic command error
            // A refused attempt never started: nothing is left pending at the end of the capture.
            #expect(r.of("CQ-03").isEmpty)
        }

        @Test func nearMissACreateConnectionTheControllerAccepted() throws {
            let b = CaptureBuilder().createConnection(to: RuleTest.peer).connect(handle: 0x40, peer: RuleTest.peer)
            #expect(try RuleTest.diagnose(b).of("CE-03").isEmpty)
        }

        // MARK: CE-04 peer refused this central

        @Test(arguments: [HCIStatus.remoteUserTerminatedConnection, .authenticationFailure, .remotePowerOff, .unsupportedRemoteFeature])
        func aPeerDroppingUsBeforeAnyGATTRejectsThisCentral(_ reason: HCIStatus) throws {
            var b = CaptureBuilder()
            let connect = b.nextFrame
            b = b.connect(handle: 0x40, peer: RuleTest.peer).att(.exchangeMTURequest(clientRxMTU: 247), handle: 0x40, .tx)
                .att(.exchangeMTUResponse(serverRxMTU: 247), handle: 0x40, .rx).at(0.3)
            let drop = b.nextFrame
            b = b.disconnect(handle: 0x40, reason: reason)
            let r = try RuleTest.diagnose(b)
            let d = try #require(r.of("CE-04").first)
            #expect(d.severity == .error && d.frame == drop && d.device == RuleTest.peerText)
            #expect(d.supporting.map(\.frame) == [connect])
            #expect(d.message.hasPrefix("\(RuleTest.peerText) dropped the link 300 ms after connecting"))
            #expect(r.of("DC-02").isEmpty)  // one finding for one drop
        }

        enum NotARefusal: String, CaseIterable {
            /// This side asked (HCI Disconnect first).
            case weAsked
            /// The drop came 3 s after connecting: DC-02's.
            case later
            /// GATT traffic went both ways before it.
            case afterGATT
            /// A BR/EDR peer closing 300 ms after connecting (the legacy-PIN capture of Thewbi/hci_bluetooth: a bonding
            /// the phone ended once the key was made, an SDP search that found nothing).
            case bredr
            /// This side is the peripheral: the central dropped it.
            case thisSidePeripheral
        }

        @Test(arguments: NotARefusal.allCases)
        func nearMissADropThatIsNotARefusal(_ kind: NotARefusal) throws {
            var b =
                switch kind {
                case .bredr: CaptureBuilder().connectBREDR(handle: 0x40, peer: RuleTest.peer)
                case .thisSidePeripheral: CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer, role: .peripheral)
                default: CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer)
                }
            switch kind {
            case .weAsked: b = b.at(0.3).disconnectCommand(handle: 0x40)
            case .later: b = b.at(3)
            case .bredr, .thisSidePeripheral: b = b.at(0.3)
            case .afterGATT:
                for h in UInt16(1)...3 {
                    b = b.att(.readRequest(handle: h), handle: 0x40, .tx).att(.readResponse(value: [1]), handle: 0x40, .rx)
                }
            }
            b = b.disconnect(handle: 0x40, reason: kind == .weAsked ? .connectionTerminatedByLocalHost : .remoteUserTerminatedConnection)
            let r = try RuleTest.diagnose(b)
            #expect(r.of("CE-04").isEmpty)
            if kind != .bredr && kind != .thisSidePeripheral { #expect(r.of("DC-02").count == (kind == .weAsked ? 0 : 1)) }
        }

        // MARK: CE-05 remote features

        @Test func aFeatureExchangeThatFailedIsAWarning() throws {
            var b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer)
            let command = b.nextFrame
            b = b.readRemoteFeatures(handle: 0x40, complete: .unsupportedRemoteFeature)
            let d = try #require(try RuleTest.diagnose(b).of("CE-05").first)
            #expect(d.severity == .warning && d.frame == command + 2 && d.device == RuleTest.peerText)
            #expect(
                d.message
                    == "Reading the link-layer features of \(RuleTest.peerText) failed (0x1a Unsupported Remote Feature at frame \(command + 2))."
            )
        }

        @Test func aFeatureCommandRefusedByItsStatusIsTheSame() throws {
            var b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer)
            let command = b.nextFrame
            b = b.readRemoteFeatures(handle: 0x40, status: .commandDisallowed)
            let r = try RuleTest.diagnose(b)
            #expect(r.of("CE-05").map(\.frame) == [command + 1])
            #expect(r.of("HH-04").isEmpty)
        }

        @Test func nearMissAFeatureExchangeThatDiedWithTheLink() throws {
            let b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer)
                .readRemoteFeatures(handle: 0x40, complete: .connectionFailedToBeEstablished)
                .disconnect(handle: 0x40, reason: .connectionFailedToBeEstablished)
            let r = try RuleTest.diagnose(b)
            #expect(r.of("CE-05").isEmpty && r.of("CE-02").count == 1)
            let fine = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer).readRemoteFeatures(handle: 0x40)
            #expect(try RuleTest.diagnose(fine).of("CE-05").isEmpty)
        }
    }
}
