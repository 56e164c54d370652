import BLECodecs
import BLECore
import BLEProtocols

/// Decoding state of one open connection. A class so the hot path mutates it in place (one reference per connection,
/// held by ``ConnectionTable/states``; its ATT bearers are values inside it).
final class ConnectionState {
    /// The connection's identity, set once when it opens (`Analyzer.identify(_:)`), so the per-packet path names it
    /// without reaching into `Connection`. Link facts are not copied here: they live in `Connection.link` alone.
    var handle: UInt16 = 0
    var number = 0
    /// Handle (+ 0x10000 for this side's own database) → what names it; cleared when a database changes.
    var attributes: [UInt32: AttributeInfo] = [:]
    /// A small direct-mapped cache in front of `attributes`: bulk traffic repeats a few handles, and
    /// hashing each value's handle was a visible share of a report's time.
    /// Allocated when the connection first names an attribute twice: 3 KiB each for the 4,096 connections a
    /// hostile capture can keep open would be 13 MB of caches for connections that never carry a value.
    static let attributeSlotCount = 64
    var slotKeys: [UInt32] = []
    var slotInfos: [AttributeInfo] = []
    /// The last attribute named, in front of the slots: bulk traffic sends runs of values on one handle, and this
    /// answers them with one comparison (no hashing, no bounds or emptiness checks on the slot arrays).
    var lastAttributeKey: UInt32 = .max
    /// Handles no discovery named that were written a Client Characteristic Configuration value (01 00, 02 00, 03 00):
    /// the frame and the bits, until notifications or indications of the handle before show them a CCCD
    /// (``Analyzer/learnCCCD(_:kind:handle:in:)``).
    var cccdCandidates: [UInt16: (frame: Int, bits: UInt8)] = [:]
    var lastAttribute = AttributeInfo(uuid: nil, service: nil, hasUserName: false, source: .discovery, codecPossible: false)
    var tx = L2CAPReassembler()
    var rx = L2CAPReassembler()
    var unknown = L2CAPReassembler()
    /// The ATT bearer on the LE fixed channel 0x0004.
    var bearer = ATTBearer()
    /// The L2CAP channels: which decoder each PDU goes to, the dynamic channels the signalling opened, credits and SDUs.
    var channels: ChannelMux
    /// The ATT bearers on dynamic channels (BR/EDR PSM 0x001F, EATT), in the order the mux opened them.
    var bearers: [ATTBearer] = []
    /// What was carried against what was decoded (see ``DecodeHealth``).
    var decode = DecodeCounts()

    init(creditBudget: CreditChannelBudget) { channels = ChannelMux(creditBudget: creditBudget) }

    /// Every ATT bearer: the fixed one first.
    var allBearers: [ATTBearer] { [bearer] + bearers }

    /// The bearer in `slot`, changed in place.
    subscript(bearer slot: ATTBearerSlot) -> ATTBearer {
        // `_read`, not `get`: reading one field (`.kind`, `.pending[key]`) through a getter copied the whole bearer and
        // counted its dictionaries and buffers (docs/performance.md#analyzer).
        @inline(__always) _read {
            switch slot {
            case .fixed: yield bearer
            case .dynamic(let i): yield bearers[i]
            }
        }
        @inline(__always) _modify {
            switch slot {
            case .fixed: yield &bearer
            case .dynamic(let i): yield &bearers[i]
            }
        }
    }

    /// One fragment into the reassembler of the L2CAP stream sent in `direction` (a switch, not a `_modify` subscript:
    /// the subscript's coroutine was not inlined).
    @inline(__always)
    func feed(_ fragment: L2CAPFragment, direction: Direction, findings: inout [Finding]) -> L2CAPReassembler.Step {
        switch direction {
        case .tx: tx.feed(fragment, findings: &findings)
        case .rx: rx.feed(fragment, findings: &findings)
        case .unknown: unknown.feed(fragment, findings: &findings)
        }
    }

    /// Hands out the PDU the stream in `direction` reassembled (``L2CAPReassembler/deliverReassembled(_:)``).
    func deliverReassembled(direction: Direction, _ body: (L2CAPPDU) -> Void) {
        switch direction {
        case .tx: tx.deliverReassembled(body)
        case .rx: rx.deliverReassembled(body)
        case .unknown: unknown.deliverReassembled(body)
        }
    }

    /// A request (or indication) waiting on another bearer that `opcode` would answer: the response came on the wrong bearer.
    func pendingElsewhere(_ key: TransactionKey, answeredBy opcode: ATTOpcode, except: ATTBearerSlot) -> (ATTBearer, ATTBearer.Pending)? {
        guard !bearers.isEmpty else { return nil }
        let slots = [ATTBearerSlot.fixed] + bearers.indices.map { .dynamic($0) }
        for slot in slots where slot != except {
            let b = self[bearer: slot]
            if let p = b.pending[key],
                opcode == .errorResponse || p.opcode.responseOpcode == opcode
                    || (opcode.method == .confirmation && p.opcode == .handleValueIndication)
            {
                return (b, p)
            }
        }
        return nil
    }

