import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols

/// The whole timeline of a capture, in columns, for the page's searchable table (``HTMLReport`` embeds it gzipped; the
/// page's script inflates it with the browser's own `DecompressionStream`, so the page stays one file without a fetch).
///
/// Columns rather than one object per event, and every text (layer, name, summary) once in a string table: a capture's
/// events repeat a few names and summaries, so an event costs a handful of small integers. Frames and times are
/// stored as differences from the previous event (mostly 1 and a few hundred µs).
public struct EmbeddedTimeline: Sendable {
    /// Most events embedded (the first ones); the page says how many more the capture has.
    public static let maxEvents = 200_000
    /// Most finding marks (frame, severity, text) the rows carry.
    public static let maxMarks = 20_000

    public private(set) var frames: [Int] = []
    public private(set) var times: [Int64] = []
    /// Connection numbers (0: none).
    public private(set) var connections: [Int] = []
    /// ATT attribute handles (0: none; 0 is no attribute's handle, Core Spec Vol 3, Part F, 3.2.2).
    public private(set) var handles: [Int] = []
    /// ``Direction`` raw values.
    public private(set) var directions: [UInt8] = []
    /// Indexes into ``strings``.
    public private(set) var layers: [Int] = []
    public private(set) var names: [Int] = []
    public private(set) var summaries: [Int] = []
    public private(set) var strings: [String] = []
    private var stringIndex: [String: Int] = [:]
    /// Set when the page holds the first ``maxEvents`` events and the capture has more: the frame of the first record
    /// not read (the pass stops there, so a large capture costs no more than its first events).
    public private(set) var cutAtFrame: Int?
    /// The capture's first record, µs: the page's times are seconds from it (as the links chart's axis).
    public var origin: Int64?
    /// Findings on frames: (frame, severity `info`/`warning`/`error`/`critical`, text).
    public var marks: [(frame: Int, severity: String, text: String)] = []

    public init() {}

    public var count: Int { frames.count }
    var isFull: Bool { frames.count >= limit }
    /// ``maxEvents`` unless a test asks for fewer.
    var limit = EmbeddedTimeline.maxEvents

    @_optimize(speed)
    mutating func string(_ s: String) -> Int {
        if let i = stringIndex[s] { return i }
        strings.append(s)
        stringIndex[s] = strings.count - 1
        return strings.count - 1
    }

    @_optimize(speed)
    public mutating func add(_ e: TimelineEvent) {
        guard !isFull else { return }
        frames.append(e.frame)
        times.append(e.timestamp.microseconds)
        connections.append(e.connectionNumber ?? 0)
        handles.append(e.handle.map(Int.init) ?? 0)
        directions.append(e.direction.rawValue)
        layers.append(layerString(e.layer))
        names.append(nameString(e.name))
        if let handle = e.summaryHandle {
            summaries.append(handleSummaryString(handle))
        } else if let entry = e.completedPacketsEntry {
            summaries.append(completedPacketsSummaryString(entry, e))
        } else {
            summaries.append(string(e.summary))
        }
    }

    // The string table's index of the texts most events repeat, found without hashing a String per event (the summary
    // `handle=0x002a` was built per value event only to be looked up: docs/performance.md#embedded-timeline). Each
    // calls ``string(_:)`` the first time, so the table's order is the order of first use, as before.
    private var lastLayer: (layer: Layer, index: Int)?
    private var handleSummaryIndexes: [UInt16: Int] = [:]
    private var lastHandleSummary: (handle: UInt16, index: Int)?
    private var completedPacketsSummaryIndexes: [UInt32: Int] = [:]
    private static let recentNameCount = 8
    private var lastName: (text: String, index: Int)?
    private var recentNames: [(text: String, length: Int, index: Int)] = []
    /// The entry of ``recentNames`` the next new name replaces, once it is full.
    private var nextRecentName = 0

    @_optimize(speed)
    mutating func layerString(_ layer: Layer) -> Int {
        if let last = lastLayer, last.layer == layer { return last.index }
        let i = string(layer.rawValue)
        lastLayer = (layer, i)
        return i
    }

    @_optimize(speed)
    mutating func handleSummaryString(_ handle: UInt16) -> Int {
        // Runs of values on one handle: the last one's index before the dictionary's hash.
        if let last = lastHandleSummary, last.handle == handle { return last.index }
        let i: Int
        if let found = handleSummaryIndexes[handle] {
            i = found
        } else {
            i = string("handle=" + hex(handle, width: 4))
            handleSummaryIndexes[handle] = i
        }
        lastHandleSummary = (handle, i)
        return i
    }

