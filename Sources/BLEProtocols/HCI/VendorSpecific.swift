import BLECore

/// The maker of a controller: the Company_Identifier its Read Local Version Information returns (Core Spec 5.4
/// Vol 4, Part E, 7.4.1; values from Assigned Numbers, "Company Identifiers"), or that a Linux monitor capture
/// records in its Index Info (BlueZ `src/shared/btsnoop.h`, `struct btsnoop_opcode_index_info`).
///
/// Vendor-specific commands (OGF 0x3F) and events (0xFF) mean what the controller's maker says they mean, so
/// naming them needs this value; the constants are the makers blescope has a table for (BlueZ `monitor/packet.c`
/// switches on the same `COMPANY_ID_*` values). Open struct: any other company identifier is kept.
public struct ControllerManufacturer: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt16
    public init(rawValue: UInt16) { self.rawValue = rawValue }
    public init(_ rawValue: UInt16) { self.rawValue = rawValue }

    public static let intel = ControllerManufacturer(0x0002)
    public static let broadcom = ControllerManufacturer(0x000F)
    public static let qualcomm = ControllerManufacturer(0x001D)
    public static let mediatek = ControllerManufacturer(0x0046)
    public static let realtek = ControllerManufacturer(0x005D)
    /// BlueZ's virtual controllers (`COMPANY_ID_LINUX`), which answer the Microsoft extension on 0xFC1E.
    public static let linux = ControllerManufacturer(0x05F1)

    /// The vendor table for this maker, when blescope has one.
    public var table: VendorSpecificTable? {
        switch self {
        case .intel: VendorSpecific.intel
        case .broadcom: VendorSpecific.broadcom
        case .qualcomm: VendorSpecific.qualcomm
        case .mediatek: VendorSpecific.mediatek
        case .realtek: VendorSpecific.realtek
        default: nil
        }
    }

    /// "Intel" for makers with a table, `company 0x1234` otherwise (the company names live in BLECodecs).
    public var description: String { table?.vendor ?? "company \(hex(rawValue, width: 4))" }
}

/// A vendor-specific command or event named from a vendor's table: who defines it and what it is called.
public struct VendorSpecificName: Hashable, Sendable, CustomStringConvertible {
    /// Who defines the code: the controller's maker ("Broadcom"), or a host stack that defines commands for any
    /// controller ("Android", "Microsoft").
    public var vendor: String
    public var name: String
    /// The sub-command named by the first parameter byte, for commands that multiplex (`Feature Select`).
    public var subcommand: String?
    public init(vendor: String, name: String, subcommand: String? = nil) {
        self.vendor = vendor; self.name = name; self.subcommand = subcommand
    }
    /// `Broadcom Launch RAM`.
    public var description: String { vendor + " " + name }
}

/// One vendor's vendor-specific HCI commands (OGF 0x3F, keyed by OCF) and vendor events (event 0xFF, keyed by the
/// leading parameter bytes), as data. Each table names its public source where it is defined.
public struct VendorSpecificTable: Sendable {
    public var vendor: String
    /// OCF → name.
    public var commands: [UInt16: String]
    /// OCF → first parameter byte → sub-command name, for commands that carry a sub-opcode.
    public var subcommands: [UInt16: [UInt8: String]]
    /// Leading parameter bytes of an 0xFF event → name; the longest matching prefix wins.
    public var events: [(prefix: [UInt8], name: String)]

    init(
        vendor: String, commands: [UInt16: String], subcommands: [UInt16: [UInt8: String]] = [:],
        events: [(prefix: [UInt8], name: String)] = []
    ) {
        self.vendor = vendor; self.commands = commands; self.subcommands = subcommands
        self.events = events.sorted { $0.prefix.count > $1.prefix.count }
    }

    /// The command's name from this table, with its sub-command when the first parameter byte names one.
    public func command(ocf: UInt16, parameters: [UInt8]) -> VendorSpecificName? {
        guard let name = commands[ocf] else { return nil }
        let sub = parameters.first.flatMap { subcommands[ocf]?[$0] }
        return VendorSpecificName(vendor: vendor, name: name, subcommand: sub)
    }

