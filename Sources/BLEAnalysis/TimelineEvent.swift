import BLECodecs
import BLECore
import BLEProtocols

/// The protocol layer an event belongs to.
public struct Layer: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public static let hci = Layer(rawValue: "hci")
    public static let l2cap = Layer(rawValue: "l2cap")
    public static let att = Layer(rawValue: "att")
    public static let smp = Layer(rawValue: "smp")
    public static let ll = Layer(rawValue: "ll")
    public static let note = Layer(rawValue: "note")
    /// HCI ISO data packets (the isochronous channels' SDUs).
    public static let iso = Layer(rawValue: "iso")
    public var description: String { rawValue }
}

/// The name and type of a fact a timeline event can carry besides its own fields, as SwiftUI names its environment
/// values: a new timeline column declares its key beside the analyzer line that sets it
/// (`extension TimelineEvent { static let rssi = TimelineExtraKey<Int>("rssi") }`), and one entry of the column table
/// renders it (`TimelineColumns.extra`), with its key in the schema: two files and the schema.
public struct TimelineExtraKey<Value: Sendable>: Hashable, Sendable {
    public let name: String
    public init(_ name: String) { self.name = name }
}

/// One line of the timeline: something a host, controller or peer said, decoded.
///
/// Owned (no borrowed bytes), so it can wait in the pairing queue until its response is seen.
public struct TimelineEvent: Sendable {
    /// The record at which the event completed (for a fragmented L2CAP PDU, its last fragment), as Wireshark numbers it.
    public var frame: Int
    public var timestamp: Timestamp
    /// Connection handle, when the event belongs to a connection.
    public var connection: UInt16?
    /// 1-based number of the connection in the capture (see ``Connection/number``).
    public var connectionNumber: Int?
    public var direction: Direction
    public var layer: Layer
    /// Layer-specific code: ATT opcode, HCI command opcode or event code, SMP code, signalling code.
    public var code: UInt32?
    /// Name of the PDU/command/event: "Handle Value Notification", "LE Connection Complete".
    public var name: String
    /// Decoded parameters for people: `handle=0x002a status=Success`.
    public var summary: String {
        get {
            if let summaryHandle { return "handle=" + hex(summaryHandle, width: 4) }
            if let deferred = details?.fields.deferredSummary { return deferred.text }
            return summaryText
        }
        set {
            summaryText = newValue
            summaryHandle = nil
            if details?.fields.deferredSummary != nil { updateDetails { $0.deferredSummary = nil } }
        }
    }
    /// A summary made from decoded parameters only when it is read: on the rendering thread, for `timeline --format
    /// jsonl` (``deferredSummary``).
    public enum DeferredSummary: Sendable {
        /// ``HCIEventParameters/summary(manufacturer:)``.
        case hciEvent(HCIEventParameters, ControllerManufacturer?)

        var text: String {
            switch self {
            case .hciEvent(let parameters, let manufacturer): parameters.summary(manufacturer: manufacturer)
            }
        }
    }
    /// The one entry of a Number Of Completed Packets event whose summary is still deferred: the page's rows find the
    /// summary's string by these two numbers instead of building `handle=0x0040 completed=1` per event
    /// (docs/performance.md#embedded-timeline).
    package var completedPacketsEntry: NumberOfCompletedPackets.Entry? {
        guard case .hciEvent(.numberOfCompletedPackets(let n), _)? = details?.fields.deferredSummary, n.entries.count == 1
        else { return nil }
        return n.entries[0]
    }
    /// Set when the summary is just `handle=0x002a` (a value PDU: notifications and writes, most of a timeline); the
    /// JSON Lines renderer writes it from the number, instead of building that String per event (`hex` and two
    /// appends; docs/performance.md#timeline-event).
    package private(set) var summaryHandle: UInt16?
    private var summaryText: String
    // ATT
    public var handle: UInt16?
    /// Every handle a list-carrying PDU names (Read By Type/Group Type, Find Information responses, …).
    public var handles: [UInt16]? {
        get { details?.fields.handles }
        set { setDetail(\.handles, newValue) }
    }
    /// The values of a list-carrying response, in the order of ``handles``' entries.
    public var values: [[UInt8]]? {
        get { details?.fields.values }
        set { setDetail(\.values, newValue) }
    }
    public var value: [UInt8]?
    public var uuid: BluetoothUUID? {
        get { details?.fields.uuid }
        set { setDetail(\.uuid, newValue) }
    }
    /// Name of the attribute (characteristic or descriptor) the handle refers to, when known.
    public var attributeName: String? {
        get { details?.fields.attributeName }
        set { setDetail(\.attributeName, newValue) }
    }
    public var nameSource: GATTSource? {
        get { details?.fields.nameSource }
        set { setDetail(\.nameSource, newValue) }
    }
    public var requestFrame: Int?
    public var responseFrame: Int?
    /// Request → response (or command → complete/status) latency.
    public var latency: Int64?
    public var status: String? {
        get { details?.fields.status }
        set { setDetail(\.status, newValue) }
    }
    /// What a codec made of the value (SIG built-in or a YAML spec).
    public var decoded: DecodedValue? {
        get { details?.fields.decoded }
        set { setDetail(\.decoded, newValue) }
    }
    public var isRequest = false
    /// Decoded numeric fields of an event that has no codec (a Bluetooth Quality Report's RSSI, counters…),
    /// as (JSON key, value) in wire order.
    public var fields: [(String, Int64)]? {
        get { details?.fields.fields }
        set { setDetail(\.fields, newValue) }
    }
    /// ATT events: the bearer that carried the PDU and the CID in its L2CAP header (0x0004 on the LE fixed channel).
    public var bearer: ATTBearerKind?
    public var cid: UInt16?

