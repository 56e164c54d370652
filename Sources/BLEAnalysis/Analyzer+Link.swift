import BLECore
import BLEProtocols

/// The one door into a link's facts: HCI events and air link-layer PDUs, translated into the same ``LinkInput``, go
/// through ``feedLink(_:connection:frame:timestamp:source:)`` to the connection's ``LinkMachine``; what it answers (a
/// security verdict, the link's end) is acted on here.
extension Analyzer {
    func feedLink(_ input: LinkInput, connection index: Int, frame: Int, timestamp: Timestamp, source: FactSource? = nil) {
        guard let output = table[index].machine.feed(input, frame: frame, timestamp: timestamp, source: source) else { return }
        switch output {
        case .lifecycle(.closed(let ending)): table.end(index, ending: ending)
        case .lifecycle(.disconnectFailed): break
        case .security(let verdict):
            // A pairing's or an encryption's verdict: evidence the diagnosis reads (the link's encryption is its fact).
            guard let kind = verdict.evidence else { return }
            sink.evidence(kind, frame: frame, timestamp: timestamp, connection: table[index].number)
        }
    }
}

/// The connection table as the HCI machine sees it (``HCILinks``).
extension Analyzer: HCILinks {
    func link(controller: UInt16, handle: UInt16, frame: Int, timestamp: Timestamp, infer: Bool) -> Int? {
        connectionIndex(controller: controller, handle: handle, frame: frame, timestamp: timestamp, infer: infer)
    }

    /// A link an HCI event opened (a connection complete), replacing one still open on its key, within the bounds.
    func openLink(
        controller: UInt16, handle: UInt16, frame: Int, timestamp: Timestamp, isLE: Bool, configure: (inout Connection) -> Void
    ) {
        let key = ConnectionKey(controller: controller, handle: handle)
        if let old = table.lookup(key) {
            // A new Connection Complete on a handle still open: the previous one ended unseen.
            feedLink(
                .lifecycle(.replaced(why: "replaced by a new connection on the same handle", frame: frame, timestamp: timestamp)),
                connection: old, frame: frame, timestamp: timestamp)
        }
        guard table.canRetainAnother else {
            noteLimit(.tooManyConnectionsInCapture(maxRetainedConnections), frame: frame)
            return
        }
        let index = table.openLink(key: key, frame: frame, timestamp: timestamp, inferred: false, gattMap: options.gattMap) {
            $0.isLE = isLE
            configure(&$0)
        }
        identify(index)
    }

    func feed(_ input: LinkInput, link: Int, frame: Int, timestamp: Timestamp, source: FactSource?) {
        feedLink(input, connection: link, frame: frame, timestamp: timestamp, source: source)
    }

    func withMachine(_ link: Int, _ body: (inout LinkMachine) -> Void) { body(&table[link].machine) }

    func completed(_ packets: Int, controller: UInt16, handle: UInt16, at moment: LinkActivity.Moment) {
        if let i = table.lookup(ConnectionKey(controller: controller, handle: handle)) {
            table[i].machine.feed(completed: packets, at: moment)
        }
    }

    func peripheralAddress(link: Int) -> UInt64? { table[link].peripheralAddressValue }

    func qualitySampleCount(link: Int) -> Int { table[link].linkQuality.count }

    /// The number of the connection `handle` names on `controller` (open, or the latest on the handle).
    func number(controller: UInt16, handle: UInt16) -> Int? {
        if let i = table.lookup(ConnectionKey(controller: controller, handle: handle)) { return table[i].number }
        return table.latest(onHandle: handle).map { table[$0].number }
    }
}

/// The connection table as the air router sees it (``AirLinks``).
extension Analyzer: AirLinks {
    func openIndex(handle: UInt16) -> Int? { table.openIndex(handle: handle) }

    func airData(_ f: LLL2CAPFragment, link: Int) {
        table[link].machine.feed(airData: f.direction, bytes: f.payload.count)
        feedL2CAP(f.fragment, connection: link, direction: f.direction, timestamp: f.timestamp)
    }

    func withConnection(_ link: Int, _ body: (inout Connection) -> Void) { body(&table[link]) }
}