    /// A Number Of Completed Packets event's summary (`handle=0x0040 completed=1`: a third of a bulk capture's rows, a
    /// few texts) by its one entry; the event's own summary is built only the first time.
    @_optimize(speed)
    mutating func completedPacketsSummaryString(_ entry: NumberOfCompletedPackets.Entry, _ e: TimelineEvent) -> Int {
        let key = UInt32(entry.handle) << 16 | UInt32(entry.completedPackets)
        if let i = completedPacketsSummaryIndexes[key] { return i }
        let i = string(e.summary)
        completedPacketsSummaryIndexes[key] = i
        return i
    }

    /// Consecutive events mostly share their name (a run of notifications); where it changes, the capture's events
    /// mostly take a few names in turn (notifications, write commands, Number Of Completed Packets): the last
    /// ``recentNameCount`` names are compared (length first) before the string table's hash. A hash per change of
    /// name was 100,000 hashes on `cap1m.btsnoop`, 1.9 % of `report -o` (callgrind); comparing the recent names
    /// without their lengths first cost more than it saved (a string comparison each, 1 M of them).
    @_optimize(speed)
    mutating func nameString(_ name: String) -> Int {
        if let last = lastName, last.text == name { return last.index }
        let length = name.utf8.count
        var i = -1
        for k in 0..<recentNames.count where recentNames[k].length == length && recentNames[k].text == name {
            i = recentNames[k].index
            break
        }
        if i < 0 {
            i = string(name)
            if recentNames.count < Self.recentNameCount {
                recentNames.append((name, length, i))
            } else {
                recentNames[nextRecentName] = (name, length, i)
                nextRecentName = (nextRecentName + 1) % Self.recentNameCount
            }
        }
        lastName = (name, i)
        return i
    }

    /// The JSON document the page's script reads (times are µs from `t0`): `{"v":1,"t0":µs,"s":[strings],"f":[Δframe],"t":[Δµs],"c":[…],
    /// "h":[…],"d":[…],"l":[…],"n":[…],"m":[…],"x":[[frame,severity,text]],"cut":frame or null}`.
    @_optimize(speed)
    public func json() -> String { String(decoding: jsonBytes(), as: UTF8.self) }

    /// ``json()`` as UTF-8: the integer columns written digit by digit (most of the document; through ``JSONWriter``'s
    /// generic values they took a fifth of the page's time), the strings and marks through ``JSONWriter``.
    @_optimize(speed)
    func jsonBytes() -> [UInt8] {
        let t0 = origin ?? times.first ?? 0
        var out: [UInt8] = []
        out.reserveCapacity(count * 22 + 1024)
        out += Array("{\"v\":1,\"t0\":\(t0),\"cut\":\(cutAtFrame.map(String.init) ?? "null"),\"s\":".utf8)
        var w = JSONWriter(capacity: strings.count * 24 + 16)
        w.beginArray()
        for s in strings { w.value(s) }
        w.endArray()
        out += Array(w.string.utf8)
        out += Array(",\"f0\":\(frames.first ?? 0)".utf8)
        Self.append("f", Self.differences(frames, from: frames.first ?? 0), to: &out)
        Self.append("t", Self.differences(times.map(Int.init), from: Int(t0)), to: &out)
        Self.append("c", connections, to: &out)
        Self.append("h", handles, to: &out)
        Self.append("d", directions.map(Int.init), to: &out)
        Self.append("l", layers, to: &out)
        Self.append("n", names, to: &out)
        Self.append("m", summaries, to: &out)
        var x = JSONWriter(capacity: 256)
        x.beginArray()
        for m in marks.prefix(Self.maxMarks) {
            x.beginArray()
            x.value(m.frame)
            x.value(m.severity)
            x.value(m.text)
            x.endArray()
        }
        x.endArray()
        out += Array(",\"x\":".utf8) + Array(x.string.utf8) + [UInt8(ascii: "}")]
        return out
    }

    @_optimize(speed)
    static func differences(_ column: [Int], from start: Int) -> [Int] {
        var previous = start
        return column.map { v in
            defer { previous = v }
            return v &- previous
        }
    }