    /// A database changed: what names its handles must be looked up again.
    func forgetAttributes() {
        attributes.removeAll(keepingCapacity: true)
        for i in slotKeys.indices { slotKeys[i] = .max }
        lastAttributeKey = .max
    }

    /// Bytes this connection holds for unfinished PDUs, long reads and prepared writes.
    var heldBytes: Int {
        var total = tx.bufferedBytes + rx.bufferedBytes + unknown.bufferedBytes
        for b in allBearers { total += b.heldBytes }
        return total
    }

    /// Drops all unfinished work (the analyzer's memory budget ran out).
    func shed() {
        tx.abandon()
        rx.abandon()
        unknown.abandon()
        bearer.shed()
        for i in bearers.indices { bearers[i].shed() }
    }

    func finishReassembly(findings: inout [Finding], frame: Int) {
        var cut: [Finding] = []
        if tx.inProgress { tx.finish(findings: &cut, frame: frame) }
        if rx.inProgress { rx.finish(findings: &cut, frame: frame) }
        if unknown.inProgress { unknown.finish(findings: &cut, frame: frame) }
        for f in cut { decode.countReassembly(f) }
        findings += cut
    }
}

/// What the GATT database says about a handle, cached per connection.
struct AttributeInfo {
    var uuid: BluetoothUUID?
    var service: BluetoothUUID?
    /// The user's map names it (looked up when an event needs the name): no string in here keeps a copy
    /// of this struct free of reference counting.
    var hasUserName: Bool
    var source: GATTSource
    /// Some codec could decode this attribute's values (see `CodecRegistry.mayDecode`).
    var codecPossible: Bool
}

extension Analyzer {
    /// Gives a newly opened connection's decoding state its identity (handle and number).
    func identify(_ index: Int) {
        guard let state = table.states[index] else { return }
        state.handle = connections[index].handle
        state.number = connections[index].number
        // Quality reports on the handle before the link showed itself: its own when traffic opened it (it was up
        // before the capture began), no link's when a Connection Complete did.
        let c = connections[index]
        let held = hci.vendorTally.takeReports(controller: c.controller, handle: c.handle, claim: c.inferred)
        if !held.isEmpty { _ = connections[index].machine.feed(.qualityReportsBefore(held), frame: c.startFrame, timestamp: c.startTime) }
    }

    /// The link facts in force on connection `index`, as the trackers take them with each value.
    @inline(__always)
    func linkSnapshot(_ index: Int) -> LinkSnapshot { table.connections[index].link.snapshot }

    @inline(__always)
    func attribute(_ index: Int, handle: UInt16, db: GATTSide, state: ConnectionState) -> AttributeInfo {
        let key = UInt32(handle) | (db == .peer ? 0 : 0x10000)
        if state.lastAttributeKey == key { return state.lastAttribute }
        let info = attributeLookedUp(index, key: key, handle: handle, db: db, state: state)
        state.lastAttributeKey = key
        state.lastAttribute = info
        return info
    }

    /// `attribute(_:handle:db:state:)` past the last-attribute cache: the slots, the dictionary, then the database.
    func attributeLookedUp(_ index: Int, key: UInt32, handle: UInt16, db: GATTSide, state: ConnectionState) -> AttributeInfo {
        let slot = Int(truncatingIfNeeded: key &* 0x9E37_79B1) >> 26 & (ConnectionState.attributeSlotCount - 1)
        if !state.slotKeys.isEmpty, state.slotKeys[slot] == key { return state.slotInfos[slot] }
        if let cached = state.attributes[key] {
            if state.slotKeys.isEmpty {
                state.slotKeys = Array(repeating: .max, count: ConnectionState.attributeSlotCount)
                state.slotInfos = Array(repeating: cached, count: ConnectionState.attributeSlotCount)
            }
            state.slotKeys[slot] = key
            state.slotInfos[slot] = cached
            return cached
        }
        let database = connections[index][database: db]
        let uuid = database.uuid(for: handle), service = database.service(containing: handle)?.uuid
        let possible = options.codecs?.mayDecode(CodecContext(service: service, characteristic: uuid, handle: handle)) ?? false
        let info = AttributeInfo(
            uuid: uuid, service: service, hasUserName: database.userNames[handle] != nil,
            source: database.role(of: handle) == nil && database.learnedTypes[handle] != nil ? .traffic : database.source,
            codecPossible: possible)
        if state.attributes.count < 65_536 { state.attributes[key] = info }
        return info
    }
}
