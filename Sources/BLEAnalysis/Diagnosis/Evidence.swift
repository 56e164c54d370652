import BLECapture
import BLECore
import BLEProtocols

/// Everything the diagnosis rules read about one capture: the evidence events in frame order, the connections with
/// their link facts (``Connection/link``) and activity (``Connection/activity``), what the capture cannot show
/// (``CaptureCompleteness``) and the findings of the decoder. Rules are pure functions of it.
public struct Evidence: Sendable {
    public var events: [EvidenceEvent]
    public var connections: [Connection]
    /// What the log cannot show (cut payloads, gaps, resets, connections outside it), when the pass computed it.
    public var completeness: CaptureCompleteness?
    /// The capture reader's and the analyzer's findings.
    public var findings: [Finding]
    public var records: Int
    public var firstTime: Timestamp?
    public var lastTime: Timestamp?
    public var lastFrame: Int
    /// The capture's file name (an Android `.last` file is the older half of a rotated log).
    public var fileName: String?
    /// The platform whose stack the log was taken on (``PlatformClues/identify()``), when the log says: the rules
    /// ask ``PlatformTable`` whether a value is its routine.
    public var platform: PlatformIdentity?
    /// Air captures (a sniffer's link-layer records) rather than one host's HCI log.
    public var isAirCapture: Bool
    public var controllers: [UInt16: ControllerIdentity]
    /// The name each controller's host gave it (``LocalName``).
    public var localNames: [UInt16: LocalName] = [:]
    /// Controller ACL buffers per controller, from (LE) Read Buffer Size: (packet length, packets).
    public var aclBuffers: [UInt16: (length: Int, packets: Int)]
    /// Evidence events not kept (the log's bound, ``EvidenceLog/capacity``).
    public var eventsDropped: Int
    /// Throughput streams with their verdicts, when the pass measured them.
    public var throughput: [ThroughputStream]?
    /// The isochronous channels (CIS/BIS streams, their life and health) and the audio profiles on GATT (ASE
    /// operations, BASS), for the LE Audio rules (`Rules/LEAudio/`).
    public var iso: ISOAnalysis?
    public var leAudio: LEAudioProfiles?
    /// Firmware updates, when the pass followed them (the report): a link that ends right after a successful update is
    /// the device rebooting into it.
    public var otaSessions: [OTASession]?
    /// SCO/eSCO links and (later) the BR/EDR audio profiles (``ClassicAnalysis``).
    public var classic = ClassicAnalysis()
    /// The peers' names, one per address, with the frame each came from (``PeerNames``).
    public var peerNames = PeerNames()
    /// The scenarios the capture is the scene of (``Scenarios``), recognised by the engine before the rules run (nil:
    /// not yet).
    public var scenarios: Scenarios?

    public init(
        events: [EvidenceEvent], connections: [Connection], completeness: CaptureCompleteness? = nil, findings: [Finding] = [],
        records: Int = 0, firstTime: Timestamp? = nil, lastTime: Timestamp? = nil, lastFrame: Int = 0, fileName: String? = nil,
        isAirCapture: Bool = false, controllers: [UInt16: ControllerIdentity] = [:],
        aclBuffers: [UInt16: (length: Int, packets: Int)] = [:], eventsDropped: Int = 0, throughput: [ThroughputStream]? = nil
    ) {
        self.events = events
        self.connections = connections
        self.completeness = completeness
        self.findings = findings
        self.records = records
        self.firstTime = firstTime
        self.lastTime = lastTime
        self.lastFrame = lastFrame
        self.fileName = fileName
        self.isAirCapture = isAirCapture
        self.controllers = controllers
        self.aclBuffers = aclBuffers
        self.eventsDropped = eventsDropped
        self.throughput = throughput
    }

    /// The connection numbered `number` (1-based).
    public func connection(_ number: Int?) -> Connection? {
        guard let number, number >= 1, number <= connections.count, connections[number - 1].number == number else {
            return number.flatMap { n in connections.first { $0.number == n } }
        }
        return connections[number - 1]
    }

    /// The events of connection `number`, in frame order.
    public func events(of number: Int) -> [EvidenceEvent] { events.filter { $0.connection == number } }

    /// The last event before `frame` matching `predicate`.
    public func last(before frame: Int, where predicate: (EvidenceEvent) -> Bool) -> EvidenceEvent? {
        var found: EvidenceEvent? = nil
        for e in events {
            if e.frame >= frame { break }
            if predicate(e) { found = e }
        }
        return found
    }

    /// The first event after `frame` matching `predicate`.
    public func first(after frame: Int, where predicate: (EvidenceEvent) -> Bool) -> EvidenceEvent? {
        events.first { $0.frame > frame && predicate($0) }
    }

    /// A device's name for the messages: the peer's identity or address (`C5:34:1A:…`), after the name the capture gave
    /// that address (`WH-1000XM4 (94:DB:56:5F:D3:62)`), else the connection's number.
    public func deviceName(_ c: Connection?) -> String {
        guard let c else { return "the device" }
        guard let a = c.peerIdentity ?? c.peerAddress else { return "connection #\(c.number) (handle \(hex(c.handle, width: 4)))" }
        return label(a, name: peerName(c))
    }

    /// The name the capture gave the connection's peer: by the address the link used, else by its identity address.
    public func peerName(_ c: Connection) -> PeerName? { peerNames.name(for: c.peerAddress) ?? peerNames.name(for: c.peerIdentity) }

    /// `WH-1000XM4 (94:DB:56:5F:D3:62)` for an address the capture names, the address alone otherwise.
    public func peerLabel(_ address: String) -> String { label(address, name: peerNames.name(for: address)) }

    /// `Nordic_LBS (C0:48:FF:F5:9D:B8, random)` for an address that carries its type (`C0:48:FF:F5:9D:B8 (random)`).
    private func label(_ address: String, name: PeerName?) -> String {
        guard let name else { return address }
        let typed =
            address.count > 17 && address.hasSuffix(")") ? address.prefix(17) + ", " + address.dropFirst(19).dropLast() : address[...]
        return "\(name.shown) (\(typed))"
    }
}
