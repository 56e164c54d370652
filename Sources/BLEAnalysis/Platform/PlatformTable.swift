import BLEProtocols

/// The host stack that drove the controller a log was taken on: what its routine looks like is data
/// (``PlatformTable``), so a rule asks whether a value is the platform's own before it calls it a problem.
///
/// Open struct: a platform the table does not know yet is a new constant and its rows.
public struct Platform: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Android's Bluetooth stack (Bluedroid, then the "GD" stack from Android 12): `packages/modules/Bluetooth`.
    public static let android = Platform(rawValue: "Android")
    /// Apple's stack (bluetoothd) on iOS, iPadOS, watchOS and macOS: the PacketLogger captures.
    public static let apple = Platform(rawValue: "iOS/macOS")
    /// Linux: the kernel's Bluetooth subsystem and BlueZ's bluetoothd (btmon captures).
    public static let bluez = Platform(rawValue: "BlueZ")
    /// BlueKitchen's BTstack (it writes PacketLogger files too).
    public static let btstack = Platform(rawValue: "BTstack")
    /// Windows' Bluetooth stack (BthPort, BthLEEnum).
    public static let windows = Platform(rawValue: "Windows")

    public var description: String { rawValue }
}

/// One behaviour a platform has a documented or measured routine for (a row key of ``PlatformTable``).
public struct PlatformBehaviour: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }

    /// The connection interval range the stack asks for when it creates an LE connection as central.
    public static let connectionIntervalMin = PlatformBehaviour(rawValue: "connection interval min")
    public static let connectionIntervalMax = PlatformBehaviour(rawValue: "connection interval max")
    public static let peripheralLatency = PlatformBehaviour(rawValue: "peripheral latency")
    /// The supervision timeout of the connections it creates.
    public static let supervisionTimeout = PlatformBehaviour(rawValue: "supervision timeout")
    /// The supervision timeout a platform, as central, asks its peripherals to keep above a multiple of the effective
    /// interval (interval max × (latency + 1)): ``PlatformValue/factor(_:)``. The spec's own floor is 2 (Core Spec
    /// Vol 6, Part B, 4.5.2); a higher one is that platform's rule, not every link's.
    public static let supervisionTimeoutMargin = PlatformBehaviour(rawValue: "supervision timeout margin")
    /// How long a direct (app-requested) connection attempt runs before the stack gives up on it.
    public static let directConnectTimeout = PlatformBehaviour(rawValue: "direct connect timeout")
    /// How long a background (auto-connect, accept-list) attempt runs: ``PlatformValue/never``.
    public static let backgroundConnectTimeout = PlatformBehaviour(rawValue: "background connect timeout")
    /// The scan interval of a direct connection attempt, and of a background one (how the log tells them apart).
    public static let directConnectScanInterval = PlatformBehaviour(rawValue: "direct connect scan interval")
    public static let backgroundConnectScanInterval = PlatformBehaviour(rawValue: "background connect scan interval")
    /// What the stack does to the filter accept list while a connection attempt runs: it cancels the attempt
    /// (LE Create Connection Cancel, the controller answers Connection Complete 0x02), edits the list, creates again.
    public static let acceptListEdit = PlatformBehaviour(rawValue: "accept-list edit")
    /// Commands the stack sends while it probes or initialises the controller; a refusal is the answer to a question.
    public static let initialisationProbe = PlatformBehaviour(rawValue: "initialisation probe")
    /// Commands the stack sends to tune a link once it is up (its BR/EDR supervision timeout…) and goes on without when
    /// the controller refuses them: the controller's own value stays in force, nothing waits on the answer.
    public static let linkTuning = PlatformBehaviour(rawValue: "link tuning")
    /// Commands the stack sends on a timer to each advertising set it has enabled, to give it a new private address:
    /// one in the log names a set the stack holds enabled, whether or not the log shows its enable.
    public static let advertisingAddressRotation = PlatformBehaviour(rawValue: "advertising address rotation")
    /// Where the stack's HCI trace comes from and what marks it as that stack's.
    public static let traceChannel = PlatformBehaviour(rawValue: "trace channel")
    /// Notes the trace carries besides HCI packets.
    public static let logNote = PlatformBehaviour(rawValue: "log note")
    /// Words in a note that name the platform wherever the log holds them (``PlatformValue/text(_:)``), the system
    /// they name in the row's versions ("macOS", "iOS"): ``PlatformClues/identify()`` reads them.
    public static let logMarker = PlatformBehaviour(rawValue: "log marker")
    /// Vendor-specific commands only this platform's host is seen to send, whatever the log's format: one in the log
    /// names the platform (``PlatformValue/commands(_:)``; ``PlatformClues/identify()`` reads them).
    public static let hostVendorCommand = PlatformBehaviour(rawValue: "host vendor command")
    /// The commands the stack sends first when it starts the controller, in order (``PlatformValue/commands(_:)``): a
    /// log that opens with them holds that stack's start-up (``PlatformClues/identify()`` reads them).
    public static let startupSequence = PlatformBehaviour(rawValue: "start-up sequence")
    /// An L2CAP fixed channel in the range the Core reserves (Vol 3, Part A, 2.1: 0x0008–0x003E on LE-U and ACL-U) that
    /// this platform uses for its own protocol (``PlatformValue/channels(_:)``): its traffic is the platform's routine,
    /// and, fixed, it is never opened by signalling, so no Connection Request is missing from the log.
    public static let vendorFixedChannel = PlatformBehaviour(rawValue: "vendor fixed channel")

    public var description: String { rawValue }
}

