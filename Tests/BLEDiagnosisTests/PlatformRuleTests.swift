import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Testing

@testable import BLEAnalysis
@testable import BLEDiagnosis

/// Issue 48 scope 1: rules read the platform table (``PlatformTable``) instead of one platform's semantics. Each case
/// fires on the platform whose routine it is not, and stays at info (or quiet) on the platform whose routine it is.
extension DiagnosisRuleTests {
    @Suite struct Platforms {
        /// The first notes of an iPhone's PacketLogger log (pklg-ios-le_bafang-iphone18-sysdiagnose-5h-disc-16-08.pklg).
        static let iPhone = ["Product: iPhone18,2", "Bluetooth Host: MobileBluetooth-195.7.1.2", "Software: Version 26.5.1 (Build 23F81)"]

        static func text(_ s: String, _ frame: Int) -> OwnedRecord {
            OwnedRecord(
                frame: frame, timestamp: Timestamp(microseconds: 1_700_000_000_000_000), direction: .unknown, kind: .text,
                bytes: Array(s.utf8))
        }

        /// `b`'s records in a PacketLogger file opened by `notes` (Apple's, BTstack's…).
        static func diagnose(notes: [String], _ b: CaptureBuilder) throws -> DiagnosisResult {
            let records = notes.enumerated().map { text($1, $0 + 1) } + b.records
            let file = try CaptureFile.open(bytes: CaptureWriter.packetLogger(records, bigEndian: false), name: "phone.pklg")
            return DiagnosisReport.analyze(file).result
        }

        /// LE Add Device To (or Remove Device From) Filter Accept List for `peer` and its Command Complete (two records).
        static func acceptList(_ b: CaptureBuilder, _ op: HCICommand, _ peer: BDAddress = RuleTest.peer) -> CaptureBuilder {
            b.command(HCIBuild.command(op, parameters: [0x01] + peer.bytes))
                .event(HCIBuild.commandComplete(op, returnParameters: [0x00]))
        }

        /// Android's stack asks LE Get Vendor Capabilities first thing (AOSP `gd/hci/controller.cc`).
        static var android: CaptureBuilder { CaptureBuilder().vendorCommand(HCICommand(ogf: 0x3F, ocf: 0x153)) }

        // MARK: LP-02: the platform's default supervision timeout

        /// iOS creates every connection with 720 ms (72 × 10 ms, measured on the iPhone capture the table cites).
        /// `lost`: the link then ends in a supervision timeout (0x08), the loss a short timeout explains.
        static func iOSDefaultLink(role: HCIRole = .central, timeout: UInt16 = 72, lost: Bool = false) -> CaptureBuilder {
            let b = CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer, role: role, interval: 24, latency: 0, timeout: timeout)
            return lost ? b.at(5).disconnect(handle: 0x40, reason: .connectionTimeout) : b
        }