    /// The event's name from this table, by the longest matching prefix of its parameters.
    public func event(parameters: [UInt8]) -> VendorSpecificName? {
        for (prefix, name) in events where parameters.count >= prefix.count && parameters.starts(with: prefix) {
            return VendorSpecificName(vendor: vendor, name: name)
        }
        return nil
    }
}

/// The vendor tables and the rule that picks one.
///
/// A command or event is looked up, in order, in:
/// 1. the Android host's table: AOSP sends these to any controller that answers LE Get Vendor Capabilities, and
///    reads the sub-event byte of every 0xFF event without asking who made the chip (`btu_hcif.cc` hands 0xFF to
///    `btm_vendor_specific_evt`, which switches on the sub-event code alone), so they are named whatever the
///    manufacturer, known or not;
/// 2. the Microsoft HCI extension, on the one opcode each maker assigned it;
/// 3. the manufacturer's own table, once Read Local Version Information (or a monitor Index Info) told who made
///    the controller. Before that, and for codes no public table names, the command or event stays raw bytes with
///    its code (`Vendor Command (OCF 0x01F1)`, `Vendor` with `params=1b…`), as BlueZ's btmon and tshark do.
public enum VendorSpecific {
    /// The vendor-specific commands and events the Android host defines for any controller.
    ///
    /// Commands: AOSP `system/pdl/hci/hci_packets.pdl` (`enum OpCode`: LE_GET_VENDOR_CAPABILITIES 0xFD53,
    /// LE_MULTI_ADVT 0xFD54, LE_BATCH_SCAN 0xFD56, LE_ADV_FILTER 0xFD57, LE_ENERGY_INFO 0xFD59,
    /// LE_EXTENDED_SCAN_PARAMS 0xFD5A, CONTROLLER_DEBUG_INFO 0xFD5B, CONTROLLER_A2DP_OPCODE 0xFD5D, CONTROLLER_BQR
    /// 0xFD5E); `stack/include/hcidefs.h` for HCI_BLE_TRACK_ADV 0x0158 (Bluedroid) and HCI_CONTROLLER_DAB 0x015F
    /// with its sub-opcodes; Bluedroid `vnd/ble/vendor_hcidefs.h` for HCI_VENDOR_BLE_RPA_VSC 0x0155 (private address
    /// resolution offload, sub-codes 0x01–0x05); the names are Wireshark's (`packet-bthci_vendor_broadcom.c`, where these first
    /// appeared) so that they read as tshark's do, and AOSP's own for the ones Wireshark lacks (the command that
    /// configures Bluetooth Quality Reports is `Controller BQR`, AOSP's CONTROLLER_BQR, so that only the reports
    /// themselves carry "Quality Report" in their name; bumble `vendor/android/hci.py` agrees on the codes).
    /// Sub-commands: `hcidefs.h` (`BTM_BLE_MULTI_ADV_*`, `BTM_BLE_BATCH_SCAN_*`) and Wireshark
    /// (`broadcom_le_subcode_advertising_filter_vals`, 0x00–0x07).
    /// Events: the sub-event codes of `hcidefs.h` / `hci_packets.pdl` (`enum VseSubeventCode`), see
    /// ``AndroidVendorSubevent``.
    public static let android = VendorSpecificTable(
        vendor: "Android",
        commands: [
            0x153: "LE Get Vendor Capabilities", 0x154: "LE Multi Advertising", 0x155: "LE Private Address Resolution",
            0x156: "LE Batch Scan",
            0x157: "LE Advertising Filter", 0x158: "LE Tracking Advertising", 0x159: "LE Energy Info",
            0x15A: "LE Extended Scan Params", 0x15B: "Controller Debug Info", 0x15D: "A2DP Hardware Offload",
            0x15E: "Controller BQR", 0x15F: "Dynamic Audio Buffer",
        ],
        subcommands: [
            0x154: [
                0x01: "Set Parameters", 0x02: "Write Advertising Data", 0x03: "Write Scan Response Data",
                0x04: "Set Random Address", 0x05: "Enable",
            ],
            0x155: [0x01: "Enable", 0x02: "Add IRK", 0x03: "Remove IRK", 0x04: "Clear IRK", 0x05: "Read IRK"],
            0x156: [0x01: "Enable/Disable", 0x02: "Set Storage Parameters", 0x03: "Set Parameters", 0x04: "Read Results"],
            0x157: [
                0x00: "Enable", 0x01: "Feature Select", 0x02: "BD_ADDR", 0x03: "UUID", 0x04: "Solicitation UUID",
                0x05: "Local Name", 0x06: "Manufacturer Data", 0x07: "Service Data",
            ],
            0x15F: [0x01: "Get Buffer Time", 0x02: "Set Buffer Time"],
        ],
        events: AndroidVendorSubevent.names.map { (prefix: [$0.key], name: $0.value) })

