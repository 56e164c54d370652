import BLECore
import BLEProtocols

/// The links as the record's path and the machines beside them reach them: found by (controller, handle), opened by a
/// connection event, inferred for traffic on a handle no event named (within the bounds), fed their ``LinkInput``s
/// (what their ``LinkMachine`` answers acted on: the link's end, a security verdict's evidence) and their ACL
/// fragments (held bytes counted first). The ``HCIMachine`` and the ``AirLinkRouter`` reach them only through here
/// (``HCILinks``, ``AirLinks``).
extension ConnectionTable {
    /// The open link on (controller, handle); with `infer`, one opened for traffic without a Connection Complete.
    /// The lookup is inlined into the per-packet callers (out of line it showed in profiles:
    /// docs/performance.md#analyzer); opening stays out of line.
    @inline(__always)
    func link(controller: UInt16, handle: UInt16, frame: Int, timestamp: Timestamp, infer: Bool) -> Int? {
        let key = Key(controller: controller, handle: handle)
        if let i = lookup(key) { return i }
        guard infer else { return nil }
        return inferLink(key, frame: frame, timestamp: timestamp)
    }

    /// A link opened for traffic on a key no Connection Complete named (within the bounds), with its finding.
    @inline(never)
    private func inferLink(_ key: Key, frame: Int, timestamp: Timestamp) -> Int? {
        guard canRetainAnother else {
            sink.noteLimit(.tooManyConnectionsInCapture(maxRetained), frame: frame)
            return nil
        }
        guard openCount < maxConnections else {
            sink.findings.append(Finding(.warning, .tooManyConnections(maxConnections), frame: frame))
            return nil
        }
        let index = openLink(key: key, frame: frame, timestamp: timestamp, inferred: true, gattMap: gattMap) { _ in }
        if noteInferred(key) { sink.findings.append(Finding(.info, .connectionInferred(key.handle), frame: frame)) }
        return index
    }

    /// One input into link `index`'s ``LinkMachine``; what it answers is acted on: the link's end closes it, a pairing's
    /// or an encryption's verdict is evidence the diagnosis reads (the link's encryption is its fact).
    func feedLink(_ input: LinkInput, connection index: Int, frame: Int, timestamp: Timestamp, source: FactSource? = nil) {
        guard let output = self[index].machine.feed(input, frame: frame, timestamp: timestamp, source: source) else { return }
        switch output {
        case .lifecycle(.closed(let ending)): end(index, ending: ending)
        case .lifecycle(.disconnectFailed): break
        case .security(let verdict):
            guard let kind = verdict.evidence else { return }
            sink.evidence(kind, frame: frame, timestamp: timestamp, connection: self[index].number)
        }
    }

    /// The peer address of connection `number` (1-based) as far as the pass has read (a timeline filter asks per event).
    func peerAddress(ofConnection number: Int) -> String? {
        number >= 1 && number <= count ? self[number - 1].peerAddress : nil
    }
}

/// The links as the HCI machine sees them (``HCILinks``).
extension ConnectionTable: HCILinks {
    /// A link an HCI event opened (a connection complete), replacing one still open on its key, within the bounds.
    func openLink(
        controller: UInt16, handle: UInt16, frame: Int, timestamp: Timestamp, isLE: Bool, configure: (inout Connection) -> Void
    ) {
        let key = Key(controller: controller, handle: handle)
        if let old = lookup(key) {
            // The link's own first packets, logged just ahead of its Connection Complete: the same link.
            if adopt(old, frame: frame, timestamp: timestamp, isLE: isLE, configure: configure) { return }
            // A new Connection Complete on a handle still open: the previous one ended unseen.
            feedLink(
                .lifecycle(.replaced(why: "replaced by a new connection on the same handle", frame: frame, timestamp: timestamp)),
                connection: old, frame: frame, timestamp: timestamp)
        }
        guard canRetainAnother else {
            sink.noteLimit(.tooManyConnectionsInCapture(maxRetained), frame: frame)
            return
        }
        _ = openLink(key: key, frame: frame, timestamp: timestamp, inferred: false, gattMap: gattMap) {
            // Known from its first event: LE Connection Complete, Connection Complete, CONNECT_IND.
            _ = $0.machine.feed(.transport(isLE ? .le : .bredr), frame: frame, timestamp: timestamp)
            configure(&$0)
        }
    }

    func feed(_ input: LinkInput, link: Int, frame: Int, timestamp: Timestamp, source: FactSource?) {
        feedLink(input, connection: link, frame: frame, timestamp: timestamp, source: source)
    }

    func withMachine(_ link: Int, _ body: (inout LinkMachine) -> Void) { body(&self[link].machine) }

    func completed(_ packets: Int, controller: UInt16, handle: UInt16, at moment: LinkActivity.Moment) {
        if let i = lookup(Key(controller: controller, handle: handle)) { self[i].machine.feed(completed: packets, at: moment) }
    }

    func peripheralAddress(link: Int) -> UInt64? { self[link].peripheralAddressValue }

    func link(controller: UInt16, peer: String) -> Int? { openLink(controller: controller, peer: peer) }

    func connectionNumber(link: Int) -> Int { self[link].number }

    func peer(link: Int) -> String? { self[link].peerAddress }

    func openLinks(controller: UInt16) -> [Int] { open.filter { $0.key.controller == controller }.map(\.value).sorted() }

    func qualitySampleCount(link: Int) -> Int { self[link].linkQuality.count }

    /// Hands `event` to the sink (``AnalysisSink/emit(_:waiting:)``) with the number of the connection its handle
    /// names; returns its queue id, -1 if sent.
    @discardableResult
    func emit(_ event: consuming TimelineEvent, waiting: Bool) -> Int {
        if event.connectionNumber == nil, let h = event.connection, let i = latest(onHandle: h) {
            event.connectionNumber = self[i].number
        }
        return sink.emit(event, waiting: waiting)
    }

    /// The number of the connection `handle` names on `controller` (open, or the latest on the handle).
    func number(controller: UInt16, handle: UInt16) -> Int? {
        if let i = lookup(Key(controller: controller, handle: handle)) { return self[i].number }
        return latest(onHandle: handle).map { self[$0].number }
    }
}

/// The links as the air router sees them (``AirLinks``; `openIndex(handle:)` is the table's own).
extension ConnectionTable: AirLinks {
    func airData(_ f: LLL2CAPFragment, link: Int) {
        self[link].machine.feed(airData: f.direction, bytes: f.payload.count)
        feedL2CAP(f.fragment, connection: link, direction: f.direction)
    }

    func withConnection(_ link: Int, _ body: (inout Connection) -> Void) { body(&self[link]) }
}