/// A behaviour's value: a duration, "no time-out", commands, or words.
public enum PlatformValue: Hashable, Sendable {
    case milliseconds(Double)
    /// The behaviour has no time-out: the attempt runs until it succeeds or is cancelled.
    case never
    case commands([HCICommand])
    case text(String)
    /// A multiple (of the effective connection interval, for ``PlatformBehaviour/supervisionTimeoutMargin``).
    case factor(Double)
    /// L2CAP fixed channels and the platform's names for them.
    case channels([UInt16: String])

    /// The duration, when the value is one.
    public var milliseconds: Double? { if case .milliseconds(let ms) = self { ms } else { nil } }
    public var commands: [HCICommand] { if case .commands(let c) = self { c } else { [] } }
    public var factor: Double? { if case .factor(let f) = self { f } else { nil } }
    public var channels: [UInt16: String] { if case .channels(let c) = self { c } else { [:] } }
}

/// One row: a platform's behaviour, the versions it holds for, and where it is documented or measured.
public struct PlatformFact: Sendable {
    public var platform: Platform
    public var behaviour: PlatformBehaviour
    public var value: PlatformValue
    /// The versions the row holds for ("Android 12+", "iOS 26, iPhone18,2"); "all" when no version differs.
    public var versions: String
    /// Where it is documented (AOSP file and symbol, Apple's Accessory Design Guidelines section, the Linux or BlueZ
    /// source file) or measured (which capture, which frame).
    public var source: String

    init(_ platform: Platform, _ behaviour: PlatformBehaviour, _ value: PlatformValue, versions: String = "all", source: String) {
        self.platform = platform
        self.behaviour = behaviour
        self.value = value
        self.versions = versions
        self.source = source
    }
}

/// Platform behaviours as data: one row per behaviour per platform (per version where versions differ), each with
/// its citation. Rules read it (``PlatformTable/facts(_:for:)``) instead of hard-coding one platform's semantics.
///
/// Measured rows name the capture of the public corpus (`corpus/README.md`) and the frame they were read from with
/// tshark 4.0.17.
public enum PlatformTable {
    public static let rows: [PlatformFact] = android + apple + bluez + btstack + windows

    /// The rows of `behaviour` for `platform`, newest versions first as listed.
    public static func facts(_ behaviour: PlatformBehaviour, for platform: Platform) -> [PlatformFact] {
        rows.filter { $0.platform == platform && $0.behaviour == behaviour }
    }

    /// The first row of `behaviour` for `platform`.
    public static func fact(_ behaviour: PlatformBehaviour, for platform: Platform) -> PlatformFact? {
        rows.first { $0.platform == platform && $0.behaviour == behaviour }
    }

    /// The row of `platform` whose default `behaviour` duration is `milliseconds`, if one is.
    public static func defaultDuration(_ behaviour: PlatformBehaviour, _ milliseconds: Double, for platform: Platform) -> PlatformFact? {
        facts(behaviour, for: platform).first { $0.value.milliseconds == milliseconds }
    }