    /// Broadcom (company 0x000F). Commands: tshark 4.0.17's `bthci_vendor.broadcom.opcode` values
    /// (`tshark -G values`, from Wireshark's `packet-bthci_vendor_broadcom.c`), which name the firmware download
    /// (Download MiniDriver 0x02E, Write Firmware 0x04C, Launch RAM 0x04E), Write BD ADDR 0x001, Update Baudrate
    /// 0x018, the PCM/SCO/WBS audio set-up and Set ACL Priority 0x057; later Wireshark adds Read SCO PCM INT
    /// Parameter 0x01D; BlueZ `monitor/broadcom.c` (`vendor_ocf_table`) adds Read Sleepmode Param 0x028, Enable Radio 0x034, Read UART Clock Setting 0x044,
    /// Read Raw RSSI 0x048, Read RAM 0x04D and Read Controller Features 0x06E. Events: BlueZ's `vendor_evt_table`
    /// (LM Diag 0xB4); Wireshark names none.
    public static let broadcom = VendorSpecificTable(
        vendor: "Broadcom",
        commands: [
            0x001: "Write BD ADDR", 0x018: "Update Baudrate", 0x01C: "Write SCO PCM INT Parameter",
            0x01D: "Read SCO PCM INT Parameter", 0x01E: "Write PCM Data Format Parameter", 0x027: "Write Sleep Mode",
            0x028: "Read Sleepmode Param", 0x02E: "Download MiniDriver", 0x034: "Enable Radio",
            0x03B: "Enable USB HID Emulation", 0x044: "Read UART Clock Setting", 0x045: "Write UART Clock Setting",
            0x048: "Read Raw RSSI", 0x04C: "Write Firmware", 0x04D: "Read RAM", 0x04E: "Launch RAM",
            0x057: "Set ACL Priority", 0x05A: "Read VID PID", 0x06D: "Write I2S PCM Interface Parameter",
            0x06E: "Read Controller Features", 0x079: "Read Verbose Config Version Info", 0x07E: "Enable WBS",
            0x102: "Enable WBS Modified", 0x111: "Set ConnectionLess Broadcast Stream",
            0x112: "Receive ConnectionLess Broadcast Stream", 0x113: "Write ConnectionLess Broadcast Stream Data",
            0x114: "ConnectionLess Broadcast Stream Flush",
        ],
        events: [(prefix: [0xB4], name: "LM Diag")])