    /// A fact set through its typed key (``TimelineExtraKey``): `e[extra: TimelineEvent.valueLength] = 20`. Kept in the
    /// boxed fields, so only the events that carry one pay for it.
    public subscript<Value: Sendable>(extra key: TimelineExtraKey<Value>) -> Value? {
        get { details?.fields.extras?[key.name] as? Value }
        set {
            guard newValue != nil || details?.fields.extras?[key.name] != nil else { return }
            updateDetails { f in
                var extras = f.extras ?? [:]
                if let newValue { extras[key.name] = newValue } else { extras.removeValue(forKey: key.name) }
                f.extras = extras.isEmpty ? nil : extras
            }
        }
    }

    /// The fields most events leave nil (a notification or a write sets none of them), out of line: nil, or a box
    /// holding at least one of them. Inline they made the event three times as large, and the event is moved several
    /// times between the decoder and the rendering thread's batch (docs/performance.md#timeline-event). The box is
    /// immutable (so the event stays a plain `Sendable` value): a change makes a new one, which only the rare events pay.
    private var details: Details?

    /// True when none of the boxed fields (``handles``, ``values``, ``uuid``, ``attributeName``, ``nameSource``,
    /// ``status``, ``decoded``, ``fields``) is set: one test for the renderers instead of eight.
    package var hasNoDetails: Bool { details == nil }

    struct DetailFields: Sendable {
        var handles: [UInt16]?
        var values: [[UInt8]]?
        var uuid: BluetoothUUID?
        var attributeName: String?
        var nameSource: GATTSource?
        var status: String?
        var decoded: DecodedValue?
        var fields: [(String, Int64)]?
        var deferredSummary: DeferredSummary?
        /// Facts set through typed keys (``TimelineExtraKey``), by key name.
        var extras: [String: any Sendable]?

        var isEmpty: Bool {
            handles == nil && values == nil && uuid == nil && attributeName == nil && nameSource == nil && status == nil
                && decoded == nil && fields == nil && deferredSummary == nil && extras == nil
        }
    }

    final class Details: Sendable {
        let fields: DetailFields
        init(_ fields: DetailFields) { self.fields = fields }
    }

    /// Sets one boxed field; setting nil where there is no box leaves it absent (no box made for nothing).
    @inline(__always)
    mutating func setDetail<Value>(_ field: WritableKeyPath<DetailFields, Value?>, _ value: Value?) {
        guard value != nil || details != nil else { return }
        updateDetails { $0[keyPath: field] = value }
    }

    /// Changes boxed fields: one new box for all the changes `body` makes.
    mutating func updateDetails(_ body: (inout DetailFields) -> Void) {
        var f = details?.fields ?? DetailFields()
        body(&f)
        details = f.isEmpty ? nil : Details(f)
    }

    public init(
        frame: Int, timestamp: Timestamp, connection: UInt16?, direction: Direction, layer: Layer,
        code: UInt32?, name: String, summary: String
    ) {
        self.frame = frame
        self.timestamp = timestamp
        self.connection = connection
        self.direction = direction
        self.layer = layer
        self.code = code
        self.name = name
        self.summaryText = summary
    }

    /// An event whose summary is made when it is read (``DeferredSummary``): the summaries of HCI events (Number Of
    /// Completed Packets: a list joined into a String) are then made on the rendering thread of `timeline --format
    /// jsonl`, not the decoding one (docs/performance.md#timeline-event).
    public init(
        frame: Int, timestamp: Timestamp, connection: UInt16?, direction: Direction, layer: Layer,
        code: UInt32?, name: String, deferredSummary: DeferredSummary
    ) {
        self.init(
            frame: frame, timestamp: timestamp, connection: connection, direction: direction, layer: layer, code: code,
            name: name, summary: "")
        updateDetails { $0.deferredSummary = deferredSummary }
    }

    /// An event whose summary is `handle=0x002a` (``summaryHandle``), kept as the number until rendered.
    public init(
        frame: Int, timestamp: Timestamp, connection: UInt16?, direction: Direction, layer: Layer,
        code: UInt32?, name: String, summaryHandle: UInt16
    ) {
        self.init(
            frame: frame, timestamp: timestamp, connection: connection, direction: direction, layer: layer, code: code,
            name: name, summary: "")
        self.summaryHandle = summaryHandle
    }
}
