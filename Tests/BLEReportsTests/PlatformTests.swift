import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Foundation
import Testing

/// Issue 48 scope 1: the platform named from the log (PacketLogger notes, Android's vendor commands, btmon's notes and
/// index records), with provenance, on the first screen of `diagnose`; the behaviours table's rows hold their values.
@Suite struct PlatformTests {
    static let start: Int64 = 1_700_000_000_000_000

    static func note(_ text: String, frame: Int) -> OwnedRecord {
        OwnedRecord(
            frame: frame, timestamp: Timestamp(microseconds: start + Int64(frame) * 1000), direction: .unknown, kind: .text,
            bytes: Array(text.utf8))
    }

    /// A PacketLogger file: `notes` first, then the records `b` built.
    static func packetLogger(notes: [String], _ b: CaptureBuilder = CaptureBuilder()) throws -> CaptureFile {
        let texts = notes.enumerated().map { note($1, frame: $0 + 1) }
        return try CaptureFile.open(bytes: CaptureWriter.packetLogger(texts + b.records, bigEndian: false), name: "phone.pklg")
    }

    static func platform(_ capture: CaptureFile) -> PlatformIdentity? { DiagnosisReport.analyze(capture).result.platform }

    /// The first notes of an iPhone's PacketLogger log (pklg-ios-le_bafang-iphone18-sysdiagnose-5h-disc-16-08.pklg).
    static let iPhoneNotes = [
        "Product: iPhone18,2", "Firmware Version: MAC FW Version: 1.542.0.0, PHY FW Version: 2.1.527.0",
        "Bluetooth Host: MobileBluetooth-195.7.1.2", "Software: Version 26.5.1 (Build 23F81)",
    ]

    @Test func anIPhonesPacketLoggerNotesNameIOSSeenWithVersionAndDevice() throws {
        let p = try #require(Self.platform(try Self.packetLogger(notes: Self.iPhoneNotes)))
        #expect(p.platform == .apple && p.detail == "iOS 26.5.1, iPhone18,2")
        #expect(p.provenance == .seen(frame: 1, what: "PacketLogger note \"Product: iPhone18,2\""))
        #expect(p.summary == "iOS 26.5.1, iPhone18,2 (seen: PacketLogger note \"Product: iPhone18,2\" at frame 1)")
    }

    /// An older iPhone's PacketLogger log (iOS 12.2, the audiostream capture's notes at 230–231) names the software and
    /// the firmware but no product: Apple's, seen, with the version; iOS or macOS, which 12.2 alone does not tell.
    @Test func anOlderPacketLoggerSoftwareNoteNamesAppleWithItsVersion() throws {
        let notes = ["Firmware Version: BCM43452A2_16.1.123.445_Hans_OS_USI_20180622.hcd", "Software: Version 12.2 (Build 16E227)"]
        let p = try #require(Self.platform(try Self.packetLogger(notes: notes)))
        #expect(p.platform == .apple && p.detail == "iOS or macOS 12.2 (Build 16E227)")
        #expect(p.provenance == .seen(frame: 2, what: "PacketLogger note \"Software: Version 12.2 (Build 16E227)\""))
        // Near miss: the firmware note alone names no platform beyond the format's.
        let firmware = try #require(Self.platform(try Self.packetLogger(notes: [notes[0]])))
        #expect(firmware.seen == nil)
    }

