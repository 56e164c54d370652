import BLEAnalysis
import BLECapture
import BLECore
import BLEReports
import BLETestSupport
import Foundation
import Testing

/// Issue 48 scope 1, platforms as data: a pcapng of HCI records names the host it was written on in its Section Header
/// Block (`shb_os`) and its interface names: Windows' BTVS ("64-bit Windows 11 (25H2), build 26200", interface
/// "TCP@127.0.0.1:24400"), the Linux monitor channel (LINKTYPE 254, "Linux 6.2.10-arch1-1"). An air capture's header
/// names the sniffer's computer, not the link's stacks: no platform.
@Suite struct PlatformHostTests {
    /// One pcapng option: code, length, value padded to 4 bytes (little-endian).
    static func option(_ code: UInt16, _ text: String) -> [UInt8] {
        let value = Array(text.utf8)
        return le16(code) + le16(UInt16(value.count)) + value + [UInt8](repeating: 0, count: (4 - value.count % 4) % 4)
    }
    static func le16(_ v: UInt16) -> [UInt8] { [UInt8(v & 0xFF), UInt8(v >> 8)] }
    static func le32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8((v >> (8 * $0)) & 0xFF) } }
    static func block(_ type: UInt32, _ body: [UInt8]) -> [UInt8] {
        let length = UInt32(12 + body.count)
        return le32(type) + le32(length) + body + le32(length)
    }

    /// A pcapng: a section header with `os`, one interface of `linkType` named `interface`, and for LINKTYPE 201 one
    /// HCI Reset command (direction 0: sent).
    static func pcapng(os: String?, linkType: UInt16, interface: String?, description: String? = nil) -> [UInt8] {
        let end: [UInt8] = [0, 0, 0, 0]
        var shb = le32(0x1A2B_3C4D) + le16(1) + le16(0) + [UInt8](repeating: 0xFF, count: 8)
        shb += option(2, "AMD Ryzen 7 7700 8-Core Processor (with SSE4.2)") + (os.map { option(3, $0) } ?? [])
        shb += option(4, "Dumpcap (Wireshark) 4.6.6") + end
        let idb =
            le16(linkType) + le16(0) + le32(65535) + (interface.map { option(2, $0) } ?? []) + (description.map { option(3, $0) } ?? [])
            + end
        var bytes = block(0x0A0D_0D0A, shb) + block(1, idb)
        if linkType == 201 {
            let packet: [UInt8] = [0, 0, 0, 0, 0x01, 0x03, 0x0C, 0x00]
            bytes += block(6, le32(0) + le32(0x0006_0A00) + le32(0) + le32(8) + le32(8) + packet)
        }
        return bytes
    }

    static func platform(_ bytes: [UInt8]) throws -> PlatformIdentity? {
        DiagnosisReport.analyze(try CaptureFile.open(bytes: bytes, name: "host.pcapng")).result.platform
    }

    static let btvsOS = "64-bit Windows 11 (25H2), build 26200"

    @Test func aBTVSLogNamesWindowsSeenInItsSectionHeader() throws {
        let bytes = Self.pcapng(os: Self.btvsOS, linkType: 201, interface: "TCP@127.0.0.1:24400")
        let section = try #require(try CaptureFile.open(bytes: bytes, name: "btvs.pcapng").pcapngSection)
        #expect(section.os == Self.btvsOS && section.interfaceNames == ["TCP@127.0.0.1:24400"])
        #expect(section.hardware == "AMD Ryzen 7 7700 8-Core Processor (with SSE4.2)" && section.application == "Dumpcap (Wireshark) 4.6.6")
        let p = try #require(try Self.platform(bytes))
        #expect(p.platform == .windows && p.detail == Self.btvsOS + ", BTVS" && p.seen == .windows)
        #expect(p.summary == "64-bit Windows 11 (25H2), build 26200, BTVS (seen: the pcapng section header's shb_os)")
        // On the first screen, before the story.
        let text = DiagnosisReport.analyze(try CaptureFile.open(bytes: bytes, name: "btvs.pcapng")).text(terminal: Terminal(colors: false))
        let lines = text.split(separator: "\n")
        let platform = try #require(lines.firstIndex { $0.hasPrefix("Platform: 64-bit Windows 11") })
        #expect(platform < (lines.firstIndex { $0.hasPrefix("Story:") } ?? lines.count) && platform < 25)
    }

    /// BTVS's interface name without a section header naming the system: Windows only inferred, never acted on.
    @Test func aBTVSInterfaceNameAloneIsWindowsInferred() throws {
        let p = try #require(try Self.platform(Self.pcapng(os: nil, linkType: 201, interface: "TCP@127.0.0.1:24352")))
        #expect(p.platform == .windows && p.seen == nil && p.provenance == .inferred(what: "BTVS's interface name \"TCP@127.0.0.1:24352\""))
    }

    /// Wireshark's androiddump names the interface it reads over adb after the device's btsnoop_net server, and
    /// describes it with the model (the Nelko P21 capture: "android-bluetooth-btsnoop-net-D025A0A0245408MQ", "Android
    /// Bluetooth Btsnoop Net Amazon_Tate D025A0A0245408MQ"): Android, seen. The near miss: androiddump's Wi-Fi
    /// interface names none.
    @Test(arguments: [("android-bluetooth-btsnoop-net-D025A0A0245408MQ", true), ("android-wifi-tcpdump-D025A0A0245408MQ", false)])
    func androiddumpsInterfaceNamesAndroid(_ interface: String, _ bluetooth: Bool) throws {
        let bytes = Self.pcapng(
            os: "Linux 6.8.0", linkType: 201, interface: interface,
            description: "Android Bluetooth Btsnoop Net Amazon_Tate D025A0A0245408MQ")
        let p = try Self.platform(bytes)
        #expect((p?.platform == .android) == bluetooth)
        if bluetooth {
            #expect(p?.detail == "Android (androiddump, Amazon_Tate)")
            #expect(p?.provenance == .seen(frame: nil, what: "androiddump's interface name \"\(interface)\""))
        }
    }

    @Test func aLinuxMonitorPcapngNamesBlueZWithItsKernel() throws {
        let p = try #require(try Self.platform(Self.pcapng(os: "Linux 6.2.10-arch1-1", linkType: 254, interface: "bluetooth-monitor")))
        #expect(p.platform == .bluez && p.detail == "BlueZ (Linux 6.2.10-arch1-1)" && p.seen == .bluez)
        // Without its system: the link type alone, inferred.
        let bare = try #require(try Self.platform(Self.pcapng(os: nil, linkType: 254, interface: nil)))
        #expect(bare.platform == .bluez && bare.seen == nil)
    }

    /// The near misses: an air capture written on Windows (the bsniffhub LINKTYPE 256 capture's shb_os is "64-bit
    /// Windows 10 (22H2), build 19045") names the sniffer's computer; an H4 pcapng written on Linux is not a monitor log.
    @Test(arguments: [(UInt16(256), "64-bit Windows 10 (22H2), build 19045"), (272, "64-bit Windows 11"), (201, "Linux 6.2.0-35-generic")])
    func aSectionHeaderOfAnotherKindNamesNoPlatform(_ linkType: UInt16, _ os: String) throws {
        #expect(try Self.platform(Self.pcapng(os: os, linkType: linkType, interface: "COM3-4.4")) == nil)
    }

    /// The real logs: both corpus BTVS logs (capinfos -I: Operating system 64-bit Windows 11 (25H2), build 26200; Name
    /// TCP@127.0.0.1:24400), the LINKTYPE 254 BlueZ log (Linux 6.2.10-arch1-1), a btmon btsnoop (its system note at
    /// frame 1: Linux 5.15.0-84-generic), and the bsniffhub air capture taken on Windows 10 (no platform).
    @Test func theCorpusLogsNameTheirHosts() throws {
        guard let dir = TestEnvironment.corpusDirectory else { return }
        let expected: [(String, String?)] = [
            ("pcapng-lt201-btvs-win11_opensnek-40min-midlink-start-disc-13-reconnect-razer-hogp.pcapng", Self.btvsOS + ", BTVS"),
            ("pcapng-lt201-btvs-win11_opensnek-radio-reset-bg-reconnect-secreq-stored-ltk-razer-hogp.pcapng", Self.btvsOS + ", BTVS"),
            (
                "pcapng-lt254-linux-monitor_bsam-bluez-galaxy-buds2-ssp-pairing-sdp-then-host-disconnect.pcapng",
                "BlueZ (Linux 6.2.10-arch1-1)"
            ),
            ("btmon-w-dl2001_blue2th-bredr-page-timeout-04-le-fail-establish-3e.snoop", "BlueZ (Linux 5.15.0-84-generic)"),
            ("lell-rf-lt256_bsniffhub-lesc-justworks-42k-enc-ltk.pcapng", nil),
            (
                "pcapng-gz-lt201-h4phdr-androiddump_nelko-p21-fireos-tablet-ssp-justworks-confirmed-4s-spp-tspl-print-stored-key-reconnect-peer-disc-13-x2.pcapng",
                "Android (androiddump, Amazon_Tate)"
            ),
        ]
        for (name, detail) in expected {
            let path = dir + "/" + name
            guard FileManager.default.fileExists(atPath: path) else { continue }
            let p = DiagnosisReport.analyze(try CaptureFile.open(path: path)).result.platform
            #expect(p?.detail == detail && (detail == nil || p?.seen != nil), "\(name)")
        }
    }
}
