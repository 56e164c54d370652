import BLECodecs
import BLECore
import BLEProtocols

/// An ASE's state as its server reported it (ASCS 4.1: a notification or a read of a Sink/Source ASE characteristic).
public struct ASEStateReport: Hashable, Sendable {
    public var frame: Int
    public var timestamp: Timestamp
    public var connectionNumber: Int
    /// `sink` (0x2BC4) or `source` (0x2BC5).
    public var role: String
    public var aseID: UInt8
    public var state: UInt8
    /// Read by the client (a read response) rather than notified by the server.
    public var viaRead: Bool
    /// The state before, from the previous report of this ASE on this connection (nil for the first).
    public var previous: UInt8?
    /// False for a change ASCS's state machine does not allow (ASCS 3.1, Figures 3.2 and 3.3).
    public var allowed: Bool
    /// QoS Configured, Enabling, Streaming and Disabling name the CIS the ASE uses.
    public var cigID: UInt8?
    public var cisID: UInt8?
    public var stateName: String { LEAudioTables.aseStates[Int64(state)] ?? "state \(state)" }
}

/// One ASE Control Point operation (ASCS 5) and the server's response to it.
public struct ASEOperation: Hashable, Sendable {
    public struct Response: Hashable, Sendable {
        public var aseID: UInt8
        public var code: UInt8
        public var reason: UInt8
        public var codeName: String { LEAudioTables.aseResponseCodes[Int64(code)] ?? "code \(code)" }
        public var reasonName: String { LEAudioTables.aseReasons[Int64(reason)] ?? "reason \(reason)" }
    }
    public var frame: Int
    public var timestamp: Timestamp
    public var connectionNumber: Int
    public var opcode: UInt8
    public var aseIDs: [UInt8]
    /// What the operation set per ASE, in the order written (Config Codec, Config QoS, Enable, Update Metadata).
    public var parameters: [ASEParameters] = []
    /// The control point notification that answered, and what it said per ASE.
    public var responseFrame: Int?
    public var responses: [Response] = []
    public var name: String { LEAudioTables.aseOpcodes[Int64(opcode)] ?? "opcode \(opcode)" }
    /// Some ASE refused the operation (a response code other than Success).
    public var refused: Bool { responses.contains { $0.code != 0 } }
}

/// What one ASE Control Point operation set for one ASE (ASCS 5.1–5.3, 5.7): the codec and its configuration LTVs (Config
/// Codec), the CIG and CIS (Config QoS), the Streaming_Audio_Contexts of the metadata (Enable, Update Metadata).
public struct ASEParameters: Hashable, Sendable {
    public var aseID: UInt8
    /// Codec_ID's coding format (Assigned Numbers 2.11: 0x06 LC3).
    public var codingFormat: UInt8?
    public var samplingHz: Int64?
    public var frameDurationMicroseconds: Int64?
    public var octetsPerFrame: UInt16?
    /// Audio_Channel_Allocation (Assigned Numbers 6.12.1 location bits).
    public var channelAllocation: UInt32?
    public var cigID: UInt8?
    public var cisID: UInt8?
    /// Context Type bits (Assigned Numbers 6.12.3): 0x0002 Conversational, 0x0004 Media …
    public var contexts: UInt16?
    public init(aseID: UInt8) { self.aseID = aseID }
}

/// A Broadcast Audio Scan Control Point operation (BASS 3.1) or a Broadcast Receive State (BASS 3.2).
public struct BASSEvent: Hashable, Sendable {
    public var frame: Int
    public var timestamp: Timestamp
    public var connectionNumber: Int
    /// `operation` (a control point write) or `receive-state` (a notification or read).
    public var kind: String
    public var opcode: UInt8?
    public var sourceID: UInt8?
    public var broadcastID: UInt32?
    public var paSyncState: UInt8?
    /// BIS_Sync_State of each subgroup (a bit per BIS index).
    public var bisSync: [UInt32] = []
    public var name: String {
        if let opcode { return LEAudioTables.bassOpcodes[Int64(opcode)] ?? "opcode \(opcode)" }
        return sourceID == nil ? "Receive State (empty)" : "Receive State"
    }
}

/// What the audio profiles on GATT did: ASE states, control point operations with their responses, BASS operations
/// and receive states. Typed, with frames, for the diagnosis rules (an ASE operation refused with its reason).
public struct LEAudioProfiles: Hashable, Sendable {
    public var aseStates: [ASEStateReport] = []
    public var operations: [ASEOperation] = []
    public var bass: [BASSEvent] = []
    public init() {}
    public var isEmpty: Bool { aseStates.isEmpty && operations.isEmpty && bass.isEmpty }
    /// The operations some ASE refused.
    public var refusals: [ASEOperation] { operations.filter(\.refused) }
}

