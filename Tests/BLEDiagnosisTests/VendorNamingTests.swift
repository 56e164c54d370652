import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLEReports
import BLETestSupport
import Foundation
import Testing

/// Vendor-specific commands and events named by the controller's maker: captures built from typed packets, checked
/// against the public tables and against tshark (which names Broadcom and Intel codes once it has seen Read Local
/// Version Information, as blescope does), and the real Android logs of the public corpus.
@Suite struct VendorNamingTests {
    static func timeline(_ capture: CaptureFile) -> (Analyzer, [Int: [TimelineEvent]]) {
        var byFrame: [Int: [TimelineEvent]] = [:]
        let analyzer = Analyzer.analyze(capture, configure: { a in a.onEvent = { byFrame[$0.frame, default: []].append($0) } })
        return (analyzer, byFrame)
    }

    static func hciName(_ events: [Int: [TimelineEvent]], _ frame: Int) -> String? {
        events[frame]?.first { $0.layer == .hci }?.name
    }

    /// An Intel controller: a vendor command before Read Local Version Information stays raw (nothing said who made
    /// the controller yet), the same command after it is Intel's; events by Intel's table; the Android host's
    /// commands whatever the maker; codes no table names stay raw with their code.
    @Test func intelControllerFromTypedPackets() throws {
        let b = CaptureBuilder()
            .vendorCommand(HCICommand(0xFC05), returning: [0x00] + [UInt8](repeating: 0, count: 9))  // 1, 2
            .localVersion(manufacturer: .intel)  // 3, 4
            .vendorCommand(HCICommand(0xFC05), returning: [0x00] + [UInt8](repeating: 0, count: 9))  // 5, 6
            .vendorCommand(HCICommand(0xFC4E), [0xFF, 0xFF, 0xFF, 0xFF])  // 7, 8: Broadcom's Launch RAM, nothing for Intel
            .vendorCommand(HCICommand(0xFD57), [0x01, 0x00], returning: [0x00, 0x01])  // 9, 10
            .vendorCommand(HCICommand(0xFC1E), [0x00], returning: [0x00, 0x00])  // 11, 12: Intel's Microsoft extension
            .event(HCIBuild.event(.vendor, parameters: [0x02, 0x00, 0x01, 0x02, 0x03, 0x04, 0x05]))  // 13
            .event(HCIBuild.event(.vendor, parameters: [0x87, 0x80, 0x03, 0x01, 0x01, 0x00]))  // 14
            .event(HCIBuild.event(.vendor, parameters: [0xB4] + [UInt8](repeating: 0, count: 62)))  // 15
        let (analyzer, events) = Self.timeline(try b.captureFile())
        #expect(Self.hciName(events, 1) == "Vendor Command (OCF 0x0005)")
        #expect(Self.hciName(events, 2) == "Command Complete (Vendor Command (OCF 0x0005))")
        #expect(Self.hciName(events, 5) == "Intel Read Version")
        #expect(Self.hciName(events, 6) == "Command Complete (Intel Read Version)")
        #expect(events[6]?.first?.summary.hasPrefix("opcode=Intel Read Version ncmd=1 status=Success") == true)
        #expect(Self.hciName(events, 7) == "Vendor Command (OCF 0x004e)")
        #expect(Self.hciName(events, 9) == "Android LE Advertising Filter")
        #expect(events[9]?.first?.summary == "subcommand=Feature Select params=0100")
        #expect(Self.hciName(events, 11) == "Microsoft Extension")
        #expect(events[11]?.first?.summary == "subcommand=Read Supported Features params=00")
        #expect(Self.hciName(events, 13) == "Vendor (Intel Bootup)")
        #expect(Self.hciName(events, 14) == "Vendor (Intel Extended Telemetry)")
        #expect(Self.hciName(events, 15) == "Vendor")
        #expect(events[15]?.first?.summary.hasPrefix("params=b400") == true)

        let id = try #require(analyzer.controllerIdentities[0])
        #expect(id.manufacturer == .intel && id.frame == 4 && id.source == .readLocalVersionInformation)
        // The counts name every Read Version with the maker the capture finally gave, the first one included.
        let activity = analyzer.vendorActivity
        let readVersion = try #require(activity.commands.first { $0.opcode == HCICommand(0xFC05) })
        #expect(readVersion.count == 2 && readVersion.firstFrame == 1 && readVersion.label == "Intel Read Version")
        #expect(activity.commands.first { $0.opcode == HCICommand(0xFC4E) }?.label == "Vendor Command (OCF 0x004e)")
        #expect(activity.events.map(\.label).sorted() == ["Intel Bootup", "Intel Extended Telemetry", "event 0xb4"])
    }

