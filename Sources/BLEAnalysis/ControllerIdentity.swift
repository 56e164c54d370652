import BLECore
import BLEProtocols

/// Who made a controller, as the capture tells it, and where it said so.
public struct ControllerIdentity: Hashable, Sendable {
    public enum Source: String, Hashable, Sendable {
        /// The Command Complete of Read Local Version Information (Core Spec 5.4 Vol 4, Part E, 7.4.1).
        case readLocalVersionInformation = "read_local_version"
        /// A Linux monitor Index Info record (BlueZ `src/shared/btsnoop.h`, opcode 10: address, manufacturer).
        case monitorIndexInfo = "monitor_index_info"
    }
    /// The controller index (0 in single-controller formats).
    public var controller: UInt16
    public var manufacturer: ControllerManufacturer
    /// The version numbers, when they came from Read Local Version Information.
    public var version: ReadLocalVersionInformationReturn?
    public var frame: Int
    public var source: Source
}

/// How many vendor-specific commands and events each controller exchanged, named from the vendor tables.
///
/// Counted as the records arrive by opcode (commands) and by leading parameter byte (events), and named at the end
/// with the manufacturer the capture finally gave for the controller: a controller keeps its maker for the whole
/// log, and Android logs often send the firmware download (Broadcom Write Firmware, Launch RAM) before the host
/// reads the version. The timeline names each record as of its frame instead, as tshark and btmon do.
public struct VendorActivity: Hashable, Sendable {
    public struct Entry: Hashable, Sendable {
        public var controller: UInt16
        /// The opcode, for a command.
        public var opcode: HCICommand?
        /// The first parameter byte, for an event (nil for an event without parameters).
        public var eventCode: UInt8?
        /// The vendor table's name; nil when no table names the code.
        public var name: VendorSpecificName?
        public var count: Int
        public var firstFrame: Int

        /// `Broadcom Launch RAM`, or the raw form: `Vendor Command (OCF 0x01F1)`, `event 0x1b`.
        public var label: String {
            if let name { return name.description }
            if let opcode { return opcode.name(manufacturer: nil) }
            return eventCode.map { "event \(hex($0))" } ?? "event without parameters"
        }
    }
    /// Commands, most frequent first (then by first frame).
    public var commands: [Entry] = []
    /// Events, most frequent first (then by first frame).
    public var events: [Entry] = []
    public init() {}
    public var isEmpty: Bool { commands.isEmpty && events.isEmpty }
}

/// The counting behind ``VendorActivity``: one dictionary entry per (controller, opcode) and per (controller,
/// leading event bytes); bounded by the code space (1,024 vendor opcodes and 256 event codes per controller).
struct VendorTally {
    struct Key: Hashable {
        var controller: UInt16
        var isCommand: Bool
        var code: UInt16
    }
    struct Count {
        var count = 0
        var firstFrame = 0
        /// The parameters of the first one, to name sub-commands and multi-byte event prefixes at the end.
        var firstParameters: [UInt8] = []
    }
    var counts: [Key: Count] = [:]
    /// Bounded per key already; the number of controllers is bounded by the 16-bit index.
    static let keptParameterBytes = 4

    mutating func command(_ opcode: HCICommand, controller: UInt16, frame: Int, parameters: [UInt8]) {
        note(Key(controller: controller, isCommand: true, code: opcode.rawValue), frame: frame, parameters: parameters)
    }
    mutating func event(parameters: [UInt8], controller: UInt16, frame: Int) {
        // An event without parameters keeps the key 0x100, apart from every leading byte.
        note(
            Key(controller: controller, isCommand: false, code: parameters.first.map(UInt16.init) ?? 0x100), frame: frame,
            parameters: parameters)
    }
    private mutating func note(_ key: Key, frame: Int, parameters: [UInt8]) {
        counts[key, default: Count()].count += 1
        if counts[key]!.count == 1 {
            counts[key]!.firstFrame = frame
            counts[key]!.firstParameters = Array(parameters.prefix(Self.keptParameterBytes))
        }
    }

    func activity(manufacturers: [UInt16: ControllerManufacturer]) -> VendorActivity {
        var result = VendorActivity()
        for (key, c) in counts {
            let manufacturer = manufacturers[key.controller]
            if key.isCommand {
                let opcode = HCICommand(key.code)
                // Sub-commands are not split in the tally: the command is named at its opcode.
                let name = VendorSpecific.command(opcode, manufacturer: manufacturer)
                result.commands.append(
                    .init(
                        controller: key.controller, opcode: opcode, eventCode: nil, name: name, count: c.count,
                        firstFrame: c.firstFrame))
            } else {
                let name = VendorSpecific.event(parameters: c.firstParameters, manufacturer: manufacturer)
                result.events.append(
                    .init(
                        controller: key.controller, opcode: nil, eventCode: key.code > 0xFF ? nil : UInt8(key.code),
                        name: name, count: c.count, firstFrame: c.firstFrame))
            }
        }
        let order: (VendorActivity.Entry, VendorActivity.Entry) -> Bool = {
            ($0.count, -$0.firstFrame) > ($1.count, -$1.firstFrame)
        }
        result.commands.sort(by: order)
        result.events.sort(by: order)
        return result
    }
}