    /// The name a platform row gives the fixed channel `cid` (``PlatformBehaviour/vendorFixedChannel``), if one does.
    public static func vendorFixedChannel(_ cid: UInt16) -> String? {
        rows.lazy.filter { $0.behaviour == .vendorFixedChannel }.compactMap { $0.value.channels[cid] }.first
    }

    /// The row of `platform` that lists `command` among the commands of `behaviour`.
    public static func listing(_ command: HCICommand, _ behaviour: PlatformBehaviour, for platform: Platform) -> PlatformFact? {
        facts(behaviour, for: platform).first { $0.value.commands.contains(command) }
    }

    static let aospLE = "AOSP packages/modules/Bluetooth system/gd/hci/acl_manager/le_impl.h"
    static let android: [PlatformFact] = [
        .init(
            .android, .logMarker, .text("android-bluetooth-btsnoop-net"), versions: "androiddump",
            source:
                "Wireshark extcap/androiddump.c: the interface it opens over adb for a device's btsnoop_net server (INTERFACE_ANDROID_BLUETOOTH_BTSNOOP_NET); measured: if_name \"android-bluetooth-btsnoop-net-D025A0A0245408MQ\", if_description \"Android Bluetooth Btsnoop Net Amazon_Tate D025A0A0245408MQ\" (capinfos -I) in pcapng-gz-lt201-h4phdr-androiddump_nelko-p21-fireos-tablet-ssp-justworks-confirmed-4s-spp-tspl-print-stored-key-reconnect-peer-disc-13-x2.pcapng"
        ),
        .init(
            .android, .connectionIntervalMin, .milliseconds(30), versions: "Android 12+ (GD stack)",
            source: "\(aospLE): kConnIntervalMin 0x0018 (system property bluetooth.core.le.min_connection_interval)"),
        .init(
            .android, .connectionIntervalMin, .milliseconds(30), versions: "Android ≤ 11 (Bluedroid)",
            source: "AOSP system/bt include/bt_target.h: BTM_BLE_CONN_INT_MIN_DEF 24"),
        .init(
            .android, .connectionIntervalMax, .milliseconds(50), versions: "Android 12+ (GD stack)",
            source: "\(aospLE): kConnIntervalMax 0x0028 (bluetooth.core.le.max_connection_interval)"),
        .init(
            .android, .connectionIntervalMax, .milliseconds(50), versions: "Android ≤ 11 (Bluedroid)",
            source:
                "AOSP system/bt include/bt_target.h: BTM_BLE_CONN_INT_MAX_DEF 40; measured: 24–40 × 1.25 ms, latency 0, 2000 × 10 ms in the LE Create Connection at frame 153 of android-btsnoop-named-cap_notmikeb-2017-cubot-page-timeout-04-x3-during-le-link-handle-0201-reused.cap"
        ),
        .init(.android, .peripheralLatency, .milliseconds(0), source: "\(aospLE): kConnLatency 0"),
        .init(
            .android, .supervisionTimeout, .milliseconds(5000), versions: "Android 12+ (GD stack)",
            source:
                "\(aospLE): kSupervisionTimeout 0x01F4 (bluetooth.core.le.connection_supervision_timeout); measured: 500 × 10 ms in the LE Create Connection of android-btsnoop_oppo-enco-classic-hfp-a2dp-fresh.log"
        ),
        .init(
            .android, .supervisionTimeout, .milliseconds(20000), versions: "Android ≤ 11 (Bluedroid)",
            source:
                "AOSP system/bt include/bt_target.h: BTM_BLE_CONN_TIMEOUT_DEF 2000; measured: 2000 × 10 ms in the LE Create Connection of android-btsnooz_mi-watch-lite-qcom-hci-only-1h42.btsnoop"
        ),
        .init(
            .android, .directConnectTimeout, .milliseconds(30000),
            source:
                "AOSP system/stack/gatt/connection_manager.cc: DIRECT_CONNECT_TIMEOUT (30 * 1000), wl_direct_connect_timeout_cb; \(aospLE): kCreateConnectionTimeoutMs (bluetooth.core.le.direct_connection_timeout); the app sees status 133 (GATT_ERROR)"
        ),
        .init(
            .android, .backgroundConnectTimeout, .never,
            source: "AOSP system/stack/gatt/connection_manager.cc: background_connect_add sets no alarm (only direct_connect_add does)"),
        .init(
            .android, .directConnectScanInterval, .milliseconds(60),
            source: "\(aospLE): arm_connectability uses kScanIntervalFast 0x0060 while a direct connection is pending"),
        .init(
            .android, .backgroundConnectScanInterval, .milliseconds(1280),
            source:
                "\(aospLE): arm_connectability uses kScanIntervalSlow 0x0800 for background connections only (vendors override it: 2977 × 0.625 ms in android-btsnoop_lightctl-2h-le-att-empty-appearance.log)"
        ),
        .init(
            .android, .acceptListEdit,
            .commands([.leCreateConnectionCancel, .leAddDeviceToFilterAcceptList, .leRemoveDeviceFromFilterAcceptList]),
            source:
                "\(aospLE): every connection attempt goes through the filter accept list (InitiatorFilterPolicy::USE_FILTER_ACCEPT_LIST); create_le_connection and the address manager's pause disarm it (disarm_connectability: LE Create Connection Cancel), edit the list, then re-arm; measured: cancel, Connection Complete 0x02, LE Add Device To Filter Accept List 5 ms later, a new LE Extended Create Connection (android-btsnoop_pixel8-pongbot-14conn-prepwrite-indicate.log.last frames 1560–1567)"
        ),
        .init(
            .android, .startupSequence,
            .commands([
                .reset, .readBufferSize, HCICommand(ogf: 0x03, ocf: 0x0033), .readLocalVersionInformation, .readBDADDR,
                HCICommand(ogf: 0x04, ocf: 0x0002),
            ]), versions: "Android 5–12 (Bluedroid)",
            source:
                "AOSP system/bt/device/src/controller.cc start_up(): Reset, Read Buffer Size, Host Buffer Size, Read Local Version Information, Read BD_ADDR, Read Local Supported Commands, then the features; ESP-IDF's Bluedroid (components/bt/host/bluedroid/device/controller.c) keeps the order, with flow-control commands between; measured: frames 1–11 of android-btsnoop_qdomyos-xiaomi-qualcomm-from-reset-domyos-treadmill-issc-gatt-peer-silent-link-lost-08.log and of android-btsnoop-cfa_robam-appliance-ota-fff0-writecmd.cfa"
        ),
        .init(
            .android, .initialisationProbe,
            .commands([
                HCICommand(ogf: 0x3F, ocf: 0x153), HCICommand(ogf: 0x3F, ocf: 0x15B), HCICommand(ogf: 0x3F, ocf: 0x15E),
                HCICommand(ogf: 0x3F, ocf: 0x15F), .configureDataPath, .leSetDefaultSubrate,
            ]),
            source:
                "AOSP system/gd/hci/controller.cc: the controller's start-up asks LE Get Vendor Capabilities (0xFD53) and sets up what the answer allows (Controller Debug Info, BQR, Dynamic Audio Buffer); system/stack/hcic/hcicmds.cc btsnd_hcic_configure_data_path (a codec's data path, HFP offload); \(aospLE) LeSetDefaultSubrate; opcodes: system/pdl/hci/hci_packets.pdl enum OpCode; measured: LE Get Vendor Capabilities refused 0x01 at frame 22 of android-btsnoop_blefun-18k-att-notify-stream.log"
        ),
        .init(
            .android, .linkTuning, .commands([.writeLinkSupervisionTimeout]),
            source:
                "AOSP system/stack/acl/btm_acl.cc BTM_SetLinkSuperTout (btsnd_hcic_write_link_super_tout): each BR/EDR link's supervision timeout, 8000 slots (5 s), written after the connection while this side is central (Bluedroid btm_acl.c: \"Only send if current role is Master\"); no caller waits on its Command Complete; measured: 5000 ms written at 273 (accepted at 274) and again at 275, refused 0x0C at 276, the link going on to SDP, RFCOMM and HFP, in android-btsnoop_oppo-enco-hfp-avrcp-sdp-rfcomm.log"
        ),
        .init(
            .android, .advertisingAddressRotation, .commands([.leSetAdvertisingSetRandomAddress]), versions: "Android 12+ (GD stack)",
            source:
                "AOSP system/gd/hci/le_advertising_manager.cc set_advertising_set_random_address_on_timer: runs for enabled sets only (\"should only be trigger by enabled advertising set\"), disables and re-enables a connectable set around the new address, sends it to a non-connectable set while the set advertises; measured: set 0 disabled at 8491, address at 8497, enabled at 8499; set 4's address at 7038 and set 3's at 7544 with no disable, both in the 4 sets the host disables at 17292, in android-btsnoop_lightctl-midlink-whole-log-link-never-starts-or-ends-adv-set-addr-0c.log"
        ),
        .init(
            .android, .traceChannel, .text("btsnoop_hci.log (datalink 1002, H4); btsnooz in a bug report; .cfa copies"),
            source:
                "AOSP system/gd/hal/snoop_logger.cc (btsnoop_hci.log, filtered and full modes); system/tools/scripts/btsnooz.py (the bug report's BTSNOOP_LOG_SUMMARY)"
        ),
        .init(
            .android, .logNote,
            .text("none: the btsnoop file carries HCI packets only; vendor event 0xFF sub-event 0x58 is a Bluetooth Quality Report"),
            source: "AOSP system/pdl/hci/hci_packets.pdl enum VseSubeventCode (BQR_EVENT 0x58)"),
    ]

