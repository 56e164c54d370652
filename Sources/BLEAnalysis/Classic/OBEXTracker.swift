import BLECore
import BLEProtocols

/// One OBEX session on an RFCOMM DLC or, GOEP 2.0's way, on an L2CAP channel (PBAP, MAP, FTP, OPP, AVRCP cover art):
/// its Connect with the service its Target names, the Connection ID, the operations with their Name, Type, body bytes and final response, the
/// Disconnect. Every item names its frames.
public struct OBEXSession: Hashable, Sendable {
    /// The RFCOMM DLC it ran on (0 on L2CAP).
    public var dlci: UInt8
    /// The L2CAP channel's PSM when OBEX ran over L2CAP (GOEP 2.1, 5.2: ERTM), nil on RFCOMM.
    public var psm: UInt16?
    /// `PBAP` from the Connect's Target (or the response's Who), else what SDP named the server channel (`OBEX Object Push`).
    public var service: String?
    /// This side sent the requests (the client: a car kit pulling a phone book is the client, the phone the server).
    public var thisSideIsClient: Bool
    public var connectFrame: Int?
    public var connectResponseFrame: Int?
    public var connectResult: OBEXResponseCode?
    public var connectionID: UInt32?
    public var disconnectFrame: Int?
    /// The operations after Connect (Get, Put, Set Path, Abort, …), Disconnect included, in order.
    public var operations: [OBEXOperation] = []
    public var requests = 0
    public var responses = 0
    /// Packets that did not decode, or were cut when the DLC closed: frames.
    public var malformed: [Int] = []
    public init(dlci: UInt8, thisSideIsClient: Bool) { self.dlci = dlci; self.thisSideIsClient = thisSideIsClient }
    /// `RFCOMM channel 19`, `L2CAP PSM 0x1001`.
    public var channelText: String { psm.map { "L2CAP PSM \(hex($0, width: 4))" } ?? "RFCOMM channel \(dlci >> 1)" }

    /// Get operations that ended Success, and the body bytes they carried.
    public var gets: [OBEXOperation] { operations.filter { $0.opcode == .get } }
}

/// One OBEX operation: its request packets (a Get continued until its final response, IrOBEX 1.5, 3.4.3), the
/// response that ended it, and the body bytes either way.
public struct OBEXOperation: Hashable, Sendable {
    public var opcode: OBEXOpcode
    public var name: String?
    public var type: String?
    public var firstFrame: Int
    /// Where its last request packet ended (its only one's last frame when the body spans several).
    public var lastRequestFrame: Int
    public var requestPackets = 0
    public var responsePackets = 0
    /// Body and End Of Body bytes, in the requests (Put) and the responses (Get).
    public var bodyBytes = 0
    /// The response that ended it (anything but Continue) and its frame; nil while it runs or when the log ends first.
    public var response: OBEXResponseCode?
    public var responseFrame: Int?
    /// PBAP's Phonebook Size (application parameter 0x08) in a response: the car asked how many entries first.
    public var phonebookSize: Int?
    public init(opcode: OBEXOpcode, firstFrame: Int, lastRequestFrame: Int? = nil) {
        self.opcode = opcode
        self.firstFrame = firstFrame
        self.lastRequestFrame = lastRequestFrame ?? firstFrame
    }
}

/// Follows OBEX on a link's RFCOMM DLCs: packets reassembled per DLC and direction from the DLC's data (a packet spans
/// frames up to its 16-bit length), each read as a request or a response by who the client is, and paired into
/// operations. What does not decode is reported with its frame and offset; the DLC's next packet is read on.
struct OBEXTracker {
    private(set) var sessions: [OBEXSession] = []
    /// The session open on each channel (an RFCOMM DLCI, or 0x100 + an L2CAP channel's index): its index.
    private var open: [UInt16: Int] = [:]
    /// Bytes of a packet not yet whole, per channel and direction (key: channel << 1 | from the peer), with its first frame.
    private var partial: [UInt32: (bytes: [UInt8], frame: Int)] = [:]
    /// The operation running per session (index in its operations) and whether a final response ended it.
    private var running: [Int: Int] = [:]
    static let maxSessions = 64
    static let maxOperations = 4096

    /// One packet as it completed, for the timeline: the packet, its DLC, the frame it began in, the request it answers.
    struct Packet {
        var packet: OBEXPacket
        var channel: UInt16
        var firstFrame: Int
        var requestFrame: Int?
    }

    /// A packet that did not decode: the error (its offset counts from the packet's first byte), the DLC, the frame.
    struct Malformed {
        var error: DecodeError
        var channel: UInt16
        var frame: Int
        var offset: Int
    }

    func follows(_ channel: UInt16) -> Bool { open[channel] != nil }

    /// Starts following `channel` (SDP named an OBEX service on its RFCOMM channel, or its first data is an OBEX Connect).
    mutating func start(_ channel: UInt16, psm: UInt16? = nil, service: String?, firstByte: UInt8, fromPeer: Bool) -> Bool {
        guard sessions.count < Self.maxSessions else { return false }
        // A response code (0x10–0x6F without the Final bit) first: the log began mid-session, its sender is the server.
        let response = (0x10...0x6F).contains(firstByte & 0x7F)
        var s = OBEXSession(dlci: psm == nil ? UInt8(truncatingIfNeeded: channel) : 0, thisSideIsClient: response ? fromPeer : !fromPeer)
        s.psm = psm
        s.service = service
        sessions.append(s)
        open[channel] = sessions.count - 1
        return true
    }