    /// `,"key":[1,-2,30]`: the values written through a pointer, 4,096 at a time, into a buffer of their largest size
    /// (a sign, 20 digits and a comma each), appended to `out` chunk by chunk. Appended byte by byte, each byte's
    /// capacity and uniqueness check made this 115 instructions a value, 4.6 % of `report -o` (callgrind;
    /// docs/performance.md#embedded-timeline); the whole column at once cost 1.6 MiB more at the peak.
    @_optimize(speed)
    static func append(_ key: String, _ column: [Int], to out: inout [UInt8]) {
        out += Array(",\"\(key)\":[".utf8)
        let chunk = 4096
        var text = [UInt8](repeating: 0, count: chunk * 22)
        column.withUnsafeBufferPointer { values in
            var from = 0
            while from < values.count {
                let to = min(values.count, from + chunk)
                let written = text.withUnsafeMutableBufferPointer { buffer -> Int in
                    let start = buffer.baseAddress!
                    var p = start
                    for i in from..<to {
                        let value = values[i]
                        if i > 0 {
                            p.pointee = UInt8(ascii: ",")
                            p += 1
                        }
                        if value < 0 {
                            p.pointee = UInt8(ascii: "-")
                            p += 1
                        }
                        p = writeDigits(value.magnitude, at: p)
                    }
                    return p - start
                }
                out.append(contentsOf: text[0..<written])
                from = to
            }
        }
        out.append(UInt8(ascii: "]"))
    }

    /// Writes `v`'s decimal digits at `p`; returns the pointer past the last one.
    @_optimize(speed) @inline(__always)
    static func writeDigits(_ v: UInt, at p: UnsafeMutablePointer<UInt8>) -> UnsafeMutablePointer<UInt8> {
        if v < 10 {
            p.pointee = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: v)
            return p + 1
        }
        var n = 2
        var rest = v / 100
        while rest > 0 {
            n += 1
            rest /= 10
        }
        var q = p + n
        var v = v
        repeat {
            q -= 1
            q.pointee = UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: v % 10)
            v /= 10
        } while v > 0
        return p + n
    }

    /// The JSON gzipped (RFC 1952) and in base64: what the page embeds.
    @_optimize(speed)
    public func gzipBase64() -> String { base64(gzipCompress(jsonBytes())) }

    /// The timeline of the capture at `path`: a pass with timeline events on (the report's first pass builds none).
    @_optimize(speed)
    static func build(path: String, options: AnalyzerOptions, limit: Int = maxEvents) -> EmbeddedTimeline {
        var table = EmbeddedTimeline()
        table.limit = limit
        guard let capture = try? CaptureFile.open(path: path) else { return table }
        var options = options
        options.timeline = true
        // The rows hold no value: not copied into the events.
        options.eventValues = false
        let analyzer = Analyzer(options: options)
        analyzer.onEvent = { table.add($0) }
        var record = CaptureRecord.empty
        while capture.next(into: &record) {
            guard !table.isFull else {
                table.cutAtFrame = record.frame
                break
            }
            analyzer.process(record)
        }
        analyzer.finish()
        analyzer.onEvent = nil
        return table
    }
}

/// RFC 4648 base64, with padding: four characters per three bytes, written through a pointer into the string's own
/// storage (appended as four-element arrays, 330 instructions a group, 1.8 % of `report -o`; callgrind).
@_optimize(speed)
func base64(_ bytes: [UInt8]) -> String {
    let alphabet: StaticString = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    let length = (bytes.count + 2) / 3 * 4
    guard length > 0 else { return "" }
    return String(unsafeUninitializedCapacity: length) { out in
        let a = alphabet.utf8Start
        bytes.withUnsafeBufferPointer { input in
            var i = 0, o = 0
            while i + 2 < input.count {
                let n = UInt32(input[i]) << 16 | UInt32(input[i + 1]) << 8 | UInt32(input[i + 2])
                out[o] = a[Int(n >> 18)]
                out[o + 1] = a[Int(n >> 12 & 63)]
                out[o + 2] = a[Int(n >> 6 & 63)]
                out[o + 3] = a[Int(n & 63)]
                i += 3
                o += 4
            }
            let rest = input.count - i
            if rest > 0 {
                let n = UInt32(input[i]) << 16 | (rest == 2 ? UInt32(input[i + 1]) << 8 : 0)
                out[o] = a[Int(n >> 18)]
                out[o + 1] = a[Int(n >> 12 & 63)]
                out[o + 2] = rest == 2 ? a[Int(n >> 6 & 63)] : UInt8(ascii: "=")
                out[o + 3] = UInt8(ascii: "=")
            }
        }
        return length
    }
}
