import BLECodecs
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

    /// 0xFFFF is no company: Assigned Numbers reserve it for devices without one, and test controllers answer it.
    public var hasNoCompany: Bool { manufacturer.rawValue == 0xFFFF }
    /// The maker's assigned company name; nil when the id has none.
    public var companyName: String? { AssignedNumbers.companyName(manufacturer.rawValue) }
    /// `4.1`, `5.3`: nil when only a monitor Index Info named the maker.
    public var hciVersionName: String? { version.map { ReadLocalVersionInformationReturn.versionName($0.hciVersion) } }
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
    /// Quality reports naming a handle no connection has: a vendor event opens no link. They are held (at most
    /// ``maxHeldReports``) for the link that traffic on the handle opens later (a link up before the capture began);
    /// those no link claims are counted, with the first, and said once.
    private var heldReports: [UInt32: [LinkQualitySample]] = [:]
    private var heldReportCount = 0
    static let maxHeldReports = 1024
    private(set) var reportsWithoutLink = 0
    private(set) var firstReportWithoutLink: Int?
    /// Bounded per key already; the number of controllers is bounded by the 16-bit index.
    static let keptParameterBytes = 4

    mutating func command(_ opcode: HCICommand, controller: UInt16, frame: Int, parameters: [UInt8]) {
        note(Key(controller: controller, isCommand: true, code: opcode.rawValue), frame: frame, parameters: parameters)
    }
    /// A report on a handle no connection has.
    mutating func holdReport(_ sample: LinkQualitySample, controller: UInt16, handle: UInt16) {
        guard heldReportCount < Self.maxHeldReports else { return unclaimed(1, first: sample.frame) }
        heldReports[UInt32(controller) << 16 | UInt32(handle), default: []].append(sample)
        heldReportCount += 1
    }

    /// The reports held for a link that traffic on (controller, handle) opened (`claim`), or dropped as no link's when
    /// a Connection Complete opens a new one there.
    mutating func takeReports(controller: UInt16, handle: UInt16, claim: Bool) -> [LinkQualitySample] {
        guard let held = heldReports.removeValue(forKey: UInt32(controller) << 16 | UInt32(handle)) else { return [] }
        heldReportCount -= held.count
        if claim { return held }
        unclaimed(held.count, first: held[0].frame)
        return []
    }

    private mutating func unclaimed(_ n: Int, first: Int) {
        reportsWithoutLink += n
        firstReportWithoutLink = min(firstReportWithoutLink ?? first, first)
    }

    /// Said once at the end: the quality reports no connection claimed.
    mutating func reportsWithoutLinkFinding() -> Finding? {
        for held in heldReports.values { unclaimed(held.count, first: held[0].frame) }
        heldReports = [:]
        heldReportCount = 0
        guard let first = firstReportWithoutLink else { return nil }
        return Finding(
            .info,
            FindingKind(
                .hciBQRWithoutConnection,
                message:
                    "\(reportsWithoutLink) Bluetooth Quality Report\(reportsWithoutLink == 1 ? "" : "s") named a handle no open connection has (first at frame \(first)): "
                    + "kept in the timeline, not taken as connections (a vendor event opens no link)"),
            frame: first)
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