    /// Intel (company 0x0002). Commands and events: tshark 4.0.17's `bthci_vendor.intel.opcode` and
    /// `bthci_vendor.intel.event_code` values (Wireshark `packet-bthci_vendor_intel.c`), with BlueZ
    /// `monitor/intel.c` (`vendor_ocf_table`, `vendor_evt_table`, `vendor_prefix_evt_table`) for what Wireshark
    /// lacks: Read Supported Features 0x0A6, PPAG Enable 0x20B, the Startup event 0x00 and the Extended Telemetry
    /// event (vendor prefix 0x87 0x80, sub-opcode 0x03).
    public static let intel = VendorSpecificTable(
        vendor: "Intel",
        commands: [
            0x001: "Reset", 0x002: "No Operation", 0x005: "Read Version", 0x006: "Set UART Baudrate", 0x007: "Enable LPM",
            0x008: "PCM Write Configuration", 0x009: "Secure Send", 0x00D: "Read Secure Boot Params",
            0x00E: "Write Secure Boot Params", 0x00F: "Unlock", 0x010: "Change UART Baudrate", 0x011: "Manufacturer Mode",
            0x012: "Read Link RSSI", 0x022: "Get Exception Info", 0x024: "Clear Exception Info", 0x02F: "Write BD Data",
            0x030: "Read BD Data", 0x031: "Write BD Address", 0x032: "Flow Specification", 0x034: "Read Secure ID",
            0x038: "Set Synchronous USB Interface Type", 0x039: "Config Synchronous Interface", 0x03F: "SW RF Kill",
            0x043: "Activate/Deactivate Traces", 0x04D: "Stimulate Exception", 0x050: "Read HW Version",
            0x052: "Set Event Mask", 0x053: "Config_Link_Controller", 0x089: "DDC Write", 0x08A: "DDC Read",
            0x08B: "DDC Config Write", 0x08C: "DDC Config Read", 0x08D: "Memory Read", 0x08E: "Memory Write",
            0x0A6: "Read Supported Features", 0x20B: "PPAG Enable",
        ],
        events: [
            (prefix: [0x00], name: "Startup"), (prefix: [0x01], name: "Fatal Exception"), (prefix: [0x02], name: "Bootup"),
            (prefix: [0x05], name: "Default BD Data"), (prefix: [0x06], name: "Secure Send Commands Result"),
            (prefix: [0x08], name: "Debug Exception"), (prefix: [0x0F], name: "LE Link Established"),
            (prefix: [0x11], name: "Scan Status"), (prefix: [0x16], name: "Activate/Deactivate Traces Complete"),
            (prefix: [0x17], name: "Link PDU Trace"), (prefix: [0x19], name: "Write BD Data Complete"),
            (prefix: [0x25], name: "SCO Rejected via LMP"), (prefix: [0x26], name: "PTT Switch Notification"),
            (prefix: [0x29], name: "System Exception"), (prefix: [0x2C], name: "FW Trace String"),
            (prefix: [0x2E], name: "FW Trace Binary"), (prefix: [0x87, 0x80, 0x03], name: "Extended Telemetry"),
        ])

    /// Qualcomm (company 0x001D). Commands: Linux `drivers/bluetooth/btqca.h` (EDL_PATCH_CMD_OPCODE 0xFC00 with
    /// its sub-commands EDL_PATCH_VER_REQ_CMD 0x19, EDL_PATCH_TLV_REQ_CMD 0x1E, EDL_GET_BUILD_INFO_CMD 0x20,
    /// EDL_GET_BID_REQ_CMD 0x23, EDL_PATCH_CONFIG_CMD 0x28; QCA_PRE_SHUTDOWN_CMD 0xFC08; EDL_NVM_ACCESS_OPCODE
    /// 0xFC0B; EDL_WRITE_BD_ADDR_OPCODE 0xFC14; QCA_DISABLE_LOGGING 0xFC17, whose sub-opcode 0x14 switches the
    /// controller's logging: named "Logging", since Android logs send it with other sub-opcodes too); Qualcomm's
    /// BT SAR HAL (`vendor.qti.hardware.bluetooth_sar`, HCI_VS_LINK_POWER_CTRL_REQ_OPCODE 0xFCDA).
    /// Events: `btqca.h` (`struct edl_event_hdr`: EDL_CMD_REQ_RES_EVT 0x00 answers an EDL command) and
    /// `btusb.c` / `hci_qca.c` (QCA_MEMDUMP_VSE_CLASS 0x01 with QCA_MEMDUMP_MSG_TYPE 0x08: a controller memory
    /// dump).
    public static let qualcomm = VendorSpecificTable(
        vendor: "Qualcomm",
        commands: [
            0x000: "EDL Patch", 0x008: "Pre-Shutdown", 0x00B: "NVM Access", 0x014: "Write BD ADDR", 0x017: "Logging",
            0x0DA: "Link Power Control Request",
        ],
        subcommands: [
            0x000: [
                0x19: "Patch Version Request", 0x1E: "TLV Download", 0x20: "Get Build Info", 0x23: "Get Board ID",
                0x28: "Patch Config",
            ],
            0x017: [0x14: "Disable/Enable Logging"],
        ],
        events: [(prefix: [0x00], name: "EDL Command Response"), (prefix: [0x01, 0x08], name: "Memory Dump")])

