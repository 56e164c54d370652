import BLECapture
import BLECore
import BLEProtocols

/// Which platform's stack the log was taken on, with what says so: a frame that names it (`seen`), or a trait of the
/// file that points to it (`inferred`).
public struct PlatformIdentity: Hashable, Sendable {
    public enum Provenance: Hashable, Sendable {
        /// A record names the platform (a PacketLogger note, a vendor command only that stack sends, a monitor index).
        case seen(frame: Int?, what: String)
        /// The file's format or name points to it.
        case inferred(what: String)

        /// `seen`, `inferred`: the word outputs use.
        public var kind: String {
            switch self {
            case .seen: "seen"
            case .inferred: "inferred"
            }
        }
        public var frame: Int? { if case .seen(let f, _) = self { f } else { nil } }
        /// `seen: PacketLogger note at frame 1`, `inferred: a PacketLogger file without notes`.
        public var description: String {
            switch self {
            case .seen(let frame, let what): "seen: " + what + (frame.map { " at frame \($0)" } ?? "")
            case .inferred(let what): "inferred: " + what
            }
        }
    }

    public var platform: Platform
    /// What the log says of the version and device (`iOS 26.5.1, iPhone18,2`), when it says.
    public var detail: String?
    public var provenance: Provenance

    public init(_ platform: Platform, detail: String? = nil, _ provenance: Provenance) {
        self.platform = platform
        self.detail = detail
        self.provenance = provenance
    }

    /// The platform when a record names it: what the rules judge by. An inference from the format alone (a
    /// PacketLogger file without notes may be BTstack's, a generated Sample's) is shown, never acted on.
    public var seen: Platform? { if case .seen = provenance { platform } else { nil } }

    /// The platform as the log names it: `iOS` or `macOS` for Apple's, `BlueZ`, `Android`.
    public var name: String {
        guard platform == .apple || platform == .bluez, case .seen = provenance, let word = detail?.split(separator: " ").first else {
            return platform.rawValue
        }
        return String(word)
    }

    /// `iOS 26.5.1, iPhone18,2 (seen: PacketLogger note "Product: iPhone18,2" at frame 1)`: the first screen's line.
    public var summary: String {
        (detail ?? platform.rawValue) + " (" + provenance.description + ")"
    }
}

/// A text record of the log (PacketLogger note, Linux monitor system note): the first ones say who wrote the log.
public struct PlatformNote: Hashable, Sendable {
    public var frame: Int
    public var text: String
}

/// What the pass saw that can name the platform; ``identify()`` reads it.
public struct PlatformClues: Sendable {
    /// The first text records (at most ``PlatformClues/keptNotes``).
    public var notes: [PlatformNote] = []
    public var format: CaptureFormat?
    public var datalink: UInt32 = 0
    public var fileName: String?
    /// The first command of the Android host's own vendor table (LE Get Vendor Capabilities…) and its frame.
    public var androidVendorCommand: (name: String, frame: Int)?
    /// The first vendor command a platform's host alone sends (``PlatformBehaviour/hostVendorCommand``), its opcode and
    /// frame.
    public var hostVendorCommand: (opcode: HCICommand, frame: Int)?
    /// The first Linux monitor Index Info record's frame.
    public var monitorIndexFrame: Int?
    /// A pcapng file's section header and interface names (``PcapngSection``).
    public var pcapngSection: PcapngSection?
    /// The log's first HCI commands (at most ``PlatformClues/keptStartupCommands``), with the frame of the last one.
    public var startupCommands: [HCICommand] = []
    public var startupLastFrame: Int?
    public static let keptStartupCommands = 6
    /// The frame where the host read the controller's version (Read Local Version Information answered): the host's
    /// start-up is in the log.
    public var hostReadVersionFrame: Int?
    /// The parameters the log's first LE (Extended) Create Connection asked, and its frame (``createDefaultsPlatform()``).
    public var firstCreate: (parameters: LEConnectionParameters, frame: Int)?

    /// Notes kept: Apple and BTstack name themselves in the first dozen.
    public static let keptNotes = 64

    public init() {}