    /// The same codes under a Broadcom controller mean Broadcom's commands; 0xB4 is its LM Diag event.
    @Test func broadcomControllerFromTypedPackets() throws {
        let b = CaptureBuilder()
            .localVersion(manufacturer: .broadcom)  // 1, 2
            .vendorCommand(HCICommand(0xFC4E), [0xFF, 0xFF, 0xFF, 0xFF])  // 3, 4
            .vendorCommand(HCICommand(0xFC05))  // 5, 6: Intel's Read Version, nothing for Broadcom
            .event(HCIBuild.event(.vendor, parameters: [0xB4] + [UInt8](repeating: 0, count: 62)))  // 7
        let (_, events) = Self.timeline(try b.captureFile())
        #expect(Self.hciName(events, 3) == "Broadcom Launch RAM")
        #expect(Self.hciName(events, 4) == "Command Complete (Broadcom Launch RAM)")
        #expect(Self.hciName(events, 5) == "Vendor Command (OCF 0x0005)")
        #expect(Self.hciName(events, 7) == "Vendor (Broadcom LM Diag)")
    }

    /// A Linux monitor capture names the maker in its Index Info record (BlueZ btsnoop.h opcode 10) before any
    /// command: the vendor commands that follow are named without a Read Local Version.
    @Test func monitorIndexInfoNamesTheMaker() throws {
        let t0: Int64 = 1_700_000_000_000_000
        let indexInfo: [UInt8] = [0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x02, 0x00]  // address, manufacturer 2 (Intel)
        let records = [
            OwnedRecord(timestamp: Timestamp(microseconds: t0), direction: .unknown, kind: .monitor, rawType: 10, bytes: indexInfo),
            OwnedRecord(
                timestamp: Timestamp(microseconds: t0 + 1000), direction: .tx, kind: .command,
                bytes: HCIBuild.command(HCICommand(0xFC05))),
        ]
        let bytes = CaptureWriter.btsnoop(records, datalink: 2001)
        let (analyzer, events) = Self.timeline(try CaptureFile.open(bytes: bytes, name: "monitor.btsnoop"))
        #expect(analyzer.controllerIdentities[0]?.source == .monitorIndexInfo)
        #expect(analyzer.controllerIdentities[0]?.manufacturer == .intel)
        #expect(Self.hciName(events, 2) == "Intel Read Version")
    }

    // MARK: against tshark

    /// What tshark's Info column says of a vendor-dissected frame: `Sent Broadcom Launch RAM`,
    /// `Rcvd Intel Command Complete (Read Version)`, `Sent Broadcom Unknown Command 0x017D (opcode 0xFD7D)`.
    struct TsharkVendorRow {
        var vendor: String
        /// The command's name, nil when tshark calls it unknown.
        var name: String?
        var isCommandComplete: Bool
    }

    static func tsharkVendorRows(_ path: String) -> [Int: TsharkVendorRow]? {
        guard let rows = TestEnvironment.tsharkFields(["-n", "-r", path, "-T", "fields", "-e", "frame.number", "-e", "_ws.col.Info"])
        else { return nil }
        var out: [Int: TsharkVendorRow] = [:]
        for r in rows where r.count >= 2 {
            guard let frame = Int(r[0]) else { continue }
            var info = r[1].replacingOccurrences(of: "[Malformed Packet]", with: "")
            guard info.hasPrefix("Sent ") || info.hasPrefix("Rcvd ") else { continue }
            let sent = info.hasPrefix("Sent ")
            info.removeFirst(5)
            guard let vendor = ["Broadcom", "Intel"].first(where: { info.hasPrefix($0 + " ") }) else { continue }
            info.removeFirst(vendor.count + 1)
            if sent {
                out[frame] = TsharkVendorRow(vendor: vendor, name: info.hasPrefix("Unknown Command") ? nil : info, isCommandComplete: false)
            } else if info.hasPrefix("Command Complete ("), info.hasSuffix(")") {
                let inner = String(info.dropFirst("Command Complete (".count).dropLast())
                out[frame] = TsharkVendorRow(
                    vendor: vendor, name: inner.hasPrefix("Unknown Command") ? nil : inner, isCommandComplete: true)
            }
        }
        return out
    }

    /// Makers tshark 4.0.17 has no vendor dissector for, and host-defined tables it does not have: blescope may name
    /// what tshark leaves raw when the name comes from one of these.
    static let vendorsTsharkLacks: Set<String> = ["Android", "Microsoft", "Qualcomm", "Realtek", "MediaTek"]
    /// The codes blescope names from BlueZ where Wireshark has none (`broadcomAndIntelNamesAreTsharks`).
    static let blueZOnly: [String: Set<String>] = [
        "Broadcom": [
            "Read SCO PCM INT Parameter", "Read Sleepmode Param", "Enable Radio", "Read UART Clock Setting",
            "Read Raw RSSI", "Read RAM", "Read Controller Features",
        ],
        "Intel": ["Read Supported Features", "PPAG Enable"],
    ]