        @Test func iOSsOwnDefaultTimeoutIsContextNotAWarning() throws {
            let d = try #require(try Self.diagnose(notes: Self.iPhone, Self.iOSDefaultLink(lost: true)).of("LP-02").first)
            #expect(d.severity == .info)
            #expect(d.message.hasPrefix("The supervision timeout with \(RuleTest.peerText) is only 720 ms"))
            #expect(d.message.contains("That is the iOS default for the connections it creates (measured on iOS 26 and 27), not a choice"))
            #expect(
                d.causes.first?.hasPrefix("iOS/macOS's default for the connections it creates (measured: supervision timeout 72 × 10 ms")
                    == true)
        }

        @Test func nearMissTheSameTimeoutWithoutANamedPlatformStaysAWarning() throws {
            let d = try #require(try RuleTest.diagnose(Self.iOSDefaultLink(lost: true)).of("LP-02").first)
            #expect(d.severity == .warning && !d.message.contains("default"))
        }

        @Test func nearMissOnIOSAShorterTimeoutOrOneTheCentralDidNotChooseStaysAWarning() throws {
            // 500 ms is not iOS's default; as peripheral, the 720 ms is the other central's choice, not this iPhone's.
            for b in [Self.iOSDefaultLink(timeout: 50, lost: true), Self.iOSDefaultLink(role: .peripheral, lost: true)] {
                let d = try #require(try Self.diagnose(notes: Self.iPhone, b).of("LP-02").first)
                #expect(d.severity == .warning)
            }
        }

        @Test func blueZsDefault420msIsContext() throws {
            // Linux hci_core.c: le_supv_timeout 0x002a; the btmon system note names the platform.
            let records = [Self.text("Linux version 6.6.31+rpt-rpi-2712 (aarch64)", 1)] + Self.iOSDefaultLink(timeout: 42).records
            let file = try CaptureFile.open(bytes: CaptureWriter.btsnoop(records, datalink: BTSnoop.datalinkMonitor), name: "pi.snoop")
            let d = try #require(DiagnosisReport.analyze(file).result.of("LP-02").first)
            #expect(d.severity == .info && d.message.contains("That is the BlueZ default"))
        }

        // MARK: CE-01: GATT 133 only for a direct connect that ran its 30 s

        /// A direct connect through the accept list, cancelled after `seconds`, answered 0x02; then `after`.
        static func attempt(_ b: CaptureBuilder, seconds: Double, then after: (CaptureBuilder) -> CaptureBuilder = { $0 }) -> CaptureBuilder
        {
            let start = b.at(1).createConnection(to: nil)
            return after(start.at(1 + seconds).createConnectionCancel().connectionFailed(.unknownConnectionIdentifier))
        }

        @Test func androidsDirectConnectThatRanItsTimeoutIsGATT133() throws {
            // The time-out's own clean-up: the device leaves the accept list (AOSP le_impl.h on_create_connection_timeout).
            let b = Self.attempt(Self.android, seconds: 30) { Self.acceptList($0, .leRemoveDeviceFromFilterAcceptList) }
            let d = try #require(try RuleTest.diagnose(b).of("CE-01").first)
            #expect(d.severity == .critical && d.message.contains("gave up after 30.0 s"))
            #expect(d.message.hasSuffix("Android gives up on a direct connect after 30 s (DIRECT_CONNECT_TIMEOUT): the app saw GATT 133."))
        }

        @Test func theDeviceAddedATimeoutBeforeAndRemovedIsTheOneThatGaveUp() throws {
            // blueprobe moto g04s: 04:da:28:4d:cd:62 added at 1094 (556.26 s), cancel 1261 (586.24 s), removed 1266.
            var add = 0, remove = 0
            var b = Self.android
            add = b.nextFrame
            b = Self.acceptList(b, .leAddDeviceToFilterAcceptList)
            b = Self.attempt(b, seconds: 30) {
                remove = $0.nextFrame
                return Self.acceptList($0, .leRemoveDeviceFromFilterAcceptList)
            }
            let d = try #require(try RuleTest.diagnose(b).of("CE-01").first)
            #expect(d.severity == .critical && d.device == RuleTest.peerText)
            #expect(d.message.hasPrefix("Connecting to \(RuleTest.peerText) (on the accept list) gave up after 30.0 s"), "\(d.message)")
            #expect(d.supporting.map(\.frame).contains(add) && d.supporting.map(\.frame).contains(remove))
        }

        @Test func nearMissTheStackEmptyingTheAcceptListIsNotATimeout() throws {
            // blueprobe moto g04s 2096–2111: a background connect cancelled after 26.2 s, then the three devices added at
            // 724–732 (170 s before) removed together; and one device added long before removed alone (fossibot 8519).
            let others = [BDAddress(0x0F_0F_0F_CA_9E_34), BDAddress(0x54_46_6B_CB_9F_4C), BDAddress(0xD3_93_18_C5_56_9F)]
            var three = Self.android
            for a in others { three = Self.acceptList(three, .leAddDeviceToFilterAcceptList, a) }
            three = three.at(150).createConnection(to: nil).at(176.2).createConnectionCancel().connectionFailed(
                .unknownConnectionIdentifier)
            three = others.reduce(three) { Self.acceptList($0, .leRemoveDeviceFromFilterAcceptList, $1) }
            var one = Self.acceptList(Self.android, .leAddDeviceToFilterAcceptList, others[0])
            one = one.at(300).createConnection(to: nil).at(328.4).createConnectionCancel().connectionFailed(.unknownConnectionIdentifier)
            one = Self.acceptList(one, .leRemoveDeviceFromFilterAcceptList, others[0])
            for b in [three, one] {
                let d = try #require(try RuleTest.diagnose(b).of("CE-01").first)
                #expect(d.severity == .info && d.message.contains("it stopped connecting in the background"), "\(d.message)")
            }
        }

        @Test func nearMissAnAcceptListEditRightAfterTheCancelIsNotATimeout() throws {
            // pixel8 frames 1560–1567: cancel, Connection Complete 0x02, LE Add Device To Filter Accept List 5 ms later.
            var add = 0
            let b = Self.attempt(Self.android, seconds: 30) {
                add = $0.nextFrame
                return Self.acceptList($0.at(31.005), .leAddDeviceToFilterAcceptList, BDAddress(0xC0_99_88_77_66_55))
            }
            let d = try #require(try RuleTest.diagnose(b).of("CE-01").first)
            #expect(d.severity == .info && d.supporting.map(\.frame).contains(add))
            #expect(
                d.message.contains(
                    "to add a device to the filter accept list (frame \(add)) and connect again: an accept-list edit, not a time-out"))
            // An addition after the next attempt began belongs to that attempt, not to this cancel.
            let later = Self.attempt(Self.android, seconds: 30) {
                Self.acceptList($0.createConnection(to: nil).createConnectionCancel(), .leAddDeviceToFilterAcceptList)
            }
            #expect(try RuleTest.diagnose(later).of("CE-01").map(\.severity) == [.critical])
        }

        /// LE Set Random Address for this side and its Command Complete.
        static func randomAddress(_ b: CaptureBuilder) -> CaptureBuilder {
            b.command(HCIBuild.command(.leSetRandomAddress, parameters: [0x11, 0x22, 0x33, 0x44, 0x55, 0x46]))
                .event(HCIBuild.commandComplete(.leSetRandomAddress, returnParameters: [0x00]))
        }

        @Test func aCancelToRotateTheAddressIsNotATimeoutAndTheDevicesConnectRunsFromItsAdd() throws {
            // blueprobe Echo Auto log (tshark): 04:da:28 added 17028 (21112.569 s), create 17030, cancel 17584 after 29.4 s,
            // LE Set Random Address 17589, create again 17592, cancel 17596 (30.004 s after the Add), remove 17601.
            var add = 0, rotate = 0, remove = 0
            var b = Self.android.at(0.99)
            add = b.nextFrame
            b = Self.acceptList(b, .leAddDeviceToFilterAcceptList)
            b = b.at(1).createConnection(to: nil).at(30.43).createConnectionCancel().connectionFailed(.unknownConnectionIdentifier)
            rotate = b.nextFrame
            b = Self.randomAddress(b.at(30.47))
            b = b.at(30.95).createConnection(to: nil).at(30.995).createConnectionCancel().connectionFailed(.unknownConnectionIdentifier)
            remove = b.nextFrame
            b = Self.acceptList(b.at(31.0), .leRemoveDeviceFromFilterAcceptList)
            let found = try RuleTest.diagnose(b).of("CE-01")
            #expect(found.count == 2, "\(found.map(\.message))")
            let routine = try #require(found.first { $0.severity == .info })
            #expect(routine.supporting.map(\.frame).contains(rotate))
            #expect(
                routine.message.contains("to give itself a new random address (LE Set Random Address, frame \(rotate))"),
                "\(routine.message)")
            let gaveUp = try #require(found.first { $0.severity == .critical })
            #expect(gaveUp.device == RuleTest.peerText)
            #expect(
                gaveUp.message.hasPrefix("Connecting to \(RuleTest.peerText) (on the accept list) gave up after 30.0 s"),
                "\(gaveUp.message)")
            #expect(gaveUp.supporting.map(\.frame).contains(add) && gaveUp.supporting.map(\.frame).contains(remove))
        }

        @Test func nearMissAShortAttemptWhoseRemovedDeviceWasAddedJustBeforeIsNoGiveUp() throws {
            // The app cancels a 2 s connect and the stack removes the device it added for it: no time-out ran.
            var b = Self.acceptList(Self.android.at(0.99), .leAddDeviceToFilterAcceptList)
            b = b.at(1).createConnection(to: nil).at(3).createConnectionCancel().connectionFailed(.unknownConnectionIdentifier)
            b = Self.acceptList(b.at(3.01), .leRemoveDeviceFromFilterAcceptList)
            #expect(try RuleTest.diagnose(b).of("CE-01").isEmpty)
        }

        @Test func nearMissIOSNeverTimesOutAConnectSoItsCancelsAreNotGATT133() throws {
            // Core Bluetooth's connect has no time-out: the bafang iPhone's background cancels (29.2 s and others).
            let b = Self.attempt(CaptureBuilder(), seconds: 30)
            let d = try #require(try Self.diagnose(notes: Self.iPhone, b).of("CE-01").first)
            #expect(
                d.severity == .info && d.message.contains("iOS's connection attempts never time out") && !d.message.contains("GATT 133"))
        }

        @Test func withoutANamedPlatformTheGiveUpIsToldWithoutAndroidsWords() throws {
            let d = try #require(try RuleTest.diagnose(Self.attempt(CaptureBuilder(), seconds: 30)).of("CE-01").first)
            #expect(d.severity == .critical && !d.message.contains("GATT 133") && !d.message.contains("Android"))
        }

        // MARK: HH-04: refusals during the platform's initialisation

        @Test func btstacksSynchronousFlowControlProbeRefusedIsContext() throws {
            // pklg-btstack-be_hfp-hf-ssp-cvsd-esco-16k-sco.pklg frame 89: refused 0x11, the stack goes on.
            let b = CaptureBuilder().commandRefusedByComplete(
                .writeSynchronousFlowControlEnable, parameters: [0x01], status: .unsupportedFeatureOrParameter)
            let d = try #require(try Self.diagnose(notes: ["hci.c.2862: hci_power_control: 1, current mode 0"], b).of("HH-04").first)
            #expect(d.severity == .info && d.causes.first?.hasPrefix("BTstack sends it while it initialises the controller") == true)
            // Near miss: the same refusal in a log that names no platform is still a warning.
            #expect(try RuleTest.diagnose(b).of("HH-04").map(\.severity) == [.warning])
        }

        /// OPPO Enco log frames 273–276: Android writes the BR/EDR link's supervision timeout (5000 ms) after the
        /// connection; the second write is refused 0x0C, the link goes on. A declared row (link tuning), not this log.
        @Test func androidsLinkSupervisionTimeoutRefusedIsContext() throws {
            let refused = Self.android.commandRefusedByComplete(
                .writeLinkSupervisionTimeout, parameters: [0x02, 0x00, 0x40, 0x1F], status: .commandDisallowed)
            let d = try #require(try RuleTest.diagnose(refused).of("HH-04").first)
            #expect(d.severity == .info && d.causes.first?.hasPrefix("Android tunes each link with it and goes on without it") == true)
            #expect(d.message.hasSuffix("; Android tunes links with it and goes on without it: the link keeps the value already in force."))
            // Near miss: the same refusal where no platform is named, or another command the row does not list, stays a warning.
            let unnamed = CaptureBuilder().commandRefusedByComplete(
                .writeLinkSupervisionTimeout, parameters: [0x02, 0x00, 0x40, 0x1F], status: .commandDisallowed)
            #expect(try RuleTest.diagnose(unnamed).of("HH-04").map(\.severity) == [.warning])
            let other = Self.android.commandRefusedByComplete(.leConnectionUpdate, parameters: [0x40, 0x00], status: .commandDisallowed)
            #expect(try RuleTest.diagnose(other).of("HH-04").map(\.severity) == [.warning])
        }

        @Test func readPeerResolvableAddressAnswered0x02IsTheSpecsAnswer() throws {
            let address = [0x01] + RuleTest.peer.bytes
            let prescribed = CaptureBuilder().commandRefusedByComplete(
                .leReadPeerResolvableAddress, parameters: address, status: .unknownConnectionIdentifier)
            let d = try #require(try RuleTest.diagnose(prescribed).of("HH-04").first)
            #expect(d.severity == .info && d.causes == [HH04CommandErrors.prescribedCause])
            // Refused as disallowed (the Ph0wn Nespresso log, 1937: the Galaxy S7 edge asks right after reconnecting and
            // encrypts from its bond 10 ms later): a question left unanswered, nothing changed, info.
            let disallowed = CaptureBuilder().commandRefusedByComplete(
                .leReadPeerResolvableAddress, parameters: address, status: .commandDisallowed)
            let q = try #require(try RuleTest.diagnose(disallowed).of("HH-04").first)
            #expect(q.severity == .info && q.causes == [HH04CommandErrors.unansweredQueryCause])
            // Near miss: refused for invalid parameters, it is no such answer.
            let invalid = CaptureBuilder().commandRefusedByComplete(
                .leReadPeerResolvableAddress, parameters: address, status: .invalidCommandParameters)
            #expect(try RuleTest.diagnose(invalid).of("HH-04").map(\.severity) == [.warning])
        }
    }
}
