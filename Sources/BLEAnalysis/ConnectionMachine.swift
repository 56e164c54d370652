import BLECodecs
import BLECore
import BLEProtocols

/// One open link's data path: its L2CAP reassembly, its ``ChannelMux``, its ATT bearers (requests paired with
/// responses, ATT_MTU per bearer), what names its attributes, and what it decoded (``DecodeCounts``). Fed one ACL
/// fragment at a time (``feed(_:direction:now:connection:)``), it writes its outputs into the pass's
/// ``AnalysisSink`` (findings, timeline events, evidence, attribute values) and its link's facts into the
/// ``Connection``'s ``LinkMachine``; it never reaches the ``Analyzer``.
///
/// A class so the hot path mutates it in place (one reference per link, held by ``ConnectionTable/machines``; its
/// ATT bearers are values inside it). The data path is in `ConnectionMachine+L2CAP.swift` (reassembly, channels,
/// SMP, credit-based SDUs), `ConnectionMachine+ATT.swift` (one ATT PDU, its value delivered) and
/// `ConnectionMachine+ATTApply.swift` (pairing, MTU, GATT learning, long reads and writes).
final class ConnectionMachine {
    /// What every link writes into. A strong `let`: read through `self`, which the caller keeps alive, it costs no
    /// reference count; `unowned(unsafe)` cost a retain and a release per access (each counter it bumps per PDU,
    /// docs/performance.md#analyzer-att).
    let sink: AnalysisSink
    /// What the link needs from the capture: the codecs and the key store.
    let capture: CaptureContext
    /// The link's record while it is open: its ``LinkMachine``, its GATT databases, its identity. Held here, in the
    /// machine, and handed to the ``ConnectionTable`` when the link ends (``ConnectionTable/close(_:)``): the
    /// per-PDU path reads and writes its fields in place, where a record reached by index in an array held elsewhere
    /// was copied whole per PDU (2.7x the CPU: docs/performance.md#analyzer-att).
    var connection: Connection
    /// The connection's identity, set once when it opens (from its ``Connection``), so the per-packet path names it
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
    /// (``learnCCCD(_:kind:handle:in:)``).
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
    /// The time of the record being processed (a held air PDU's fragment may be older): the time a fact the traffic
    /// proves (the ATT_MTU of a larger PDU) is observed at.
    var now = Timestamp(microseconds: 0)
    /// Whether the link's transport is known (``LinkState/transport``); until it is, each L2CAP PDU's channel may show it.
    var transportKnown: Bool
    /// The BR/EDR profiles of the link (``ClassicProfiles``), made on their first PDU.
    var classic: ClassicProfiles?

    init(_ connection: Connection, creditBudget: CreditChannelBudget, sink: AnalysisSink, capture: CaptureContext) {
        channels = ChannelMux(creditBudget: creditBudget)
        self.sink = sink
        self.capture = capture
        self.connection = connection
        handle = connection.handle
        number = connection.number
        transportKnown = connection.link.transport.value != nil
    }

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

    /// The link ended (at `frame`, at `timestamp`; nil: the capture did, at its last record): its partial PDUs said and
    /// counted, its unanswered requests said (findings, evidence, their held-back events settled). Returns what it
    /// decoded, for ``Connection/decode``.
    func finish(frame: Int, timestamp: Timestamp, endOfCapture: Bool) -> DecodeCounts {
        var cut: [Finding] = []
        let end: L2CAPReassembler.End = endOfCapture ? .captureEnded : .linkEnded(frame: frame)
        if tx.inProgress { tx.finish(findings: &cut, frame: frame, end: end) }
        if rx.inProgress { rx.finish(findings: &cut, frame: frame, end: end) }
        if unknown.inProgress { unknown.finish(findings: &cut, frame: frame, end: end) }
        for f in cut { decode.countReassembly(f) }
        sink.findings += cut
        connection.profiles = finishClassic(endFrame: endOfCapture ? nil : frame)
        if !endOfCapture { finishRequests(frame: frame, timestamp: timestamp, endOfCapture: false) }
        return decode
    }

    /// The requests still waiting for their response when the link or the capture ended.
    func finishRequests(frame: Int, timestamp: Timestamp, endOfCapture: Bool) {
        let end = endOfCapture ? "the end of the capture" : "the disconnection"
        for (key, p) in allBearers.flatMap({ $0.pending.map { $0 } }).sorted(by: { $0.value.frame < $1.value.frame }) {
            sink.findings.append(Finding(.info, .requestUnanswered(p.opcode, handle: p.handle, end: end), frame: p.frame))
            if !endOfCapture, let id = p.eventID { sink.queue.settle(id) }
            sink.evidence(
                .attUnanswered(
                    request: p.opcode, handle: p.handle, sender: key.sender, ended: endOfCapture ? .endOfCapture : .disconnection,
                    endFrame: frame, waited: timestamp.microseconds(since: p.timestamp)), frame: p.frame, timestamp: p.timestamp,
                connection: number)
        }
    }
}

/// What a link's ``ConnectionMachine`` needs from the capture, given once when it opens: the codecs for attribute
/// values and credit-based SDUs, and the key store that learns from its SMP PDUs.
struct CaptureContext {
    var codecs: CodecRegistry?
    let keyStore: LinkKeyStore
    /// ``AnalyzerOptions/eventValues``.
    var eventValues = true
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

extension ConnectionMachine {
    /// The link facts in force, as the trackers take them with each value.
    @inline(__always)
    var linkSnapshot: LinkSnapshot { connection.link.snapshot }

    /// `attribute(handle:db:)` past the last-attribute cache: the slots, the dictionary, then the database.
    func attributeLookedUp(key: UInt32, handle: UInt16, db: GATTSide) -> AttributeInfo {
        let slot = Int(truncatingIfNeeded: key &* 0x9E37_79B1) >> 26 & (ConnectionMachine.attributeSlotCount - 1)
        if !slotKeys.isEmpty, slotKeys[slot] == key { return slotInfos[slot] }
        if let cached = attributes[key] {
            if slotKeys.isEmpty {
                slotKeys = Array(repeating: .max, count: ConnectionMachine.attributeSlotCount)
                slotInfos = Array(repeating: cached, count: ConnectionMachine.attributeSlotCount)
            }
            slotKeys[slot] = key
            slotInfos[slot] = cached
            return cached
        }
        let database = connection[database: db]
        let uuid = database.uuid(for: handle), service = database.service(containing: handle)?.uuid
        let possible = capture.codecs?.mayDecode(CodecContext(service: service, characteristic: uuid, handle: handle)) ?? false
        let info = AttributeInfo(
            uuid: uuid, service: service, hasUserName: database.userNames[handle] != nil,
            source: database.role(of: handle) == nil && database.learnedTypes[handle] != nil ? .traffic : database.source,
            codecPossible: possible)
        if attributes.count < 65_536 { attributes[key] = info }
        return info
    }

    /// One of the link's own changes (an ATT_MTU, its channels, a credit stall) into its ``LinkMachine``; the security
    /// verdict one may give goes to the evidence (none of these ends the link: only the router's inputs do).
    func feedLink(_ input: LinkInput, frame: Int, timestamp: Timestamp, source: FactSource? = nil) {
        guard case .security(let verdict)? = connection.machine.feed(input, frame: frame, timestamp: timestamp, source: source),
            let kind = verdict.evidence
        else { return }
        sink.evidence(kind, frame: frame, timestamp: timestamp, connection: number)
    }
}