/// Follows ASCS and BASS through the attribute values (an ``AttributeValueObserver``): each characteristic's value
/// read from its bytes (ASCS 4–5, BASS 3), not from a codec's fields, so it works with the codecs off.
struct LEAudioTracker: AttributeValueObserver {
    static let maxEvents = 65_536
    private(set) var result = LEAudioProfiles()
    private var lastState: [Int: UInt8] = [:]  // connection << 8 | ASE ID

    mutating func observe(_ event: AttributeValueEvent, value: RawSpan) {
        guard let uuid = event.characteristic?.uuid16, (0x2BC4...0x2BC8).contains(uuid) else { return }
        guard result.aseStates.count + result.operations.count + result.bass.count < Self.maxEvents else { return }
        value.withUnsafeBytes { bytes in
            var r = ByteReader(bytes)
            switch uuid {
            case 0x2BC4, 0x2BC5: aseState(event, role: uuid == 0x2BC4 ? "sink" : "source", &r)
            case 0x2BC6: controlPoint(event, &r)
            default: bass(event, isControlPoint: uuid == 0x2BC7, &r)
            }
        }
    }

    private mutating func aseState(_ event: AttributeValueEvent, role: String, _ r: inout ByteReader) {
        guard event.kind != .writeRequest, event.kind != .writeCommand,
            let id = try? r.readUInt8(), let state = try? r.readUInt8()
        else { return }
        var report = ASEStateReport(
            frame: event.frame, timestamp: event.timestamp, connectionNumber: event.connectionNumber, role: role, aseID: id,
            state: state, viaRead: event.kind != .notification && event.kind != .indication, previous: nil, allowed: true)
        if (2...5).contains(state) {
            report.cigID = try? r.readUInt8()
            report.cisID = try? r.readUInt8()
        }
        let key = event.connectionNumber << 8 | Int(id)
        report.previous = lastState[key]
        if let previous = report.previous { report.allowed = Self.allowed(from: previous, to: state, role: role) }
        lastState[key] = state
        result.aseStates.append(report)
    }

    /// ASCS 3.1 (Figure 3.2 sink, 3.3 source): the changes a server may report. A report of the same state is no change;
    /// Releasing may come from any state (the server releases on its own, e.g. when the link is lost).
    static func allowed(from: UInt8, to: UInt8, role: String) -> Bool {
        if from == to || to == 6 { return true }
        switch (from, to) {
        case (0, 1), (1, 2), (2, 1), (2, 3), (3, 4), (6, 0), (6, 1): return true
        case (3, 2), (4, 2): return role == "sink"  // Disable on a sink ASE
        case (3, 5), (4, 5), (5, 2): return role == "source"  // Disable, then Receiver Stop Ready, on a source ASE
        default: return false
        }
    }

    private mutating func controlPoint(_ event: AttributeValueEvent, _ r: inout ByteReader) {
        guard let op = try? r.readUInt8(), let n = try? r.readUInt8() else { return }
        if event.kind == .notification || event.kind == .indication {
            var responses: [ASEOperation.Response] = []
            for _ in 0..<(n == 0xFF ? 1 : Int(n)) {
                guard let id = try? r.readUInt8(), let code = try? r.readUInt8(), let reason = try? r.readUInt8() else { break }
                responses.append(.init(aseID: id, code: code, reason: reason))
            }
            // The oldest unanswered operation with this opcode on this connection (ASCS 5: one notification per write).
            if let i = result.operations.firstIndex(where: {
                $0.connectionNumber == event.connectionNumber && $0.opcode == op && $0.responseFrame == nil
            }) {
                result.operations[i].responseFrame = event.frame
                result.operations[i].responses = responses
            }
            return
        }
        let parameters = Self.parameters(op: op, count: Int(n), &r)
        var operation = ASEOperation(
            frame: event.frame, timestamp: event.timestamp, connectionNumber: event.connectionNumber, opcode: op,
            aseIDs: parameters.map(\.aseID))
        operation.parameters = parameters
        result.operations.append(operation)
    }

