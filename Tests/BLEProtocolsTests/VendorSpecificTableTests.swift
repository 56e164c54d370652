import BLECore
import BLEProtocols
import BLETestSupport
import Testing

/// The vendor tables against their public sources: tshark's own value tables (`tshark -G values`, Wireshark
/// 4.0.17 here) for every Broadcom and Intel code it names, and the BlueZ / Linux / AOSP values written out below
/// (read from BlueZ `monitor/broadcom.c`, `monitor/intel.c`, Linux `drivers/bluetooth/btqca.h`, `btrtl.c`, AOSP
/// `system/pdl/hci/hci_packets.pdl`).
@Suite("Vendor-specific command and event tables")
struct VendorSpecificTableTests {
    /// `tshark -G values` rows for one field: value → name.
    static func tsharkValues(_ field: String) -> [Int: String]? {
        guard let rows = TestEnvironment.tsharkFields(["-G", "values"]) else { return nil }
        var out: [Int: String] = [:]
        for r in rows where r.count >= 4 && r[0] == "V" && r[1] == field {
            if let v = Int(r[2].dropFirst(2), radix: 16) { out[v] = r[3] }
        }
        return out
    }

    /// Every Broadcom and Intel command and Intel event tshark names carries tshark's name in our table, and our
    /// table has no code tshark names otherwise. Codes tshark lacks come from BlueZ (checked below).
    @Test func broadcomAndIntelNamesAreTsharks() throws {
        guard let broadcom = Self.tsharkValues("bthci_vendor.broadcom.opcode"), !broadcom.isEmpty,
            let intel = Self.tsharkValues("bthci_vendor.intel.opcode"), !intel.isEmpty,
            let intelEvents = Self.tsharkValues("bthci_vendor.intel.event_code"), !intelEvents.isEmpty
        else { return }
        for (opcode, name) in broadcom {
            let ocf = UInt16(opcode & 0x3FF)
            // Wireshark keeps the Android host's commands in its Broadcom table, where they first appeared.
            let ours = VendorSpecific.broadcom.commands[ocf] ?? VendorSpecific.android.commands[ocf]
            #expect(ours == name, "Broadcom \(hex(UInt16(opcode)))")
        }
        for (opcode, name) in intel {
            #expect(VendorSpecific.intel.commands[UInt16(opcode & 0x3FF)] == name, "Intel \(hex(UInt16(opcode)))")
        }
        for (code, name) in intelEvents {
            #expect(VendorSpecific.intel.event(parameters: [UInt8(code)])?.name == name, "Intel event \(hex(UInt8(code)))")
        }
        // What tshark 4.0.17 lacks is BlueZ's (Read SCO PCM INT Parameter 0x01D is also in later Wireshark): the only
        // extra rows.
        let broadcomExtra = Set(VendorSpecific.broadcom.commands.keys).subtracting(broadcom.keys.map { UInt16($0 & 0x3FF) })
        #expect(broadcomExtra == [0x01D, 0x028, 0x034, 0x044, 0x048, 0x04D, 0x06E])
        let intelExtra = Set(VendorSpecific.intel.commands.keys).subtracting(intel.keys.map { UInt16($0 & 0x3FF) })
        #expect(intelExtra == [0x0A6, 0x20B])
    }

    /// Codes read from BlueZ, Linux and AOSP sources (not from tshark).
    @Test func namesFromBlueZLinuxAndAOSP() {
        // BlueZ monitor/broadcom.c vendor_ocf_table / vendor_evt_table.
        #expect(VendorSpecific.broadcom.commands[0x06E] == "Read Controller Features")
        #expect(VendorSpecific.broadcom.commands[0x048] == "Read Raw RSSI")
        #expect(VendorSpecific.broadcom.event(parameters: [0xB4, 0x00])?.name == "LM Diag")
        // BlueZ monitor/intel.c: Startup 0x00, Extended Telemetry behind the vendor prefix 0x87 0x80, sub-opcode 0x03.
        #expect(VendorSpecific.intel.event(parameters: [0x00])?.name == "Startup")
        #expect(VendorSpecific.intel.event(parameters: [0x87, 0x80, 0x03, 0x01])?.name == "Extended Telemetry")
        #expect(VendorSpecific.intel.event(parameters: [0x87, 0x80, 0x04]) == nil)
        #expect(VendorSpecific.intel.commands[0x0A6] == "Read Supported Features")
        // Linux btqca.h: EDL patch 0xFC00 (sub-command 0x19 patch version), NVM 0xFC0B, BD_ADDR 0xFC14, logging 0xFC17;
        // btusb.c memory dump class 0x01 type 0x08.
        #expect(VendorSpecific.qualcomm.command(ocf: 0x000, parameters: [0x19])?.subcommand == "Patch Version Request")
        #expect(VendorSpecific.qualcomm.commands[0x00B] == "NVM Access")
        #expect(VendorSpecific.qualcomm.commands[0x014] == "Write BD ADDR")
        #expect(VendorSpecific.qualcomm.event(parameters: [0x01, 0x08, 0x00, 0x00])?.name == "Memory Dump")
        #expect(VendorSpecific.qualcomm.event(parameters: [0x01, 0x09]) == nil)
        // Linux btrtl.c.
        #expect(VendorSpecific.realtek.commands[0x06D] == "Read ROM Version")
        #expect(VendorSpecific.realtek.commands[0x020] == "Download Firmware")
        // AOSP hci_packets.pdl enum OpCode: LE_EXTENDED_SCAN_PARAMS 0xFD5A, CONTROLLER_DEBUG_INFO 0xFD5B, CONTROLLER_BQR 0xFD5E.
        #expect(HCICommand(0xFD5A).description == "Android LE Extended Scan Params")
        #expect(HCICommand(0xFD5B).description == "Android Controller Debug Info")
        #expect(HCICommand(0xFD5E).description == "Android Controller BQR")
    }

