import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Testing

@testable import BLEDiagnosis

/// HH-01 … HH-07: command time-outs, hardware errors, stack restarts, refused commands, quality warnings, handles host
/// and controller disagree on, several controllers; each on a capture that shows it and on the near miss that must stay
/// quiet (a vendor command refused with Unknown Command, a reset at bring-up…).
extension DiagnosisRuleTests {
    @Suite struct Controller {
        static func connected() -> CaptureBuilder { CaptureBuilder().connect(handle: 0x40, peer: RuleTest.peer) }
        static let readVersion = HCIBuild.command(.readRemoteVersionInformation(HCIConnectionHandle(handle: 0x40)))
        /// Android's LE Get Vendor Capabilities (0xFD53), a vendor command.
        static let vendorCapabilities = HCICommand(ogf: 0x3F, ocf: 0x153)
        static let addToAcceptList = HCICommand(ogf: 0x08, ocf: 0x0011)

        // MARK: HH-01 command time-out

        @Test func aCommandNeverAnsweredWhileTheCaptureGoesOn() throws {
            var b = Self.connected().at(1)
            let command = b.nextFrame
            b = b.command(Self.readVersion).at(4).completed(handle: 0x40, count: 0)
            let r = try RuleTest.diagnose(b)
            let d = try #require(r.of("HH-01").first)
            #expect(d.severity == .critical && d.frame == command && d.supporting.isEmpty)
            #expect(
                d.message
                    == "The controller stopped answering commands: Read Remote Version Information (frame \(command)) was never answered.")
        }