    /// The clues of a finished pass and of the file it read.
    public init(_ analysis: CaptureAnalysis, capture: CaptureFile, fileName: String?) {
        notes = analysis.platformNotes
        format = capture.format
        datalink = capture.datalink
        self.fileName = fileName
        if let android = analysis.vendorActivity.commands.filter({ $0.name?.vendor == "Android" }).min(by: { $0.firstFrame < $1.firstFrame }
        ) {
            androidVendorCommand = (android.label, android.firstFrame)
        }
        let sentOnlyByAHost = Set(PlatformTable.rows.filter { $0.behaviour == .hostVendorCommand }.flatMap(\.value.commands))
        if let first = analysis.vendorActivity.commands.filter({ $0.opcode.map(sentOnlyByAHost.contains) == true })
            .min(by: { $0.firstFrame < $1.firstFrame }), let opcode = first.opcode
        {
            hostVendorCommand = (opcode, first.firstFrame)
        }
        monitorIndexFrame = analysis.controllerIdentities.values.filter { $0.source == .monitorIndexInfo }.map(\.frame).min()
        startupCommands = analysis.startupCommands.map { $0.command }
        startupLastFrame = analysis.startupCommands.last?.frame
        hostReadVersionFrame = analysis.controllerIdentities.values.filter { $0.source == .readLocalVersionInformation }.map(\.frame).min()
        pcapngSection = capture.pcapngSection
        firstCreate = analysis.firstCreate
    }

    /// The platform, from the strongest clue: a note naming it, a command only its stack sends, a monitor index, the
    /// format; nil when nothing points to one (a btsnoop H4 file with no Android vendor command: Android's format, but
    /// also bumble's and others').
    public func identify() -> PlatformIdentity? {
        if let apple = appleNote() { return apple }
        if let note = notes.first(where: { Self.isBTstackLine($0.text) }) {
            return PlatformIdentity(
                .btstack, detail: "BTstack", .seen(frame: note.frame, what: "BTstack log line \"\(note.text.prefix(40))\""))
        }
        if let android = androidVendorCommand {
            return PlatformIdentity(.android, .seen(frame: android.frame, what: android.name))
        }
        if format == .btsnooz { return PlatformIdentity(.android, .seen(frame: nil, what: "an Android bug report's btsnooz log")) }
        // btmon's system notes: `Linux version 6.6.31+rpt-rpi-2712 (aarch64)`, `Bluetooth daemon 5.66`.
        if let note = notes.first(where: { $0.text.hasPrefix("Linux version ") || $0.text.hasPrefix("Bluetooth daemon ") }) {
            let version = note.text.split(separator: " ").dropFirst(2).first.map(String.init) ?? ""
            let name = note.text.hasPrefix("Linux") ? "Linux " : "BlueZ "
            return PlatformIdentity(.bluez, detail: "BlueZ (" + name + version + ")", .seen(frame: note.frame, what: "btmon system note"))
        }
        if let frame = monitorIndexFrame { return PlatformIdentity(.bluez, .seen(frame: frame, what: "Linux monitor index record")) }
        if datalink == 2001 && format == .btsnoop {
            return PlatformIdentity(.bluez, .inferred(what: "btmon's btsnoop format (datalink 2001)"))
        }
        if let host = pcapngHost() { return host }
        if let vendor = hostVendorPlatform() { return vendor }
        if let startup = startupPlatform() { return startup }
        if let defaults = createDefaultsPlatform() { return defaults }
        if format == .packetLogger {
            let notes = notes.isEmpty ? "no notes" : "no note names the platform"
            return PlatformIdentity(.apple, detail: "iOS/macOS, or BTstack", .inferred(what: "PacketLogger format, " + notes))
        }
        // A `.cfa` name is Android's snoop (and Frontline's archive) name. Android's stack asks LE Get Vendor Capabilities
        // as it starts (AOSP gd/hci/controller.cc): a log holding the host's start-up without it is another host's, such
        // as the Realtek headset's own log in the corpus (version read at 8, no Android command).
        if fileName?.hasSuffix(".cfa") == true, hostReadVersionFrame == nil {
            return PlatformIdentity(.android, .inferred(what: "an Android .cfa snoop file name"))
        }
        return nil
    }