    /// The DLC closed: its session ends; a packet left half-sent is reported.
    mutating func close(_ channel: UInt16, frame: Int) -> [Malformed] {
        guard open.removeValue(forKey: channel) != nil else { return [] }
        var out: [Malformed] = []
        for direction: UInt32 in [0, 1] {
            guard let held = partial.removeValue(forKey: UInt32(channel) << 1 | direction), !held.bytes.isEmpty else { continue }
            let announced = held.bytes.count >= 3 ? Int(held.bytes[1]) << 8 | Int(held.bytes[2]) : 3
            out.append(
                Malformed(
                    error: .truncated(needed: announced, available: held.bytes.count, offset: 0), channel: channel, frame: held.frame,
                    offset: held.bytes.count))
        }
        return out
    }

    /// One data frame of a followed channel (RFCOMM information, or an L2CAP I-frame's): the packets it completed, and
    /// those that did not decode.
    mutating func feed(_ data: [UInt8], channel: UInt16, fromPeer: Bool, frame: Int) -> (packets: [Packet], malformed: [Malformed]) {
        guard let s = open[channel] else { return ([], []) }
        let key = UInt32(channel) << 1 | (fromPeer ? 1 : 0)
        var held = partial[key] ?? ([], frame)
        if held.bytes.isEmpty { held.frame = frame }
        held.bytes += data
        var packets: [Packet] = [], malformed: [Malformed] = []
        while held.bytes.count >= 3 {
            let length = Int(held.bytes[1]) << 8 | Int(held.bytes[2])
            guard length >= 3 else {
                // No length to find the next packet by: the rest of what this direction holds is given up.
                malformed.append(
                    Malformed(
                        error: .invalidValue(field: "OBEX packet length", value: length, offset: 1), channel: channel, frame: frame,
                        offset: 1))
                sessions[s].malformed.append(frame)
                held.bytes.removeAll()
                break
            }
            guard held.bytes.count >= length else { break }
            let bytes = Array(held.bytes.prefix(length))
            held.bytes.removeFirst(length)
            let isResponse = fromPeer == sessions[s].thisSideIsClient
            let request = running[s].map { sessions[s].operations[$0].opcode }
            do throws(DecodeError) {
                let p = try withByteReader(bytes) { (r: inout ByteReader) throws(DecodeError) -> OBEXPacket in
                    try OBEXPacket(parsing: &r, isResponse: isResponse, answering: request)
                }
                packets.append(
                    Packet(
                        packet: p, channel: channel, firstFrame: held.frame,
                        requestFrame: apply(p, session: s, frame: frame, startFrame: held.frame)))
            } catch {
                malformed.append(Malformed(error: error, channel: channel, frame: frame, offset: Self.offset(of: error)))
                sessions[s].malformed.append(frame)
            }
            held.frame = frame
        }
        partial[key] = held
        return (packets, malformed)
    }

    static func offset(of error: DecodeError) -> Int {
        switch error {
        case .truncated(_, _, let offset), .invalidValue(_, _, let offset): offset
        default: 0
        }
    }

    /// A whole packet's effect on its session; for a response, the frame of the request it answers. `startFrame`: where
    /// the packet's first RFCOMM or L2CAP frame was (a Put's body spans many: the BTVS laptop log's 586–595).
    private mutating func apply(_ p: OBEXPacket, session s: Int, frame: Int, startFrame: Int) -> Int? {
        if let opcode = p.opcode {
            sessions[s].requests += 1
            if opcode == .connect {
                sessions[s].connectFrame = frame
                if let t = p.target { sessions[s].service = t }
            }
            if opcode == .disconnect { sessions[s].disconnectFrame = frame }
            // A request continues the running operation of its opcode (a Get sent again after Continue); any other starts one.
            if let r = running[s], sessions[s].operations[r].opcode == opcode, sessions[s].operations[r].response == nil {
                sessions[s].operations[r].requestPackets += 1
                sessions[s].operations[r].lastRequestFrame = frame
                sessions[s].operations[r].bodyBytes += p.bodyBytes
                lastRequest[s] = frame
                return nil
            }
            guard sessions[s].operations.count < Self.maxOperations else { return nil }
            var op = OBEXOperation(opcode: opcode, firstFrame: startFrame, lastRequestFrame: frame)
            op.name = p.name
            op.type = p.type
            op.requestPackets = 1
            op.bodyBytes = p.bodyBytes
            sessions[s].operations.append(op)
            running[s] = sessions[s].operations.count - 1
            lastRequest[s] = frame
            return nil
        }
        sessions[s].responses += 1
        guard let r = running[s], let code = p.response else { return nil }
        sessions[s].operations[r].responsePackets += 1
        sessions[s].operations[r].bodyBytes += p.bodyBytes
        if let size = p.parameter(0x08) { sessions[s].operations[r].phonebookSize = size }
        if code != .continue {
            sessions[s].operations[r].response = code
            sessions[s].operations[r].responseFrame = frame
        }
        if sessions[s].operations[r].opcode == .connect {
            sessions[s].connectResponseFrame = frame
            sessions[s].connectResult = code
            if let id = p.connectionID { sessions[s].connectionID = id }
            if sessions[s].service == nil, let t = p.target { sessions[s].service = t }
        }
        return lastRequest[s]
    }
    /// The frame of each session's latest request packet.
    private var lastRequest: [Int: Int] = [:]
}