    static let appleGuidelines = "Apple, Accessory Design Guidelines for Apple Devices, \"Connection Parameters\" (R17 §40.6, R21 §49.6)"
    static let apple: [PlatformFact] = [
        .init(
            .apple, .connectionIntervalMin, .milliseconds(10), versions: "iOS 26 (iPhone18,2)",
            source:
                "measured: LE Extended Create Connection, interval 8–24 × 1.25 ms, pklg-ios-le_bafang-iphone18-sysdiagnose-5h-disc-16-08.pklg frame 831 (91 of 91 attempts alike)"
        ),
        .init(
            .apple, .connectionIntervalMax, .milliseconds(30), versions: "iOS 26 (iPhone18,2)",
            source: "measured: the same attempts; 20 connections completed at 30 ms, latency 0, 720 ms"),
        .init(.apple, .peripheralLatency, .milliseconds(0), versions: "iOS 26 (iPhone18,2)", source: "measured: the same attempts"),
        .init(
            .apple, .supervisionTimeout, .milliseconds(720), versions: "measured on iOS 26 and 27",
            source:
                "measured: supervision timeout 72 × 10 ms in every LE Extended Create Connection and LE Enhanced Connection Complete of pklg-ios-le_bafang-iphone18-sysdiagnose-5h-disc-16-08.pklg (frames 831, 794…) and in the LE Enhanced Connection Complete v2 of pklg-ios-le_even-g2-glasses-discovery-indicate.pklg (iOS 27, frame 207); \(appleGuidelines) leaves the central's initial parameters to the device and asks the accessory to request its own (2–6 s)"
        ),
        .init(
            .apple, .supervisionTimeoutMargin, .factor(3),
            source: "\(appleGuidelines): Interval Max × (Peripheral Latency + 1) × 3 < connSupervisionTimeout"),
        .init(
            .apple, .directConnectTimeout, .never,
            source:
                "Apple Core Bluetooth, CBCentralManager connect(_:options:): \"Core Bluetooth doesn't time out a connection attempt\"; measured: every attempt in pklg-ios-le_bafang-iphone18-sysdiagnose-5h-disc-16-08.pklg goes through the filter accept list (initiator filter policy 1)"
        ),
        .init(
            .apple, .backgroundConnectTimeout, .never,
            source: "Apple Core Bluetooth, CBCentralManager connect(_:options:); the attempt stays pending until the app cancels it"),
        .init(
            .apple, .backgroundConnectScanInterval, .milliseconds(300), versions: "iOS 26 (iPhone18,2)",
            source: "measured: scan interval 480 × 0.625 ms, pklg-ios-le_bafang-iphone18-sysdiagnose-5h-disc-16-08.pklg frame 831"),
        .init(
            .apple, .acceptListEdit, .commands([.leCreateConnectionCancel]),
            source:
                "measured: 71 of 91 attempts in pklg-ios-le_bafang-iphone18-sysdiagnose-5h-disc-16-08.pklg end in a cancel and Connection Complete 0x02 (first at frame 794), each followed by Apple vendor commands and a new attempt"
        ),
        .init(
            .apple, .traceChannel, .text("PacketLogger (.pklg): Xcode's Additional Tools, or a sysdiagnose's bluetooth logs"),
            source: "Apple, Bluetooth logging profile and PacketLogger (developer.apple.com/bug-reporting/profiles-and-logs)"),
        .init(
            .apple, .logNote,
            .text(
                "PacketLogger notes (type 0xFC): \"Product: iPhone18,2\", \"Bluetooth Host: MobileBluetooth-…\", \"Software: Version 26.5.1 (Build 23F81)\""
            ),
            source:
                "measured: the first notes of pklg-ios-le_bafang-iphone18-sysdiagnose-5h-disc-16-08.pklg and pklg-ios-le_even-g2-test-iphone17-att-404.pklg"
        ),
        .init(
            .apple, .hostVendorCommand, .commands([HCICommand(0xFCE9)]), versions: "iOS and macOS",
            source:
                "measured with tshark 4.0.17 (bthci_cmd.opcode == 0xfce9) over the 186 captures of the corpus and ../shared/captures: sent in 9, all Apple hosts' (8 iOS, among them btsnoop-dl1001-hci-unencap_roko-iphone-airtag-play-sound-accept-list-stored-ltk-enc-v2-cid-003a.log, 133 from frame 4, and pklg-macos-le_hciparse-broadcom-2.5h-sleep-wake-bg-connect-create-cancel-x64.pklg, 404), in none of another platform's (Android hosts on Broadcom controllers send 0xFD57, 0xFD59…)"
        ),
        .init(
            .apple, .vendorFixedChannel,
            .channels([
                0x003A: "Apple's Magnet channel", 0x0030: "Apple's MagicPairing channel", 0x002A: "Apple's LEAP channel",
                0x002B: "Apple's LEAS channel",
            ]), versions: "iOS and macOS",
            source:
                "Apple IOBluetooth BluetoothAssignedNumbers.h: kBluetoothL2CAPChannelMagnet = 0x003A, kBluetoothL2CAPChannelMagicPairing = 0x0030, kBluetoothL2CAPChannelLEAP = 0x002A, kBluetoothL2CAPChannelLEAS = 0x002B; measured: CID 0x003a in btsnoop-dl1001-hci-unencap_roko-iphone-airtag-play-sound-accept-list-stored-ltk-enc-v2-cid-003a.log (258 PDUs from frame 1), pklg-ios-le_bafang-iphone18-sysdiagnose-5h-disc-16-08.pklg (12 links) and an iPhone's air link in ppi-btle-lt192-pcapng_hackenbt-ubertooth-iphone-shaver-pairing-enc.pcapng (from frame 26281); tshark 4.0.17 calls it Reserved"
        ),
        .init(
            .apple, .logMarker, .text("[IOBluetoothHCIUserClient]"), versions: "macOS",
            source:
                "measured: \"[IOBluetoothHCIUserClient][registerDaemon] -- Registering bluetoothd daemon with PID 112\" at frame 29 of pklg-macos-le_hciparse-broadcom-2.5h-sleep-wake-bg-connect-create-cancel-x64.pklg (IOBluetooth is macOS's Bluetooth kernel interface)"
        ),
        .init(
            .apple, .logMarker, .text("iOS Device connection has been lost"), versions: "iOS",
            source:
                "measured: PacketLogger's note at frame 905 of pklg-ios-le_peripage-iphone-ext-connect-accept-list-print-writecmd-capture-lost.pklg, written when the iOS device it records from goes away"
        ),
    ]