    /// The rule: the Android host's codes whatever the maker (known or not), the maker's only once known, the
    /// Microsoft extension on each maker's own opcode, anything else raw with its code.
    @Test func lookupOrder() {
        let apcf = HCICommand(0xFD57)
        for m: ControllerManufacturer? in [nil, .broadcom, .qualcomm, .intel, ControllerManufacturer(0x1234)] {
            #expect(apcf.name(manufacturer: m) == "Android LE Advertising Filter")
        }
        #expect(VendorSpecific.command(apcf, parameters: [0x01, 0x00], manufacturer: nil)?.subcommand == "Feature Select")
        let launch = HCICommand(0xFC4E)
        #expect(launch.name(manufacturer: nil) == "Vendor Command (OCF 0x004e)")
        #expect(launch.name(manufacturer: .broadcom) == "Broadcom Launch RAM")
        #expect(launch.name(manufacturer: .intel) == "Vendor Command (OCF 0x004e)")
        #expect(HCICommand(0xFC05).name(manufacturer: .intel) == "Intel Read Version")
        #expect(HCICommand(0xFC1E).name(manufacturer: .intel) == "Microsoft Extension")
        #expect(HCICommand(0xFC1E).name(manufacturer: .broadcom) == "Broadcom Write PCM Data Format Parameter")
        #expect(HCICommand(0xFD70).name(manufacturer: .qualcomm) == "Microsoft Extension")
        #expect(
            VendorSpecific.command(HCICommand(0xFD70), parameters: [0x03], manufacturer: .qualcomm)?.subcommand
                == "LE Monitor Advertisement")
        #expect(HCICommand(0xFC17).name(manufacturer: .qualcomm) == "Qualcomm Logging")
        #expect(HCICommand(0x0C03).name(manufacturer: .intel) == "Reset")  // spec opcodes are never vendor's
        // Events: Android sub-events for any maker; 0xB4 is Broadcom's LM Diag and nothing for Qualcomm.
        let stateChange = HCIEventParameters.raw(.vendor, [0x55, 0x01])
        #expect(stateChange.name(manufacturer: .intel) == "Vendor (Android LE Multi-Advertising State Change)")
        #expect(HCIEventParameters.raw(.vendor, [0xB4]).name(manufacturer: .broadcom) == "Vendor (Broadcom LM Diag)")
        #expect(HCIEventParameters.raw(.vendor, [0xB4]).name(manufacturer: .qualcomm) == "Vendor")
        #expect(HCIEventParameters.raw(.vendor, [0x02, 0x00]).name(manufacturer: .intel) == "Vendor (Intel Bootup)")
        #expect(HCIEventParameters.raw(.vendor, []).name(manufacturer: .intel) == "Vendor")
    }

    /// Command Complete and Command Status name a vendor command as its maker does, in the name and the summary.
    @Test func commandCompleteNamesTheVendorCommand() {
        let cc = HCIEventParameters.commandComplete(CommandComplete(opcode: HCICommand(0xFC4E), returnParameters: [0x00]))
        #expect(cc.name(manufacturer: .broadcom) == "Command Complete (Broadcom Launch RAM)")
        #expect(cc.summary(manufacturer: .broadcom) == "opcode=Broadcom Launch RAM ncmd=1 status=Success")
        #expect(cc.summary == "opcode=Vendor Command (OCF 0x004e) ncmd=1 status=Success")
        let cs = HCIEventParameters.commandStatus(CommandStatus(status: .success, opcode: HCICommand(0xFC09)))
        #expect(cs.name(manufacturer: .intel) == "Command Status (Intel Secure Send)")
    }

    /// Read Local Version Information's return parameters (Core 5.4 Vol 4, Part E, 7.4.1), typed and round-tripped;
    /// the bytes are those of the real Broadcom capture's frame 566 (corpus `android-btsnoop-broadcom-vsc_aleksa…`,
    /// read with a hex dump).
    @Test func readLocalVersionInformationReturn() throws {
        let bytes: [UInt8] = [0x00, 0x08, 0x7C, 0x00, 0x08, 0x0F, 0x00, 0x0F, 0x24]
        let typed = try HCIReturnParameters.decode(opcode: .readLocalVersionInformation, bytes: bytes)
        guard case let .readLocalVersionInformation(v) = typed else {
            Issue.record("not typed: \(typed)")
            return
        }
        #expect(v.manufacturer == .broadcom && v.hciVersion == 8 && v.hciSubversion == 0x007C && v.lmpSubversion == 0x240F)
        #expect(typed.bytes == bytes)
        #expect(v.summary == "status=Success hci=4.2 hciSubversion=0x007c lmp=4.2 company=0x000f lmpSubversion=0x240f")
    }
}
