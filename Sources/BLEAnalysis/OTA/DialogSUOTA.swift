import BLECore

/// A SUOTA status notification (`SUOTAR_*` / `SPOTAR_*`, Dialog/Renesas SUOTA specification).
public struct SUOTAStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let serviceStarted = SUOTAStatus(rawValue: 0x01)
    public static let completeOK = SUOTAStatus(rawValue: 0x02)
    public static let serviceExit = SUOTAStatus(rawValue: 0x03)
    public static let imageStarted = SUOTAStatus(rawValue: 0x10)
    public static let names = OTACodeTable<SUOTAStatus>(
        [
            .serviceStarted: "Service started", .completeOK: "Complete OK", .serviceExit: "Service exit",
            .init(rawValue: 0x04): "CRC error", .init(rawValue: 0x05): "Patch length error",
            .init(rawValue: 0x06): "External memory write error", .init(rawValue: 0x07): "Internal memory error",
            .init(rawValue: 0x08): "Invalid memory type", .init(rawValue: 0x09): "Application error",
            .imageStarted: "Image started", .init(rawValue: 0x11): "Invalid image bank",
            .init(rawValue: 0x12): "Invalid image header", .init(rawValue: 0x13): "Invalid image size",
            .init(rawValue: 0x14): "Invalid product header", .init(rawValue: 0x15): "Same image",
            .init(rawValue: 0x16): "External memory read error",
        ],
        unknown: { "Status(\(hex($0.rawValue)))" })
    public var description: String { Self.names[self] }
    /// Statuses that report progress rather than a failure.
    public var isProgress: Bool { [.serviceStarted, .completeOK, .imageStarted].contains(self) }
}

/// A SUOTA memory-device command: the top byte of the u32 written to MEM_DEV.
public struct SUOTAMemoryCommand: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let reboot = SUOTAMemoryCommand(rawValue: 0xFD)
    public static let end = SUOTAMemoryCommand(rawValue: 0xFE)
    public static let abort = SUOTAMemoryCommand(rawValue: 0xFF)
    public static let names = OTACodeTable<SUOTAMemoryCommand>(
        [
            .reboot: "Reboot", .end: "End of transfer", .abort: "Abort", .init(rawValue: 0x00): "System RAM",
            .init(rawValue: 0x01): "Retention RAM", .init(rawValue: 0x02): "SPI flash", .init(rawValue: 0x03): "I2C EEPROM",
            .init(rawValue: 0x12): "I2C EEPROM image", .init(rawValue: 0x13): "SPI flash image",
        ],
        unknown: { "memory \(hex($0.rawValue))" })
    public var description: String { Self.names[self] }
    /// Selects a memory to write an image to: starts an update.
    public var startsUpdate: Bool { rawValue < 0xFD }
}

/// Dialog / Renesas SUOTA (service 0xFEF5): MEM_DEV selects the memory (an update starts), PATCH_LEN
/// sets the block size, the image goes in chunks to PATCH_DATA, SERV_STATUS notifies each block
/// complete (`02`) or an error; MEM_DEV `FE000000` ends the transfer (`02`: image accepted) and
/// `FD000000` reboots the device.
public struct DialogSUOTA: OTAProfile {
    public static let protocolName = OTAProtocol.dialogSUOTA
    public static let memDev = BluetoothUUID("8082CAA8-41A6-4021-91C6-56F9B954CC34")!
    public static let gpioMap = BluetoothUUID("724249F0-5EC3-4B5F-8804-42345AF08651")!
    public static let memInfo = BluetoothUUID("6C53DB25-47A1-45FE-A022-7C92FB334FD4")!
    public static let patchLen = BluetoothUUID("9D84B9A3-000C-49D8-9183-855B673FDA31")!
    public static let patchData = BluetoothUUID("457871E8-D516-4CA1-9116-57D0B17B9CB2")!
    public static let servStatus = BluetoothUUID("5F78DF94-798C-46F5-990A-B3EB6A065C88")!
    public static let status = OTAEndpoint(rawValue: "status")
    public static let blockLength = OTAEndpoint(rawValue: "block-length")
    public static let settings = OTAEndpoint(rawValue: "settings")
    public static let endpoints: [BluetoothUUID: OTAEndpoint] = [
        memDev: .control, gpioMap: settings, memInfo: settings, patchLen: blockLength, patchData: .packet, servStatus: status,
    ]

    var endRequested = false
    var accepted = false
    var rebooted = false
    var aborted = false
    var sent = false

    public init() {}

    static func command(_ v: OTAValue) -> SUOTAMemoryCommand? {
        guard v.endpoint == .control, v.isSent, v.count >= 4 else { return nil }
        return SUOTAMemoryCommand(rawValue: v[3])
    }

    public static func admission(_ v: OTAValue, open: DialogSUOTA?) -> OTAAdmission {
        if let c = command(v), c.startsUpdate {
            if let open, open.sent || open.accepted { return .restart("a new update") }
            return .join
        }
        return open == nil ? .ignore : .join
    }

    public mutating func feed(_ v: OTAValue, _ o: inout OTASessionBuilder) {
        let e = v.event
        if let c = Self.command(v) {
            o.account(e, c.description)
            switch c {
            case .end: o.beginPhase("end", e); endRequested = true
            case .reboot: o.beginPhase("reboot", e); rebooted = true
            case .abort: aborted = true
            default: o.beginPhase("upload", e)
            }
            return
        }
        switch v.endpoint {
        case .packet where v.isSent:
            o.account(e, "patch data")
            o.append(v.bytes, frame: e.frame)
            o.countPacket(e, bytes: v.count)
            sent = true
        case Self.blockLength where v.isSent:
            o.account(e, "patch length \(v.le16(0) ?? 0)")
        case Self.status where !v.isSent:
            guard let first = v.first else { return }
            let s = SUOTAStatus(rawValue: first)
            o.account(e, "status \(s)")
            if s.isProgress {
                o.lastResponseOK = true
                if s == .completeOK && endRequested { accepted = true }
            } else if s == .serviceExit {
                aborted = true
            } else {
                o.fail(code: Int(s.rawValue), name: s.description, finding: "SUOTA status: \(s)", frame: e.frame)
            }
        default:
            o.account(e, v.endpoint.description)
        }
    }

    public func finish(_ o: inout OTASessionBuilder, why: String, frame: Int) {
        if let failure = o.standingFailure {
            o.session.result = failure
        } else if aborted && !accepted {
            o.session.result = .aborted("SUOTA abort or service exit")
        } else if accepted {
            o.session.result = .success
        } else {
            o.cut(why, frame: frame)
        }
    }
}