    /// Compares blescope's names of vendor commands (and their Command Complete) with tshark's, frame by frame.
    /// Returns the frames both name (agreeing) and every disagreement; a frame blescope names from a table tshark
    /// lacks is no disagreement.
    static func compareWithTshark(_ path: String) throws -> (agreed: Int, disagreements: [String])? {
        guard let theirs = tsharkVendorRows(path) else { return nil }
        let (_, events) = timeline(try CaptureFile.open(path: path))
        var agreed = 0
        var problems: [String] = []
        for (frame, list) in events {
            guard let e = list.first(where: { $0.layer == .hci }) else { continue }
            // Our name of the vendor command this frame carries, without the Command Complete wrapper.
            let isCC = e.name.hasPrefix("Command Complete (")
            let commandName = isCC ? String(e.name.dropFirst("Command Complete (".count).dropLast()) : e.name
            let code = e.code.map { UInt16(truncatingIfNeeded: $0) } ?? 0
            let isVendorCommand = !isCC && e.direction == .tx && HCICommand(code).isVendor
            let isVendorCC = isCC && (commandName.hasPrefix("Vendor Command") || commandName.contains(" ") && theirs[frame] != nil)
            guard isVendorCommand || isVendorCC || theirs[frame] != nil else { continue }
            let ourVendor = ["Android", "Microsoft", "Broadcom", "Intel", "Qualcomm", "Realtek", "MediaTek"]
                .first { commandName.hasPrefix($0 + " ") }
            let ourName = ourVendor.map { String(commandName.dropFirst($0.count + 1)) }
            if let t = theirs[frame] {
                if let name = t.name {
                    if ourName == name && (ourVendor == t.vendor || ourVendor == "Android") {
                        agreed += 1
                    } else {
                        problems.append("frame \(frame): tshark \(t.vendor) \(name), blescope \(e.name)")
                    }
                } else if let v = ourVendor, !vendorsTsharkLacks.contains(v), !(blueZOnly[v]?.contains(ourName ?? "") ?? false) {
                    problems.append("frame \(frame): tshark unknown \(t.vendor) command, blescope \(e.name)")
                }
            } else if let v = ourVendor, !vendorsTsharkLacks.contains(v) {
                // tshark did not take the frame as the maker's: blescope must not have either.
                problems.append("frame \(frame): tshark leaves it raw, blescope \(e.name)")
            }
        }
        return (agreed, problems.sorted())
    }

    /// Built Intel and Broadcom captures written to files and read by tshark: every name tshark gives, blescope gives.
    @Test(arguments: [ControllerManufacturer.intel, .broadcom])
    func builtCaptureAgreesWithTshark(_ maker: ControllerManufacturer) throws {
        guard TestEnvironment.tsharkPath != nil else { return }
        var b = CaptureBuilder().vendorCommand(HCICommand(0xFC05)).localVersion(manufacturer: maker)
        for ocf in Set(VendorSpecific.intel.commands.keys).union(VendorSpecific.broadcom.commands.keys).sorted() {
            b = b.vendorCommand(HCICommand(ogf: 0x3F, ocf: ocf))
        }
        for ocf in VendorSpecific.android.commands.keys.sorted() { b = b.vendorCommand(HCICommand(ogf: 0x3F, ocf: ocf)) }
        let path = NSTemporaryDirectory() + "blescope-vendor-\(maker.rawValue)-\(UUID().uuidString).btsnoop"
        try Data(b.btsnoopBytes()).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let result = try #require(try Self.compareWithTshark(path))
        #expect(result.disagreements == [])
        // Every command of the maker's table that tshark knows, and its Command Complete.
        let known = maker == .intel ? 34 : 26
        #expect(result.agreed >= 2 * known, "agreed on \(result.agreed) frames")
    }

