import BLECore
import BLEProtocols

/// A link-layer PDU outside what the specification allows, seen on the air (Core Spec Vol 6, Part B): a procedure
/// repeated that may run once, a channel map with fewer than two used channels, a timing parameter out of its range, a
/// data PDU of a shape no conforming Link Layer sends (the reserved LLID, a Length past its octets, a control PDU of
/// the wrong size).
public struct LLNonCompliance: Hashable, Sendable {
    public enum Kind: Hashable, Sendable {
        /// `opcode` sent `count` times by `sender` on one link, first at `firstFrame` (the event's frame is the first
        /// repeat, or for the total the last one).
        case repeated(opcode: LLControlOpcode, sender: EvidenceEvent.Sender, count: Int, firstFrame: Int)
        /// `pdu` (CONNECT_IND, LL_CHANNEL_MAP_IND) with `used` channels of its map.
        case channelMap(pdu: String, used: Int, map: UInt64)
        /// `pdu`'s `field` is `value`, outside `allowed`.
        case parameter(pdu: String, field: String, value: Int, allowed: String)
        /// A data PDU of `length` octets with the reserved LLID 0b00 (2.4), CRC good.
        case reservedLLID(sender: EvidenceEvent.Sender, length: Int)
        /// A data PDU of `length` payload octets (MIC excluded) where the link allows `maximum` that way (4.5.10: 27
        /// until a Data Length Update, `negotiated` after one); `carried`: the octets the record kept when fewer.
        case lengthOverMaximum(sender: EvidenceEvent.Sender, llid: UInt8, length: Int, maximum: Int, negotiated: Bool, carried: Int?)
        /// An LL control PDU of `length` octets (opcode included) where its opcode's is `expected` (exactly, or at least
        /// when `!fixed`; 2.4.2).
        case controlLength(sender: EvidenceEvent.Sender, opcode: LLControlOpcode, length: Int, expected: Int, fixed: Bool)
    }

    public var kind: Kind
    public init(_ kind: Kind) { self.kind = kind }
}

/// Counts the LL control PDUs that may run once per link per direction, per link (the router's; `AirLinkRouter+Security`).
struct LLProcedureCounts {
    struct Key: Hashable {
        var handle: UInt16
        var opcode: LLControlOpcode
        var sender: EvidenceEvent.Sender
    }
    var counts: [Key: (count: Int, first: Int, last: Int)] = [:]

    /// One more `key` at `frame`; its count now.
    mutating func note(_ key: Key, frame: Int) -> (count: Int, first: Int) {
        var entry = counts[key] ?? (0, frame, frame)
        entry.count += 1
        entry.last = frame
        counts[key] = entry
        return (entry.count, entry.first)
    }

    /// The counts of `handle`'s link, removed (the link ended).
    mutating func take(handle: UInt16) -> [(Key, (count: Int, first: Int, last: Int))] {
        let mine = counts.filter { $0.key.handle == handle }
        for k in mine.keys { counts.removeValue(forKey: k) }
        return mine.sorted { $0.value.first < $1.value.first }.map { ($0.key, $0.value) }
    }

    /// Vol 6, Part B, 5.1.4: the version exchange happens at most once per direction on a link.
    static let oncePerLink: Set<LLControlOpcode> = [.versionInd]
}

/// The timing ranges of CONNECT_IND (Vol 6, Part B, 2.3.3.1) and LL_CONNECTION_UPDATE_IND (5.1.1): what is out of them.
enum LLTimingRanges {
    /// Each field out of range, as (field, value, allowed).
    static func violations(
        interval: UInt16, latency: UInt16, timeout: UInt16, windowSize: UInt8, windowOffset: UInt16, hop: UInt8?
    ) -> [(String, Int, String)] {
        var out: [(String, Int, String)] = []
        if !(6...3200).contains(interval) { out.append(("interval", Int(interval), "6–3200 (7.5 ms–4 s)")) }
        if latency > 499 { out.append(("latency", Int(latency), "0–499")) }
        if !(10...3200).contains(timeout) {
            out.append(("supervision timeout", Int(timeout), "10–3200 (100 ms–32 s)"))
        } else if interval >= 6, Int(timeout) * 10_000 <= (1 + Int(latency)) * Int(interval) * 1250 * 2 {
            // connSupervisionTimeout > (1 + connPeripheralLatency) × connInterval × 2.
            out.append(("supervision timeout", Int(timeout), "more than (1 + latency) × interval × 2"))
        }
        if windowSize < 1 || Int(windowSize) > min(8, Int(max(interval, 1)) - 1) {
            out.append(("window size", Int(windowSize), "1–min(8, interval − 1)"))
        }
        if windowOffset > interval { out.append(("window offset", Int(windowOffset), "0–interval")) }
        if let hop, !(5...16).contains(hop) { out.append(("hop increment", Int(hop), "5–16")) }
        return out
    }
}

/// Per link, how many payload octets its data PDUs may carry each way (Vol 6, Part B, 4.5.10): 27 until a Data Length
/// Update, the effective maximum after one (``LinkLayerProcedures``). Known only on links followed from their
/// CONNECT_IND, where no LL_LENGTH_REQ could have passed unseen before; from an LL_LENGTH_REQ or RSP until the update
/// settles, and on a link whose encryption the sniffer could not read, it is not known, and nothing is checked.
struct LLLengthLimits {
    struct Limit {
        var toPeripheral = 27
        var toCentral = 27
        var negotiated = false
        var known = true
        var encrypted = false
    }
    var limits: [UInt16: Limit] = [:]

    mutating func started(_ info: LLConnectionInfo) {
        if !info.inferred { limits[info.handle] = Limit() }
    }

    /// An LL_LENGTH_REQ or RSP: the maximum is in change until the update settles.
    mutating func lengthProcedure(handle: UInt16) { limits[handle]?.known = false }

    mutating func settled(handle: UInt16, _ length: DataLength) {
        guard limits[handle] != nil else { return }
        limits[handle]!.toPeripheral = Int(length.maxTxOctets)
        limits[handle]!.toCentral = Int(length.maxRxOctets)
        limits[handle]!.negotiated = true
        limits[handle]!.known = true
    }

    mutating func encryption(handle: UInt16, on: Bool) { limits[handle]?.encrypted = on }

    /// The link's maximum toward `direction`'s receiver, when `length` payload octets exceed it; `withMIC`: the length
    /// counts the MIC of an encrypted PDU (a header's Length), not a plaintext's.
    func exceeded(handle: UInt16, direction: Direction, length: Int, withMIC: Bool) -> (maximum: Int, negotiated: Bool)? {
        guard let l = limits[handle], l.known, direction != .unknown else { return nil }
        let maximum = direction == .tx ? l.toPeripheral : l.toCentral
        return length - (withMIC && l.encrypted ? 4 : 0) > maximum ? (maximum, l.negotiated) : nil
    }

    mutating func ended(handle: UInt16) { limits[handle] = nil }
}