    /// PacketLogger's opening notes on Apple devices: `Product: iPhone18,2`, `Bluetooth Host: MobileBluetooth-…`,
    /// `Software: Version 26.5.1 (Build 23F81)`.
    func appleNote() -> PlatformIdentity? {
        guard let host = notes.first(where: { $0.text.hasPrefix("Bluetooth Host: ") || $0.text.hasPrefix("Product: ") }) else {
            return appleMarker() ?? appleSoftwareNote()
        }
        let product = notes.first { $0.text.hasPrefix("Product: ") }.map { String($0.text.dropFirst("Product: ".count)) }
        let software = notes.first { $0.text.hasPrefix("Software: Version ") }.map {
            String($0.text.dropFirst("Software: Version ".count).prefix { $0 != " " })
        }
        let mac = product?.hasPrefix("Mac") == true
        let os = mac ? "macOS" : "iOS"
        let detail = [software.map { os + " " + $0 } ?? os, product].compactMap { $0 }.joined(separator: ", ")
        return PlatformIdentity(.apple, detail: detail, .seen(frame: host.frame, what: "PacketLogger note \"\(host.text.prefix(40))\""))
    }

    /// An older PacketLogger's notes name the software and the controller's firmware, not the product (the audiostream
    /// iPhone log, iOS 12.2: "Firmware Version: BCM43452A2_…" at 230, "Software: Version 12.2 (Build 16E227)" at 231):
    /// Apple's, seen; iOS or macOS, which the version alone does not tell (both have had a 12.2).
    func appleSoftwareNote() -> PlatformIdentity? {
        guard let note = notes.first(where: { $0.text.hasPrefix("Software: Version ") }) else { return nil }
        let version = note.text.dropFirst("Software: Version ".count)
        return PlatformIdentity(
            .apple, detail: "iOS or macOS \(version)", .seen(frame: note.frame, what: "PacketLogger note \"\(note.text.prefix(40))\""))
    }

    /// A note holding one of the platform table's markers (``PlatformBehaviour/logMarker``): macOS's IOBluetooth
    /// registering bluetoothd, PacketLogger losing the iOS device it records from.
    func appleMarker() -> PlatformIdentity? {
        for row in PlatformTable.facts(.logMarker, for: .apple) {
            guard case .text(let marker) = row.value, let note = notes.first(where: { $0.text.contains(marker) }) else { continue }
            return PlatformIdentity(
                .apple, detail: row.versions, .seen(frame: note.frame, what: "PacketLogger note \"\(note.text.prefix(40))\""))
        }
        return nil
    }

    /// The platform whose host alone sends the log's first such vendor command (``PlatformBehaviour/hostVendorCommand``):
    /// an iPhone's log exported as btsnoop (datalink 1001) has no PacketLogger note, but its host's 0xFCE9 names Apple's.
    func hostVendorPlatform() -> PlatformIdentity? {
        guard let (opcode, frame) = hostVendorCommand,
            let row = PlatformTable.rows.first(where: { $0.behaviour == .hostVendorCommand && $0.value.commands.contains(opcode) })
        else { return nil }
        let detail = row.platform == .apple ? "iOS or macOS" : nil
        return PlatformIdentity(
            row.platform, detail: detail,
            .seen(frame: frame, what: "vendor command \(hex(opcode.rawValue, width: 4)), sent only by its host"))
    }

    /// The stack whose start-up the log opens with (``PlatformBehaviour/startupSequence``): inferred, since a fork of
    /// that stack keeps the order too.
    func startupPlatform() -> PlatformIdentity? {
        guard let last = startupLastFrame,
            let row = PlatformTable.rows.first(where: {
                $0.behaviour == .startupSequence && !$0.value.commands.isEmpty && startupCommands.starts(with: $0.value.commands)
            })
        else { return nil }
        return PlatformIdentity(row.platform, .inferred(what: "the start-up sequence of \(row.versions), frames 1–\(last)"))
    }

    /// A BTstack log line: `hci.c.2862: hci_power_control: 1, current mode 0` (file and line first), or its older
    /// lines without them.
    public static func isBTstackLine(_ text: String) -> Bool {
        if text.contains("BTstack") || text.hasPrefix("hci_power_control") { return true }
        guard let colon = text.firstIndex(of: ":") else { return false }
        // `file.c.line` before the colon: a name, `c`, then digits only.
        let parts = text[..<colon].split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[1] == "c", !parts[2].isEmpty else { return false }
        return parts[2].allSatisfy { $0.isNumber }
    }
}