    /// Each ASE's parameters in an operation (ASCS 5.1–5.8): its ID first, then Config Codec's target latency, PHY,
    /// Codec_ID and configuration LTVs; Config QoS's CIG and CIS then 13 bytes of QoS; Enable's and Update Metadata's
    /// metadata LTVs.
    static func parameters(op: UInt8, count: Int, _ r: inout ByteReader) -> [ASEParameters] {
        var out: [ASEParameters] = []
        for _ in 0..<count {
            guard let id = try? r.readUInt8() else { break }
            var p = ASEParameters(aseID: id)
            var ok = true
            switch op {
            case 1:
                p.codingFormat = (try? r.skip(2)).flatMap { try? r.readUInt8() }  // after target latency and PHY
                ok = p.codingFormat != nil && (try? r.skip(4)) != nil
                ok = ok && ltvs(&r) { type, v in codecConfiguration(type, v, &p) }
            case 2:
                (p.cigID, p.cisID) = (try? r.readUInt8(), try? r.readUInt8())
                ok = p.cisID != nil && (try? r.skip(13)) != nil
            case 3, 7:
                ok = ltvs(&r) { type, v in
                    if type == 0x02, v.count == 2 { p.contexts = UInt16(v.first!) | UInt16(v.last!) << 8 }  // Streaming_Audio_Contexts
                }
            default: break
            }
            out.append(p)
            guard ok else { break }
        }
        return out
    }

    /// Codec_Specific_Configuration LTV types (Assigned Numbers 6.12.5): 1 sampling frequency, 2 frame duration,
    /// 3 channel allocation, 4 octets per codec frame.
    private static func codecConfiguration(_ type: UInt8, _ v: ArraySlice<UInt8>, _ p: inout ASEParameters) {
        let le = v.reversed().reduce(0) { $0 << 8 | UInt32($1) }  // little-endian
        switch (type, v.count) {
        case (1, 1): p.samplingHz = LEAudioTables.samplingFrequencies[Int64(le)]
        case (2, 1): p.frameDurationMicroseconds = LEAudioTables.frameDurations[Int64(le)]
        case (3, 4): p.channelAllocation = le
        case (4, 2): p.octetsPerFrame = UInt16(le)
        default: break
        }
    }

    /// A length-prefixed run of LTVs (1-byte total length, then length/type/value entries): read whole, so that a
    /// malformed entry loses its own run only; false when the run is cut short.
    private static func ltvs(_ r: inout ByteReader, _ each: (UInt8, ArraySlice<UInt8>) -> Void) -> Bool {
        guard let total = try? r.readUInt8(), let run = try? r.readArray(Int(total)) else { return false }
        var i = 0
        while i < run.count {
            let end = i + 1 + Int(run[i])
            guard end <= run.count else { break }
            if end > i + 1 { each(run[i + 1], run[(i + 2)..<end]) }
            i = end
        }
        return true
    }

    private mutating func bass(_ event: AttributeValueEvent, isControlPoint: Bool, _ r: inout ByteReader) {
        var e = BASSEvent(
            frame: event.frame, timestamp: event.timestamp, connectionNumber: event.connectionNumber,
            kind: isControlPoint ? "operation" : "receive-state")
        if isControlPoint {
            guard event.kind != .notification, let op = try? r.readUInt8() else { return }
            e.opcode = op
            if op == 3 || op == 4 || op == 5 { e.sourceID = try? r.readUInt8() }
            if op == 2, (try? r.skip(8)) != nil { e.broadcastID = try? Self.u24(&r) }
        } else if !r.isAtEnd {
            e.sourceID = try? r.readUInt8()
            guard (try? r.skip(8)) != nil, let id = try? Self.u24(&r), let pa = try? r.readUInt8(), let enc = try? r.readUInt8()
            else { return }
            (e.broadcastID, e.paSyncState) = (id, pa)
            if enc == 3 { _ = try? r.skip(16) }
            for _ in 0..<Int((try? r.readUInt8()) ?? 0) {
                guard let sync = try? UInt32(parsingLittleEndian: &r), let m = try? r.readUInt8(), (try? r.skip(Int(m))) != nil
                else { break }
                e.bisSync.append(sync)
            }
        }
        result.bass.append(e)
    }

    private static func u24(_ r: inout ByteReader) throws(DecodeError) -> UInt32 {
        UInt32(try r.readUInt8()) | UInt32(try r.readUInt8()) << 8 | UInt32(try r.readUInt8()) << 16
    }

    mutating func connectionEnded(connectionNumber: Int, frame: Int, timestamp: Timestamp, reason: String) {
        lastState = lastState.filter { $0.key >> 8 != connectionNumber }
    }

    mutating func finish(frame: Int, timestamp: Timestamp) {}
}