    @Test func nearMissAPacketLoggerFileWithoutNotesIsAppleOnlyInferred() throws {
        let b = CaptureBuilder().connect(handle: 0x40)
        let p = try #require(Self.platform(try Self.packetLogger(notes: [], b)))
        #expect(
            p.platform == .apple && p.detail == "iOS/macOS, or BTstack" && p.provenance == .inferred(what: "PacketLogger format, no notes"))
        #expect(p.seen == nil)  // shown, not acted on
    }

    @Test func btstackLogLinesNameBTstackNotApple() throws {
        // pklg-btstack-be_hfp-hf-ssp-cvsd-esco-16k-sco.pklg's first note, and the 2014 capture's older form.
        for line in ["hci_transport_h2_libusb.c.1397: registering packet handler", "hci_power_control: 1, current mode 0\n"] {
            let p = try #require(Self.platform(try Self.packetLogger(notes: ["registering packet handler", line])))
            #expect(p.platform == .btstack && p.provenance.frame == 2)
        }
        // Near miss: Apple's scan-filter notes have colons and dots but no `file.c.line:` head.
        for text in ["=== BLE Scan Filter Configuration [A:4 R:7] ===", "Matching Addresses (4):", "  P(0):44:09:DA:5C:4F:AF", "x.c.: y"] {
            #expect(!PlatformClues.isBTstackLine(text), "\(text)")
        }
    }

    @Test func androidsVendorCapabilitiesCommandNamesAndroidSeenAtItsFrame() throws {
        var b = CaptureBuilder().reset()
        let frame = b.nextFrame
        b = b.vendorCommand(HCICommand(ogf: 0x3F, ocf: 0x153))
        let p = try #require(Self.platform(try b.captureFile()))
        #expect(p.platform == .android && p.provenance == .seen(frame: frame, what: "Android LE Get Vendor Capabilities"))
        // Near miss: the same btsnoop without it (bumble and others write btsnoop too): no platform claimed.
        #expect(Self.platform(try CaptureBuilder().reset().vendorCommand(HCICommand(ogf: 0x3F, ocf: 0x01F1)).captureFile()) == nil)
    }

    /// Bluedroid's start-up (AOSP system/bt/device/src/controller.cc): Reset, Read Buffer Size, Host Buffer Size, Read
    /// Local Version, Read BD_ADDR, Read Local Supported Commands (frames 1, 3, … 11 of the robam appliance's `.cfa`, a
    /// Rockchip board's log with no Android vendor command): Android, inferred. The near misses: BlueZ's order (Reset,
    /// Read Local Features, Read Local Version, Read BD_ADDR) names nothing; a `.cfa` log holding its host's start-up
    /// without Android's commands (the Realtek headset's own log) is not called Android by its name.
    @Test func bluedroidsStartUpNamesAndroidInferredAndAnotherStartUpDoesNot() throws {
        func startUp(_ ops: [HCICommand]) -> CaptureBuilder {
            ops.reduce(CaptureBuilder()) { b, op in
                b.command(HCIBuild.command(op)).event(HCIBuild.commandComplete(op, returnParameters: [0x00]))
            }
        }
        let bluedroid: [HCICommand] = [
            .reset, .readBufferSize, HCICommand(ogf: 0x03, ocf: 0x0033), .readLocalVersionInformation, .readBDADDR,
            HCICommand(ogf: 0x04, ocf: 0x0002),
        ]
        let p = try #require(Self.platform(try startUp(bluedroid).captureFile()))
        #expect(p.platform == .android && p.summary == "Android (inferred: the start-up sequence of Android 5–12 (Bluedroid), frames 1–11)")
        let bluez: [HCICommand] = [.reset, HCICommand(ogf: 0x04, ocf: 0x0003), .readLocalVersionInformation, .readBDADDR]
        #expect(Self.platform(try startUp(bluez).captureFile()) == nil)
        let headset = startUp([.readBDADDR]).localVersion(manufacturer: ControllerManufacturer(0x005D))
        #expect(Self.platform(try headset.captureFile(name: "headset.cfa")) == nil)
        // A `.cfa` log that starts after the host's start-up keeps the name's inference.
        let midSession = try #require(Self.platform(try startUp([.readBDADDR]).captureFile(name: "phone.cfa")))
        #expect(midSession.summary == "Android (inferred: an Android .cfa snoop file name)")
    }

    /// A stack asks its own connection defaults in its first LE Create Connection: 24–40 × 1.25 ms, latency 0 and
    /// 2000 × 10 ms are Bluedroid's (AOSP bt_target.h BTM_BLE_CONN_INT_MIN_DEF, _MAX_DEF, BTM_BLE_CONN_TIMEOUT_DEF; the
    /// iot-bed and lightsapp corpus logs, frames 69 and 326, no vendor command), 42 × 10 ms BlueZ's. Near misses: one
    /// interval (bumble's Samples ask 24–24) and Android's range with another timeout (a Galaxy Tab's 700 × 10 ms)
    /// name nothing; a later create does not count, only the first.
    @Test func theFirstCreatesConnectionDefaultsNameTheirPlatformInferred() throws {
        let peer = BDAddress(0xC0_11_22_33_44_55)
        let bluedroid = try #require(
            Self.platform(try CaptureBuilder().createConnection(to: peer, interval: 24, intervalMax: 40, timeout: 2000).captureFile()))
        #expect(
            bluedroid.summary
                == "Android (inferred: the connection defaults of Android ≤ 11 (Bluedroid) in the LE Create Connection at frame 1 (30–50 ms, latency 0, timeout 20 s))"
        )
        let gd = try #require(
            Self.platform(try CaptureBuilder().createConnection(to: peer, interval: 24, intervalMax: 40, timeout: 500).captureFile()))
        #expect(gd.platform == .android && gd.summary.contains("Android 12+ (GD stack)") && gd.summary.contains("timeout 5 s"))
        let bluez = try #require(
            Self.platform(try CaptureBuilder().createConnection(to: peer, interval: 24, intervalMax: 40, timeout: 42).captureFile()))
        #expect(bluez.platform == .bluez && bluez.summary.hasSuffix("(30–50 ms, latency 0, timeout 420 ms))"))
        #expect(Self.platform(try CaptureBuilder().createConnection(to: peer, interval: 24, timeout: 500).captureFile()) == nil)
        #expect(
            Self.platform(try CaptureBuilder().createConnection(to: peer, interval: 24, intervalMax: 40, timeout: 700).captureFile()) == nil
        )
        let later = CaptureBuilder().createConnection(to: peer, interval: 24, timeout: 500)
            .createConnection(to: peer, interval: 24, intervalMax: 40, timeout: 2000)
        #expect(Self.platform(try later.captureFile()) == nil)
    }

    @Test func btmonsSystemNoteNamesBlueZWithTheKernel() throws {
        // btmon-w-dl2001_batteread-rpi-notes-only.btsnoop's first record.
        let records = [
            Self.note("Linux version 6.6.31+rpt-rpi-2712 (aarch64)", frame: 1), Self.note("Bluetooth subsystem version 2.22", frame: 2),
        ]
        let capture = try CaptureFile.open(bytes: CaptureWriter.btsnoop(records, datalink: BTSnoop.datalinkMonitor), name: "btmon.snoop")
        let p = try #require(Self.platform(capture))
        #expect(p.platform == .bluez && p.detail == "BlueZ (Linux 6.6.31+rpt-rpi-2712)" && p.provenance.frame == 1)
    }

    @Test func diagnoseNamesThePlatformOnTheFirstScreenAndInJSON() throws {
        let capture = try Self.packetLogger(notes: Self.iPhoneNotes, CaptureBuilder().connect(handle: 0x40))
        let report = DiagnosisReport.analyze(capture)
        let lines = report.text(terminal: Terminal(colors: false)).split(separator: "\n", omittingEmptySubsequences: false)
        let index = try #require(lines.firstIndex { $0.hasPrefix("Platform: ") })
        let story = try #require(lines.firstIndex { $0.hasPrefix("Story:") })
        #expect(
            index < story && lines[index] == "Platform: iOS 26.5.1, iPhone18,2 (seen: PacketLogger note \"Product: iPhone18,2\" at frame 1)"
        )
        let json = try #require(try JSONSerialization.jsonObject(with: Data(report.json.utf8)) as? [String: Any])
        let platform = try #require(json["platform"] as? [String: Any])
        #expect(platform["name"] as? String == "iOS/macOS" && platform["provenance"] as? String == "seen" && platform["frame"] as? Int == 1)
    }

    /// The HTML report's summary names the platform as `diagnose` does, from the same ``DiagnosisResult/platform``: a
    /// PacketLogger log with the iPhone's notes has it after the diagnosis (the answer first, as `diagnose` prints it);
    /// one with no platform evidence has none.
    @Test func theHTMLSummaryNamesThePlatformAsDiagnoseDoes() throws {
        let capture = try Self.packetLogger(notes: Self.iPhoneNotes, CaptureBuilder().connect(handle: 0x40))
        let diagnose = DiagnosisReport.analyze(capture).text(terminal: Terminal(colors: false)).split(separator: "\n")
        let line = try #require(diagnose.first { $0.hasPrefix("Platform: ") }).dropFirst("Platform: ".count)
        // A capture file is read once: the report reads its own copy.
        let file = Report.analyze(capture: try Self.packetLogger(notes: Self.iPhoneNotes, CaptureBuilder().connect(handle: 0x40)))
        let topics = file.summary.map(\.topic).filter { $0 != "story" }
        #expect(topics.prefix(2) == ["diagnosis", "platform"])
        let item = try #require(file.summary.first { $0.topic == "platform" })
        #expect(item.text == String(line) && item.frame == 1)
        let html = HTMLReport.render(Report(files: [file], options: ReportOptions()))
        #expect(html.contains("<li class=\"st-info\"><b>platform</b>: iOS 26.5.1, iPhone18,2 (seen: PacketLogger note"))
        // Near miss: a plain btsnoop of one LE link names no platform, and the summary has no platform line.
        let plain = Report.analyze(capture: try CaptureBuilder().connect(handle: 0x40).captureFile(name: "plain.btsnoop"))
        #expect(plain.diagnosis.platform == nil && !plain.summary.contains { $0.topic == "platform" })
    }

    // MARK: the table

    @Test func everyRowCitesItsSourceAndOnePlatformHasOneRowPerBehaviourAndVersion() {
        for row in PlatformTable.rows {
            #expect(row.source.count > 20, "\(row.platform) \(row.behaviour) has no citation")
            let same = PlatformTable.rows.filter {
                $0.platform == row.platform && $0.behaviour == row.behaviour && $0.versions == row.versions
            }
            #expect(same.count == 1, "\(row.platform) \(row.behaviour) \(row.versions) twice")
        }
        // The values the rules read, as the cited sources give them.
        #expect(PlatformTable.fact(.supervisionTimeout, for: .apple)?.value == .milliseconds(720))
        #expect(PlatformTable.fact(.supervisionTimeout, for: .bluez)?.value == .milliseconds(420))  // 0x002a × 10 ms
        #expect(PlatformTable.fact(.supervisionTimeout, for: .android)?.value == .milliseconds(5000))  // 0x01F4 × 10 ms
        #expect(PlatformTable.fact(.directConnectTimeout, for: .android)?.value == .milliseconds(30000))
        #expect(PlatformTable.fact(.directConnectTimeout, for: .apple)?.value == .never)
        #expect(PlatformTable.listing(.writeSynchronousFlowControlEnable, .initialisationProbe, for: .btstack) != nil)
        #expect(PlatformTable.listing(.writeSynchronousFlowControlEnable, .initialisationProbe, for: .android) == nil)
        #expect(PlatformTable.listing(.writeLinkSupervisionTimeout, .linkTuning, for: .android) != nil)
        #expect(PlatformTable.listing(.writeLinkSupervisionTimeout, .linkTuning, for: .apple) == nil)
    }

    /// The iOS rows were measured on this capture: every attempt asks 10–30 ms, latency 0, 720 ms, and every
    /// connection that completed runs with 720 ms.
    @Test func theIOSRowsHoldOnTheIPhoneCaptureTheyWereMeasuredOn() throws {
        guard let dir = TestEnvironment.corpusDirectory else { return }
        let path = dir + "/pklg-ios-le_bafang-iphone18-sysdiagnose-5h-disc-16-08.pklg"
        guard FileManager.default.fileExists(atPath: path) else { return }
        let capture = try CaptureFile.open(path: path)
        let report = DiagnosisReport.analyze(capture)
        #expect(report.result.platform?.detail == "iOS 26.5.1, iPhone18,2")
        let analysis = CaptureAnalysis.analyze(try CaptureFile.open(path: path), options: AnalyzerOptions(timeline: false))
        let first = analysis.connections.compactMap { $0.link.parameters.changes.first?.value }
        // tshark: 20 LE Enhanced Connection Completes with status 0, each at interval 24, latency 0, timeout 72.
        #expect(first.filter { $0.interval == 24 && $0.latency == 0 && $0.timeout == 72 }.count == 20)
    }
}
