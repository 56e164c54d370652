import BLECore
import BLEProtocols

/// Follows SDP on one BR/EDR link (Core Spec Vol 3, Part B, 4): requests paired with their responses by transaction
/// ID, attribute lists reassembled across continuation states, the service records they hold, Error Responses.
struct SDPTracker {
    private(set) var summary = SDPSummary()
    /// Requests waiting for their response, by (requester is this side, transaction ID): frame.
    private var pending: [UInt32: Int] = [:]
    /// Attribute bytes of a response that continues, by responder (true: the peer).
    private var partial: [Bool: [UInt8]] = [:]
    /// The first request of the search each side has under way (true: the peer's), which continuation requests go on.
    private var searchOf: [Bool: Int] = [:]
    /// The classes each record handle was found by (a Service Search Response to a pattern), by responder (true: the
    /// peer): a Service Attribute Response that asks for no class list still names its record's service.
    private var foundBy: [Bool: [UInt32: [BluetoothUUID]]] = [:]
    /// The record handle each Service Attribute Request asked about, by the key its response will carry.
    private var attributeHandle: [UInt32: UInt32] = [:]
    static let maxHeldBytes = 1 << 20
    static let maxServices = 1024

    /// One SDP PDU sent by this side (`fromPeer` false) or the peer; returns the request it answers, if any.
    mutating func feed(_ pdu: SDPPDU, fromPeer: Bool, frame: Int) -> Int? {
        let key = UInt32(fromPeer ? 0 : 1) << 16 | UInt32(pdu.transaction)
        if pdu.id.isRequest {
            summary.requests += 1
            let responseKey = UInt32(fromPeer ? 1 : 0) << 16 | UInt32(pdu.transaction)
            if pending.count < 4096 { pending[responseKey] = frame }
            if case .serviceAttributeRequest(let handle, _, _, _) = pdu.parameters, attributeHandle.count < 4096 {
                attributeHandle[responseKey] = handle
            }
            search(pdu.parameters, fromPeer: fromPeer, frame: frame)
            return nil
        }
        summary.responses += 1
        let requestFrame = pending.removeValue(forKey: key)
        switch pdu.parameters {
        case .errorResponse(let code):
            summary.errors.append(SDPErrorEvent(frame: frame, fromPeer: fromPeer, code: code, requestFrame: requestFrame))
        case .serviceAttributeResponse(let bytes, let c):
            let handle = attributeHandle.removeValue(forKey: key)
            collect(bytes, continuation: c, fromPeer: fromPeer, frame: frame, listOfLists: false, handle: handle)
        case .serviceSearchResponse(let total, let handles, let c):
            noteFound(handles, by: !fromPeer, responder: fromPeer)
            if c.isEmpty { answerSearch(by: !fromPeer, request: requestFrame, found: Int(total), frame: frame) }
        case .serviceSearchAttributeResponse(let bytes, let c):
            if let found = collect(bytes, continuation: c, fromPeer: fromPeer, frame: frame, listOfLists: true) {
                answerSearch(by: !fromPeer, request: requestFrame, found: found, frame: frame)
            }
        default:
            break
        }
        return requestFrame
    }

    /// The requests still unanswered when the link ended.
    mutating func finish() -> SDPSummary {
        summary.unanswered = pending.values.sorted()
        pending.removeAll()
        return summary
    }

    /// A search request: its pattern's UUIDs, answered later (``answerSearch(by:request:found:frame:)``).
    private mutating func search(_ parameters: SDPParameters, fromPeer: Bool, frame: Int) {
        let pattern: SDPElement
        switch parameters {
        case .serviceSearchRequest(let p, _, let c), .serviceSearchAttributeRequest(let p, _, _, let c):
            // A continuation request goes on with a search already counted.
            guard c.isEmpty else { return }
            pattern = p
        default:
            return
        }
        guard summary.searches.count < Self.maxServices else { return }
        let uuids = (pattern.items ?? [pattern]).compactMap { e -> BluetoothUUID? in if case .uuid(let u) = e { u } else { nil } }
        summary.searches.append(SDPSearch(frame: frame, fromPeer: fromPeer, uuids: uuids))
        searchOf[fromPeer] = frame
    }

    /// The whole answer to the search `requester` (true: the peer) has under way: `found` records. A continued search
    /// began at the requester's first request, not at `request`, the one this last part answers.
    private mutating func answerSearch(by requester: Bool, request: Int?, found: Int, frame: Int) {
        guard let started = searchOf.removeValue(forKey: requester) ?? request,
            let i = summary.searches.lastIndex(where: { $0.frame == started })
        else { return }
        summary.searches[i].found = found
        summary.searches[i].responseFrame = frame
    }

    /// The handles a Service Search Response listed, with the pattern of the search under way that found them.
    private mutating func noteFound(_ handles: [UInt32], by requester: Bool, responder: Bool) {
        guard let started = searchOf[requester], let search = summary.searches.last(where: { $0.frame == started }),
            !search.uuids.isEmpty
        else { return }
        for h in handles where foundBy[responder, default: [:]].count < Self.maxServices {
            foundBy[responder, default: [:]][h] = search.uuids
        }
    }

    /// The records of a whole attribute list (nil while it continues, or when it does not decode). `handle`: the record a
    /// Service Attribute Request asked about.
    @discardableResult
    private mutating func collect(
        _ bytes: [UInt8], continuation: SDPContinuation, fromPeer: Bool, frame: Int, listOfLists: Bool, handle: UInt32? = nil
    ) -> Int? {
        var held = partial[fromPeer, default: []]
        if held.count + bytes.count <= Self.maxHeldBytes { held += bytes }
        guard continuation.isEmpty else {
            partial[fromPeer] = held
            return nil
        }
        partial[fromPeer] = nil
        guard let list = try? SDPElement(bytes: held) else {
            summary.malformed.append(frame)
            return nil
        }
        let records = listOfLists ? (list.items ?? []) : [list]
        for r in records {
            guard let record = SDPRecord(r), summary.services.count < Self.maxServices else { continue }
            let recordHandle = record.handle ?? handle
            // No class list asked for: the record is of the classes its handle was searched by (the BTVS laptop log asks
            // the handle OBEX Object Push found at 552 for its protocol list alone, 553–555).
            let classes = record.serviceClasses.isEmpty ? recordHandle.flatMap { foundBy[fromPeer]?[$0] } ?? [] : record.serviceClasses
            summary.services.append(
                SDPService(
                    frame: frame, fromPeer: fromPeer, handle: recordHandle, classes: classes,
                    profiles: record.profiles.map { SDPProfileVersion(profile: $0.profile, version: $0.version) }, psm: record.psm,
                    rfcommChannel: record.rfcommChannel, name: record.name, supportedFeatures: record.supportedFeatures))
        }
        return records.count
    }

    /// What SDP said runs on RFCOMM server channel `channel` of the peer (or this side): `Handsfree Audio Gateway`.
    func service(onRFCOMMChannel channel: UInt8) -> SDPService? {
        summary.services.last { $0.rfcommChannel == channel }
    }
}