    /// Realtek (company 0x005D): Linux `drivers/bluetooth/btrtl.c` (download firmware 0xFC20 in
    /// `rtl_download_firmware`, Read ROM Version 0xFC6D in `rtl_read_rom_version`). BlueZ's btmon names Realtek as
    /// the vendor but has no table.
    public static let realtek = VendorSpecificTable(
        vendor: "Realtek", commands: [0x020: "Download Firmware", 0x06D: "Read ROM Version"])

    /// MediaTek (company 0x0046): Linux `drivers/bluetooth/btmtk.c` and `btmtksdio.c` send every WMT (firmware
    /// download, function control) command on 0xFC6F. Their answers arrive as event 0xE4, which those drivers
    /// rewrite to 0xFF, so no 0xFF prefix is named here.
    public static let mediatek = VendorSpecificTable(vendor: "MediaTek", commands: [0x06F: "WMT Command"])

    /// The Microsoft HCI extension's sub-commands (first parameter byte): BlueZ `monitor/msft.c` and `msft.h`
    /// (`MSFT_SUBCMD_*`).
    static let microsoftSubcommands: [UInt8: String] = [
        0x00: "Read Supported Features", 0x01: "Monitor RSSI", 0x02: "Cancel Monitor RSSI",
        0x03: "LE Monitor Advertisement", 0x04: "LE Cancel Monitor Advertisement",
        0x05: "LE Set Advertisement Filter Enable", 0x06: "Read Absolute RSSI",
    ]

    /// The opcode a maker assigned to the Microsoft extension: BlueZ `monitor/packet.c` (`get_msft_opcode`) and
    /// AOSP `hci_packets.pdl` (MSFT_OPCODE_INTEL 0xFC1E, MSFT_OPCODE_MEDIATEK 0xFD30, MSFT_OPCODE_QUALCOMM 0xFD70).
    public static func microsoftOpcode(for manufacturer: ControllerManufacturer) -> HCICommand? {
        switch manufacturer {
        case .intel, .linux: HCICommand(0xFC1E)
        case .qualcomm: HCICommand(0xFD70)
        case .mediatek: HCICommand(0xFD30)
        case .realtek: HCICommand(0xFCF0)
        default: nil
        }
    }

    /// The name of a vendor-specific command (OGF 0x3F), or nil for any other opcode and for codes no table names.
    public static func command(_ opcode: HCICommand, parameters: [UInt8] = [], manufacturer: ControllerManufacturer?)
        -> VendorSpecificName?
    {
        guard opcode.isVendor else { return nil }
        if let name = android.command(ocf: opcode.ocf, parameters: parameters) { return name }
        guard let manufacturer else { return nil }
        if opcode == microsoftOpcode(for: manufacturer) {
            return VendorSpecificName(
                vendor: "Microsoft", name: "Extension", subcommand: parameters.first.flatMap { microsoftSubcommands[$0] })
        }
        return manufacturer.table?.command(ocf: opcode.ocf, parameters: parameters)
    }

    /// The name of a vendor-specific event (0xFF) from its parameters, or nil when no table names it.
    public static func event(parameters: [UInt8], manufacturer: ControllerManufacturer?) -> VendorSpecificName? {
        if let name = android.event(parameters: parameters) { return name }
        return manufacturer?.table?.event(parameters: parameters)
    }
}