    static let bluez: [PlatformFact] = [
        .init(
            .bluez, .connectionIntervalMin, .milliseconds(30),
            source: "Linux net/bluetooth/hci_core.c hci_alloc_dev_priv: le_conn_min_interval 0x0018"),
        .init(
            .bluez, .connectionIntervalMax, .milliseconds(50),
            source: "Linux net/bluetooth/hci_core.c hci_alloc_dev_priv: le_conn_max_interval 0x0028"),
        .init(
            .bluez, .peripheralLatency, .milliseconds(0), source: "Linux net/bluetooth/hci_core.c hci_alloc_dev_priv: le_conn_latency 0"),
        .init(
            .bluez, .supervisionTimeout, .milliseconds(420),
            source:
                "Linux net/bluetooth/hci_core.c hci_alloc_dev_priv: le_supv_timeout 0x002a (debugfs supervision_timeout, main.conf LE ConnectionSupervisionTimeout); measured: 420 ms in btmon-w-dl2001_blue2th-bredr-page-timeout-04-le-fail-establish-3e.snoop frame 366"
        ),
        .init(
            .bluez, .traceChannel, .text("btmon -w (btsnoop datalink 2001, the Linux monitor channel with index records)"),
            source: "BlueZ src/shared/btsnoop.h (BTSNOOP_FORMAT_MONITOR 2001, BTSNOOP_OPCODE_NEW_INDEX/INDEX_INFO/SYSTEM_NOTE)"),
        .init(
            .bluez, .traceChannel,
            .text("pcapng of the Linux monitor channel (LINKTYPE 254: dumpcap or Wireshark on the bluetooth-monitor interface)"),
            versions: "Wireshark's capture",
            source:
                "tcpdump.org link types: LINKTYPE_BLUETOOTH_LINUX_MONITOR 254; measured: interface \"bluetooth-monitor\", shb_os \"Linux 6.2.10-arch1-1\" in pcapng-lt254-linux-monitor_bsam-bluez-galaxy-buds2-ssp-pairing-sdp-then-host-disconnect.pcapng (capinfos -I)"
        ),
        .init(
            .bluez, .logNote, .text("system notes (\"Bluetooth daemon 5.x\", \"Linux version …\") and user logging of bluetoothd"),
            source: "BlueZ monitor/control.c and src/shared/btsnoop.h (BTSNOOP_OPCODE_SYSTEM_NOTE 12, USER_LOGGING 13)"),
    ]

