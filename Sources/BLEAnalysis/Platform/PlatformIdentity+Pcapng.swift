import BLECapture

/// The host a pcapng file of HCI records was written on, from its section header and interface names
/// (``PcapngSection``) as the platform table's ``PlatformBehaviour/logMarker`` rows name them: Windows' BTVS (`shb_os`
/// "64-bit Windows 11 (25H2), build 26200", interface "TCP@127.0.0.1:24400"), the Linux kernel's monitor channel
/// (LINKTYPE 254, `shb_os` "Linux 6.2.10-arch1-1"). An air capture's section header names the sniffer's computer, not
/// the stack on the link: only HCI link types are read.
extension PlatformClues {
    /// pcapng link types of HCI records: H4 (187), H4 with the direction pseudo-header (201), the Linux monitor (254).
    static let hciLinkTypes: Set<UInt32> = [187, 201, 254]

    func pcapngHost() -> PlatformIdentity? {
        guard format == .pcapng, Self.hciLinkTypes.contains(datalink), let section = pcapngSection else { return nil }
        if let windows = windowsHost(section) { return windows }
        if let android = androiddumpHost(section) { return android }
        guard datalink == 254 else { return nil }
        if let os = section.os, os.hasPrefix("Linux") {
            return PlatformIdentity(
                .bluez, detail: "BlueZ (" + os + ")", .seen(frame: nil, what: "the pcapng section header's shb_os, Linux monitor records"))
        }
        return PlatformIdentity(.bluez, .inferred(what: "the Linux monitor link type (254)"))
    }

    /// Windows: `shb_os` holding the table's word for it (seen), else an interface named as BTVS names its (inferred).
    func windowsHost(_ section: PcapngSection) -> PlatformIdentity? {
        let markers = PlatformTable.facts(.logMarker, for: .windows).compactMap { row -> (PlatformFact, String)? in
            if case .text(let word) = row.value { return (row, word) }
            return nil
        }
        let btvs = markers.first { row, word in row.versions == "BTVS" && section.interfaceNames.contains { $0.hasPrefix(word) } }
        let tool = btvs.map { ", " + $0.0.versions } ?? ""
        if let os = section.os, markers.contains(where: { row, word in row.versions != "BTVS" && os.contains(word) }) {
            return PlatformIdentity(.windows, detail: os + tool, .seen(frame: nil, what: "the pcapng section header's shb_os"))
        }
        guard let btvs, let name = section.interfaceNames.first(where: { $0.hasPrefix(btvs.1) }) else { return nil }
        return PlatformIdentity(.windows, detail: "Windows" + tool, .inferred(what: "BTVS's interface name \"\(name)\""))
    }

    /// Android, through Wireshark's androiddump (adb): its interface name holds the table's word (seen), and the
    /// description the device's model, e.g. "Android Bluetooth Btsnoop Net Amazon_Tate D025A0A0245408MQ" (model, serial).
    func androiddumpHost(_ section: PcapngSection) -> PlatformIdentity? {
        let words = PlatformTable.facts(.logMarker, for: .android).compactMap { row -> String? in
            if case .text(let word) = row.value, row.versions == "androiddump" { return word }
            return nil
        }
        guard let name = section.interfaceNames.first(where: { n in words.contains { n.hasPrefix($0) } }) else { return nil }
        let index = section.interfaceNames.firstIndex(of: name) ?? 0
        let description = index < section.interfaceDescriptions.count ? section.interfaceDescriptions[index] : ""
        let parts = description.split(separator: " ")
        let model = parts.count >= 6 && description.hasPrefix("Android Bluetooth Btsnoop Net ") ? String(parts[4]) : nil
        return PlatformIdentity(
            .android, detail: "Android (androiddump\(model.map { ", " + $0 } ?? ""))",
            .seen(frame: nil, what: "androiddump's interface name \"\(name)\""))
    }
}