    /// Every real capture: where tshark names a Broadcom or Intel vendor command, blescope names it the same; where
    /// blescope names one tshark leaves raw, the name comes from a table tshark lacks.
    @Test func realCapturesAgreeWithTshark() throws {
        guard TestEnvironment.tsharkPath != nil else { return }
        var total = 0
        for path in TestEnvironment.realCaptures {
            guard let r = try? Self.compareWithTshark(path) else { continue }
            #expect(r.disagreements.isEmpty, "\(path): \(r.disagreements.prefix(5))")
            total += r.agreed
        }
        // Every frame tshark names: 1,402 in the shared Pixel 8 log; 180 + 14 + 1,638 + 100 in the corpus's four
        // Broadcom logs (`tshark -T fields -e _ws.col.Info`, lines "Sent/Rcvd Broadcom …" not "Unknown Command").
        if TestEnvironment.corpusDirectory != nil { #expect(total >= 3_334, "agreed on \(total) frames") }
    }

    // MARK: the public corpus (BLESCOPE_CORPUS)

    static func corpus(_ name: String) -> String? {
        guard let dir = TestEnvironment.corpusDirectory else { return nil }
        let path = dir + "/" + name
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    /// An Android phone with a Broadcom controller loading its firmware before the host reads the version
    /// (frame 566, company 0x000F, LMP subversion 0x240F: the bytes and tshark's decode agree). The timeline leaves
    /// the download raw, as tshark does; the counts name it: 271 Write Firmware (tshark: 271 frames with
    /// `bthci_cmd.opcode == 0xfc4c`), one Download MiniDriver, one Launch RAM, two Update Baudrate, one Write BD ADDR.
    @Test func broadcomFirmwareDownloadInAnAndroidLog() throws {
        guard let path = Self.corpus("android-btsnoop-broadcom-vsc_aleksa-classic-hfp-avdtp.log") else { return }
        let (analyzer, events) = Self.timeline(try CaptureFile.open(path: path))
        let id = try #require(analyzer.controllerIdentities[0])
        #expect(id.manufacturer == .broadcom && id.frame == 566 && id.version?.lmpSubversion == 0x240F)
        #expect(Self.hciName(events, 9) == "Vendor Command (OCF 0x004c)")
        let counts = Dictionary(uniqueKeysWithValues: analyzer.vendorActivity.commands.map { ($0.label, $0.count) })
        #expect(counts["Broadcom Write Firmware"] == 271)
        #expect(counts["Broadcom Download MiniDriver"] == 1)
        #expect(counts["Broadcom Launch RAM"] == 1)
        #expect(counts["Broadcom Update Baudrate"] == 2)
        #expect(counts["Broadcom Write BD ADDR"] == 1)
        #expect(counts["Android LE Advertising Filter"] == 84)
    }

    /// A Qualcomm controller (company 0x001D at frame 13): the logging command at frames 7 and 9 comes before the
    /// version and stays raw in the timeline; the counts name both, and the vendor event at frame 10
    /// (`00 00 10 0a 03`: cresp 0x00) as an EDL command response.
    @Test func qualcommLoggingInAnAndroidLog() throws {
        guard let path = Self.corpus("android-btsnoop_msp-hci-commands-only.log") else { return }
        let (analyzer, events) = Self.timeline(try CaptureFile.open(path: path))
        #expect(analyzer.controllerIdentities[0]?.manufacturer == .qualcomm)
        #expect(analyzer.controllerIdentities[0]?.frame == 13)
        #expect(Self.hciName(events, 7) == "Vendor Command (OCF 0x0017)")
        #expect(Self.hciName(events, 28) == "Android LE Get Vendor Capabilities")
        let activity = analyzer.vendorActivity
        #expect(
            activity.commands.first { $0.opcode == HCICommand(0xFC17) }.map { ($0.label, $0.count) } ?? ("", 0) == ("Qualcomm Logging", 2))
        #expect(activity.events.map(\.label) == ["Qualcomm EDL Command Response"])
        #expect(activity.events.first?.firstFrame == 10)
    }

    /// `info` (text and JSON) says who made the controller and counts the vendor traffic by name.
    @Test func infoShowsTheMakerAndTheVendorCounts() throws {
        guard let path = Self.corpus("android-btsnoop_msp-hci-commands-only.log") else { return }
        let info = CaptureInfo(reading: try CaptureFile.open(path: path))
        let text = info.text(terminal: Terminal(colors: false))
        #expect(text.contains("Controllers:        index 0: Qualcomm (0x001d), HCI 5.0, LMP 5.0 subversion 0x02be (frame 13)"))
        #expect(
            text.contains("Vendor commands:    7 Android LE Advertising Filter, 2 Qualcomm Logging, 2 Android LE Get Vendor Capabilities"))
        #expect(text.contains("Vendor events:      1 Qualcomm EDL Command Response"))
        let json = try #require(try JSONSerialization.jsonObject(with: Data(info.json.utf8)) as? [String: Any])
        let ids = try #require(json["controller_identities"] as? [[String: Any]])
        #expect(ids.first?["company_id"] as? Int == 0x001D && ids.first?["vendor_table"] as? String == "Qualcomm")
        let commands = try #require(json["vendor_commands"] as? [[String: Any]])
        #expect(commands.first { $0["opcode"] as? Int == 0xFC17 }?["name"] as? String == "Logging")
    }
}