    static let btstack: [PlatformFact] = [
        .init(
            .btstack, .initialisationProbe, .commands([.writeSynchronousFlowControlEnable]),
            source:
                "BTstack src/hci.c hci_initializing_run: HCI_INIT_WRITE_SYNCHRONOUS_FLOW_CONTROL_ENABLE during start-up when SCO flow control is wanted; measured: refused 0x11 at frame 89 of pklg-btstack-be_hfp-hf-ssp-cvsd-esco-16k-sco.pklg, the stack goes on"
        ),
        .init(
            .btstack, .traceChannel, .text("PacketLogger format (hci_dump_posix.c, HCI_DUMP_PACKETLOGGER) or btsnoop"),
            source: "BTstack platform/posix/hci_dump_posix.c"),
        .init(
            .btstack, .logNote, .text("log lines (type 0xFC) prefixed with the source file and line: \"hci.c.2862: hci_power_control: 1\""),
            source: "BTstack src/btstack_debug.h log_info; measured: pklg-btstack-be_hfp-hf-ssp-cvsd-esco-16k-sco.pklg"),
    ]

    static let btvsLogs = "pcapng-lt201-btvs-win11_opensnek-40min-midlink-start-disc-13-reconnect-razer-hogp.pcapng"
    static let windows: [PlatformFact] = [
        .init(
            .windows, .traceChannel,
            .text(
                "BTVS (Bluetooth Virtual Sniffer) streams the host's HCI to Wireshark over a local TCP port; dumpcap writes pcapng, LINKTYPE 201 (H4 with direction pseudo-header). ETW's BthTracing .etl files blescope does not read"
            ),
            source:
                "Microsoft Learn, \"BTVS\" (Bluetooth Test Platform tools, windows-hardware/drivers/bluetooth/testing-btp-tools-btvs) and \"Bluetooth tracing\"; measured: LINKTYPE 201 in both corpus BTVS logs (capinfos -I); no connection-parameter default is published"
        ),
        .init(
            .windows, .logMarker, .text("Windows"), versions: "Windows",
            source:
                "measured: shb_os \"64-bit Windows 11 (25H2), build 26200\" in the Section Header Block of \(btvsLogs) and of the radio-reset BTVS log (capinfos -I: Operating system)"
        ),
        .init(
            .windows, .logMarker, .text("TCP@127.0.0.1:"), versions: "BTVS",
            source:
                "measured: if_name \"TCP@127.0.0.1:24400\" (BTVS's local TCP server) in both corpus BTVS logs (tshark -T fields -e frame.interface_name)"
        ),
        .init(
            .windows, .logNote,
            .text(
                "none; BTVS leaves key material and HID report values out of ACL payloads (headers whole, nothing marked cut), and logs a link's first ACL a few ms before its LE Connection Complete"
            ),
            source:
                "measured: 28,845 of the 40,315 ACL records of \(btvsLogs) are 12 bytes long, 3 bytes of ACL payload under a header announcing more (tshark frame.len, bthci_acl.length); its Security Request at 26520, 3.0 ms before the LE Enhanced Connection Complete at 26521 (tshark frame.time_relative 1101.070613, 1101.073609)"
        ),
    ]
}