        @Test func aCommandAnsweredLateThenTheStackResetTheController() throws {
            var b = CaptureBuilder()
            let command = b.nextFrame
            b = b.command(Self.readVersion).at(2.5)
            let answer = b.nextFrame
            b = b.event(HCIBuild.commandStatus(.readRemoteVersionInformation)).at(5)
            let reset = b.nextFrame
            b = b.reset()
            let d = try #require(try RuleTest.diagnose(b).of("HH-01").first)
            #expect(d.frame == command && d.supporting.map(\.frame) == [reset])
            #expect(
                d.message.contains(
                    "was answered only after 2.50 s (frame \(answer)), and the stack reset the controller at frame \(reset)."))
        }

        enum Answered: String, CaseIterable {
            case within1s, captureEndsSoon, hostNumberOfCompletedPackets, vendorUnknownCommandFFFF
        }

        @Test(arguments: Answered.allCases)
        func nearMissACommandAnsweredInTimeOrNeverToBeAnswered(_ kind: Answered) throws {
            var b = Self.connected()
            switch kind {
            case .within1s: b = b.command(Self.readVersion).at(1).event(HCIBuild.commandStatus(.readRemoteVersionInformation)).at(5)
            case .captureEndsSoon: b = b.command(Self.readVersion).at(1)
            case .hostNumberOfCompletedPackets:
                // Host Number Of Completed Packets gets no Command Complete unless it fails (Core Spec Vol 4, Part E, 7.3.40).
                b = b.command(HCIBuild.command(HCICommand(ogf: 0x03, ocf: 0x0035), parameters: [0x01, 0x40, 0x00, 0x01, 0x00])).at(5)
            case .vendorUnknownCommandFFFF:
                // Qualcomm answers a vendor command it does not know with a Command Complete for opcode 0xFFFF.
                b = b.command(HCIBuild.command(Self.vendorCapabilities))
                    .event(HCIBuild.commandComplete(HCICommand(rawValue: 0xFFFF), returnParameters: [HCIStatus.unknownCommand.rawValue]))
                    .at(5)
            }
            b = b.completed(handle: 0x40, count: 0)
            let r = try RuleTest.diagnose(b)
            #expect(r.of("HH-01").isEmpty)
            if kind == .vendorUnknownCommandFFFF {
                // The host probing for a feature: context, naming the command the answer belongs to.
                let d = try #require(r.of("HH-04").first)
                #expect(d.severity == .info && d.supporting.map(\.frame) == [2] && d.message.contains("Android LE Get Vendor Capabilities"))
            }
        }

        // MARK: HH-02 hardware error

        @Test func aHardwareErrorWithALinkUp() throws {
            var b = Self.connected().notify(handle: 0x25, [1], connection: 0x40)
            let error = b.nextFrame
            b = b.hardwareError(code: 0x03)
            let d = try #require(try RuleTest.diagnose(b).of("HH-02").first)
            #expect(d.severity == .critical && d.frame == error)
            #expect(
                d.message
                    == "The controller reported Hardware Error 0x03 (frame \(error)); the stack resets it and all links drop (1 open).")
        }

        @Test func nearMissACommandFailingWithHardwareFailure() throws {
            let b = Self.connected().commandRefusedByComplete(
                Self.addToAcceptList, parameters: [0x01] + [UInt8](repeating: 0, count: 6), status: .hardwareFailure)
            let r = try RuleTest.diagnose(b)
            #expect(r.of("HH-02").isEmpty && r.of("HH-04").count == 1)
        }

        // MARK: HH-03 stack restarted

        @Test func aResetWithLinksUpDropsThemSilently() throws {
            var b = CaptureBuilder()
            let first = b.nextFrame
            b = b.connect(handle: 0x40, peer: RuleTest.peer)
            let second = b.nextFrame
            b = b.connect(handle: 0x41, peer: RuleTest.otherPeer).notify(handle: 0x25, [1], connection: 0x40).at(5)
            let reset = b.nextFrame
            b = b.reset()
            let d = try #require(try RuleTest.diagnose(b).of("HH-03").first)
            #expect(d.severity == .error && d.frame == reset && d.supporting.map(\.frame) == [first, second])
            #expect(
                d.message
                    == "The Bluetooth stack restarted at frame \(reset) (HCI Reset) with 2 links up; they dropped without disconnection events."
            )
        }

        @Test(arguments: [false, true])
        func nearMissAResetAtBringUpOrAfterTheLinksEnded(_ afterLinks: Bool) throws {
            var b = CaptureBuilder()
            if afterLinks { b = b.connect(handle: 0x40, peer: RuleTest.peer).at(2).disconnect(handle: 0x40) }
            b = b.reset().connect(handle: 0x41, peer: RuleTest.otherPeer)
            #expect(try RuleTest.diagnose(b).of("HH-03").isEmpty)
        }

        // MARK: HH-04 command errors

        @Test func theSameRefusalFoldsIntoOneLine() throws {
            var b = Self.connected()
            var refusals: [Int] = []
            for i in 0..<3 {
                let params = [0x01] + HCIBuild.l2cap(cid: 0, payload: []).prefix(0) + [UInt8](repeating: UInt8(i), count: 6)
                b = b.commandRefusedByComplete(Self.addToAcceptList, parameters: params, status: .memoryCapacityExceeded)
                refusals.append(b.records.count)
            }
            let found = try RuleTest.diagnose(b).of("HH-04")
            let d = try #require(found.first)
            #expect(found.count == 1 && d.count == 3 && d.occurrences == refusals && d.severity == .warning)
            #expect(d.supporting.map(\.frame) == [refusals[0] - 1])
            #expect(
                d.message.hasSuffix(
                    "(0x07 Memory Capacity Exceeded, frame \(refusals[0])): the controller's table is full (filter accept list or resolving list)."
                ))
        }

        @Test func aConnectionUpdateDisallowedIsACommandError() throws {
            var b = Self.connected()
            let update = LEConnectionUpdate(
                handle: 0x40, connection: LEConnectionParameters(intervalMin: 12, intervalMax: 24, maxLatency: 0, supervisionTimeout: 400))
            b = b.command(HCIBuild.command(.leConnectionUpdate(update)))
            let status = b.nextFrame
            b = b.event(HCIBuild.commandStatus(.leConnectionUpdate, status: .commandDisallowed))
            let r = try RuleTest.diagnose(b)
            #expect(r.of("HH-04").map(\.frame) == [status])
            #expect(r.of("LP-05").isEmpty)
        }

        @Test func nearMissRefusalsOtherRulesOrNobodyNeedToExplain() throws {
            // Cancelling an attempt that just completed: a race every stack has.
            let cancel = Self.connected().createConnectionCancel(status: .commandDisallowed)
            #expect(try RuleTest.diagnose(cancel).of("HH-04").isEmpty)
            // A create refused is CE-03's.
            let create = CaptureBuilder().createConnection(to: RuleTest.peer, status: .commandDisallowed)
            #expect(try RuleTest.diagnose(create).of("HH-04").isEmpty)
            // A vendor command the controller does not know: the host probing, context only.
            let vendor = CaptureBuilder().commandRefusedByComplete(Self.vendorCapabilities, status: .unknownCommand)
            #expect(try RuleTest.diagnose(vendor).of("HH-04").map(\.severity) == [.info])
        }

        /// Learning what the controller supports (a feature page it does not have, an event mask with events it does not
        /// know) and a vendor feature it declines lose nothing: info (issue 35 point 4). Android's APCF (0xFD57) refused
        /// with 0x17 is the aploadfile corpus log's (frames 206, 249, 280).
        @Test(arguments: [
            (HCICommand(ogf: 0x04, ocf: 0x0004), [UInt8(0x02)], HCIStatus(rawValue: 0x30)),
            (HCICommand.leSetEventMask, [UInt8](repeating: 0x3F, count: 1) + [UInt8](repeating: 0, count: 7), HCIStatus(rawValue: 0x20)),
            (HCICommand(ogf: 0x3F, ocf: 0x157), [UInt8(0x01), 0x01, 0x00], HCIStatus(rawValue: 0x17)),
        ])
        func probingAndVendorRefusalsAreInfo(_ op: HCICommand, _ parameters: [UInt8], _ status: HCIStatus) throws {
            var b = CaptureBuilder()
            let command = b.nextFrame
            b = b.commandRefusedByComplete(op, parameters: parameters, status: status)
            let d = try #require(try RuleTest.diagnose(b).of("HH-04").first)
            #expect(d.severity == .info && d.frame == command + 1 && d.supporting.map(\.frame) == [command])
        }

        // MARK: HH-05 quality warning

        @Test(arguments: [
            (BQRReportID.approachingLSTO, "warned that the link to C0:11:22:33:44:55 was about to time out"),
            (.connectFail, "reported a failed connection to C0:11:22:33:44:55"),
            (.a2dpAudioChoppy, "reported"),
        ])
        func aQualityReportThatWarns(_ report: BQRReportID, _ what: String) throws {
            var b = Self.connected()
            let frame = b.nextFrame
            b = b.qualityReport(
                BluetoothQualityReport(
                    reportID: report, linkQuality: BQRLinkQuality(handle: 0x40, rssi: -92, snr: 7, retransmissionCount: 30, noRxCount: 14)))
            let d = try #require(try RuleTest.diagnose(b).of("HH-05").first)
            #expect(d.severity == .warning && d.frame == frame && d.device == RuleTest.peerText)
            #expect(d.message.hasPrefix("The controller \(what)"))
            #expect(d.message.hasSuffix("(frame \(frame)): RSSI -92 dBm, SNR 7 dB, 14 no-RX, 30 retransmissions."))
        }

        @Test func aReportOnALinkThatReceivedNothingDoesNotQuoteAnRSSI() throws {
            let b = Self.connected().qualityReport(
                BluetoothQualityReport(reportID: .approachingLSTO, linkQuality: BQRLinkQuality(handle: 0x40, rssi: -127)))
            let d = try #require(try RuleTest.diagnose(b).of("HH-05").first)
            #expect(d.message.contains("no packet received to measure (RSSI −127, the bottom of the scale)") && !d.message.contains("SNR"))
        }

        @Test func rootInflammationIsAFatalControllerError() throws {
            var b = Self.connected()
            let frame = b.nextFrame
            b = b.qualityReport(BluetoothQualityReport(reportID: .rootInflammation, linkQuality: nil, remaining: [0x01, 0x2C]))
            let d = try #require(try RuleTest.diagnose(b).of("HH-05").first)
            #expect(d.severity == .error && d.frame == frame)
            #expect(d.message.contains("root inflammation") && d.message.contains("0x01") && d.message.contains("0x2c"))
        }

        @Test func nearMissMonitoringReports() throws {
            var b = Self.connected()
            for report in [BQRReportID.monitorMode, .energyMonitor] {
                b = b.qualityReport(
                    BluetoothQualityReport(
                        reportID: report, linkQuality: report == .monitorMode ? BQRLinkQuality(handle: 0x40, rssi: -60) : nil))
            }
            #expect(try RuleTest.diagnose(b).of("HH-05").isEmpty)
        }

        // MARK: HH-06 handle disagreement

        @Test func trafficOnAHandleAfterItsDisconnection() throws {
            var b = Self.connected()
            let end = b.nextFrame
            b = b.disconnect(handle: 0x40)
            let traffic = b.nextFrame
            b = b.notify(handle: 0x25, [1], connection: 0x40)
            let d = try #require(try RuleTest.diagnose(b).of("HH-06").first)
            #expect(d.severity == .warning && d.frame == traffic && d.supporting.map(\.frame) == [end])
            #expect(d.message.hasPrefix("Data came on handle 0x0040 at frame \(traffic), after its connection ended at frame \(end)"))
        }

        @Test func nearMissAHandleReusedByANewConnection() throws {
            let b = Self.connected().disconnect(handle: 0x40).connect(handle: 0x40, peer: RuleTest.otherPeer)
                .notify(handle: 0x25, [1], connection: 0x40)
            #expect(try RuleTest.diagnose(b).of("HH-06").isEmpty)
        }

        // MARK: HH-07 several controllers

        /// A Linux monitor capture (btsnoop datalink 2001): `controllers` adapters, each naming its maker.
        static func monitorCapture(_ controllers: [ControllerManufacturer], indices: [UInt16]? = nil) throws -> CaptureFile {
            var records: [OwnedRecord] = []
            for (index, maker) in controllers.enumerated() {
                let b = CaptureBuilder().localVersion(manufacturer: maker)
                for var r in b.records {
                    r.controllerIndex = indices?[index] ?? UInt16(index)
                    r.frame = records.count + 1
                    records.append(r)
                }
            }
            return try CaptureFile.open(bytes: CaptureWriter.btsnoop(records, datalink: BTSnoop.datalinkMonitor), name: "monitor.btsnoop")
        }

        @Test func aCaptureWithTwoControllers() throws {
            let r = DiagnosisReport.analyze(try Self.monitorCapture([.intel, .realtek])).result
            let d = try #require(r.of("HH-07").first)
            #expect(d.severity == .info && d.frame == 3 && d.supporting.map(\.frame) == [1])
            #expect(
                d.message == "The capture holds 2 controllers (hci0 (Intel), hci1 (Realtek)): connections are kept apart by controller.")
        }

        @Test func nearMissOneController() throws {
            #expect(DiagnosisReport.analyze(try Self.monitorCapture([.intel])).result.of("HH-07").isEmpty)
        }

        /// A pcapng with an Ethernet interface beside the HCI one (HackenBT's Ubertooth capture: interface 1 carries DNS
        /// and ARP, tshark `frame.interface_id == 1`): one controller, and HH-07 stays quiet. Two HCI interfaces are two.
        @Test func nearMissAnEthernetInterfaceIsNoController() throws {
            func capture(secondLinkType: UInt16, second: [UInt8]) throws -> CaptureFile {
                var b = PcapngBuilder()
                b.section(bigEndian: false)
                b.interface(linkType: 187)
                b.interface(linkType: secondLinkType)
                b.enhancedPacket(interface: 0, units: 1_000, data: [0x01, 0x03, 0x0C, 0x00])
                b.enhancedPacket(interface: 1, units: 2_000, data: second)
                b.enhancedPacket(interface: 0, units: 3_000, data: [0x04, 0x0E, 0x04, 0x01, 0x03, 0x0C, 0x00])
                return try CaptureFile.open(bytes: b.bytes, name: "two-interfaces.pcapng")
            }
            let ethernet = [UInt8](repeating: 0xFF, count: 6) + [0x02, 0, 0, 0, 0, 1, 0x08, 0x06] + [UInt8](repeating: 0, count: 28)
            #expect(DiagnosisReport.analyze(try capture(secondLinkType: 1, second: ethernet)).result.of("HH-07").isEmpty)
            let hci = try capture(secondLinkType: 187, second: [0x01, 0x03, 0x0C, 0x00])
            #expect(DiagnosisReport.analyze(hci).result.of("HH-07").map(\.frame) == [2])
        }

        /// Index 0xFFFF is the monitor's "no controller" (system notes, control channel: the batteread log's frame 6).
        @Test func nearMissTheMonitorsOwnIndexIsNoController() throws {
            let file = try Self.monitorCapture([.intel, .realtek], indices: [0, 0xFFFF])
            #expect(DiagnosisReport.analyze(file).result.of("HH-07").isEmpty)
        }
    }
}
