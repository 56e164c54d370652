import BLECore
import BLEProtocols

/// The ISO data of a capture, one ``ISOAccumulator`` per (controller, handle, direction) and stream: the per-record
/// path. Controller 0's streams are found through a flat table indexed by handle and direction (one load per packet);
/// other controllers through a dictionary.
struct ISOData {
    var accumulators: [ISOAccumulator] = []
    /// The stream each accumulator belongs to (nil: data on a handle no event established).
    var streamNumbers: [Int?] = []
    private var fast: [Int32] = []
    private var index: [UInt32: Int] = [:]
    /// The stream open on a (controller, direction, handle) and its SDU interval, for the accumulator its data opens.
    private var current: [UInt32: (number: Int, interval: Int64)] = [:]

    @inline(__always)
    private static func key(_ controller: UInt16, _ direction: Direction, _ handle: UInt16) -> UInt32 {
        UInt32(controller) << 16 | (direction == .tx ? 0 : 0x1000) | UInt32(handle & 0x0FFF)
    }

    /// A stream was established on its handle: data from now on counts in new accumulators, with its SDU interval.
    mutating func established(_ stream: ISOStream) {
        for direction in [Direction.tx, .rx] {
            let k = Self.key(stream.controller, direction, stream.handle)
            current[k] = (stream.number, Int64(stream.sduInterval(direction)))
            detach(k)
        }
    }

    private mutating func detach(_ k: UInt32) {
        if k < 0x2000, !fast.isEmpty { fast[Int(k)] = -1 }
        index[k] = nil
    }

    /// One HCI ISO data packet.
    @inline(__always)
    mutating func add(
        _ header: ISOHeader, direction: Direction, controller: UInt16, frame: Int, timestamp: Timestamp, findings: inout [Finding]
    ) {
        let k = Self.key(controller, direction, header.handle)
        let i: Int
        if k < 0x2000, !fast.isEmpty, fast[Int(k)] >= 0 {
            i = Int(fast[Int(k)])
        } else if k >= 0x2000, let j = index[k] {
            i = j
        } else {
            i = open(k, controller: controller, direction: direction, handle: header.handle)
        }
        accumulators[i].add(header, frame: frame, timestamp: timestamp, findings: &findings)
    }

    @inline(never)
    private mutating func open(_ k: UInt32, controller: UInt16, direction: Direction, handle: UInt16) -> Int {
        var a = ISOAccumulator(controller: controller, handle: handle & 0x0FFF, direction: direction)
        let stream = current[k]
        a.interval = stream?.interval ?? 0
        accumulators.append(a)
        streamNumbers.append(stream?.number)
        let i = accumulators.count - 1
        if k < 0x2000 {
            if fast.isEmpty { fast = Array(repeating: -1, count: 0x2000) }
            fast[Int(k)] = Int32(i)
        } else {
            index[k] = i
        }
        return i
    }

    /// Ends every open SDU (cut by the end of the capture) and gives each accumulator's result.
    /// In stream order (data on no established stream last), rx before tx within a stream (the log shows loss on what
    /// this host received; what it sent is counted as the host numbered it): the order `iso` lists the streams in, not
    /// the order their first packets happened to come in.
    mutating func finish(streams: [ISOStream], findings: inout [Finding], frame: Int) -> [ISOStreamHealth] {
        var out: [ISOStreamHealth] = []
        for i in accumulators.indices {
            accumulators[i].reassembler.finish(findings: &findings, frame: frame)
            let stream = streamNumbers[i].map { streams[$0 - 1] }
            out.append(accumulators[i].health(stream: stream))
        }
        let order = out.indices.sorted {
            (streamNumbers[$0] ?? Int.max, out[$0].direction == .rx ? 0 : 1, $0)
                < (streamNumbers[$1] ?? Int.max, out[$1].direction == .rx ? 0 : 1, $1)
        }
        return order.map { out[$0] }
    }
}
