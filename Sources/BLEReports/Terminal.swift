import BLECore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where output goes and how it may be styled: colour only on a TTY, never in pipes or files; lines fitted to
/// `width` columns (``TextWidth``), or as long as they are when it is nil.
public struct Terminal: Sendable {
    public var colors: Bool
    /// Columns a line may take; nil: no limit (`--wide`, and the libraries' default).
    public var width: Int?

    public init(colors: Bool, width: Int? = nil) {
        self.colors = colors
        self.width = width
    }

    /// Colours when standard output is a terminal and `NO_COLOR` is unset; no width limit.
    public static var standardOutput: Terminal { standardOutput(width: nil) }

    /// Colours as ``standardOutput``, lines fitted to `width`.
    public static func standardOutput(width: Int?) -> Terminal {
        Terminal(colors: isatty(STDOUT_FILENO) == 1 && getenv("NO_COLOR") == nil, width: width)
    }

    public static var standardErrorIsTTY: Bool { isatty(STDERR_FILENO) == 1 }

    public enum Style: String, Sendable {
        case bold = "1", dim = "2", red = "31", green = "32", yellow = "33", blue = "34", magenta = "35", cyan = "36"
    }

    public func paint(_ text: String, _ style: Style) -> String {
        colors ? "\u{1B}[\(style.rawValue)m\(text)\u{1B}[0m" : text
    }

    public func severity(_ s: Finding.Severity) -> String {
        switch s {
        case .info: paint("info", .cyan)
        case .warning: paint("warning", .yellow)
        case .error: paint("error", .red)
        case .critical: paint("critical", .red)
        }
    }
}

/// Writes bytes to standard output through a large buffer (one write per 64 KiB, not per line).
public final class OutputStream {
    private var buffer: [UInt8] = []
    private let fd: Int32

    public init(fd: Int32 = STDOUT_FILENO) {
        self.fd = fd
        buffer.reserveCapacity(1 << 16)
    }

    public func write(_ s: String) {
        buffer.append(contentsOf: s.utf8)
        if buffer.count >= 1 << 16 { flush() }
    }

    /// `package`: for renderers that lend their line buffer (``TimelineJSONRenderer``) without a copy into an array;
    /// outside the package, bytes go in as `[UInt8]`.
    package func write(_ bytes: UnsafeRawBufferPointer) {
        // A chunk as large as the buffer (``TimelineJSONRenderer/writeBuffered(_:to:)``) goes to the file after what is
        // buffered, without a copy into the buffer.
        if bytes.count >= 1 << 16 {
            flush()
            writeAll(bytes)
            return
        }
        buffer.append(contentsOf: bytes)
        if buffer.count >= 1 << 16 { flush() }
    }

    public func write(_ bytes: [UInt8]) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= 1 << 16 { flush() }
    }

    public func flush() {
        guard !buffer.isEmpty else { return }
        buffer.withUnsafeBytes { writeAll($0) }
        buffer.removeAll(keepingCapacity: true)
    }

    private func writeAll(_ raw: UnsafeRawBufferPointer) {
        var offset = 0
        while offset < raw.count {
            let n = systemWrite(fd, raw.baseAddress! + offset, raw.count - offset)
            if n <= 0 { break }  // EPIPE (e.g. `| head`): stop quietly
            offset += n
        }
    }

    deinit { flush() }
}

/// write(2), named apart from ``OutputStream``'s own `write` methods.
@inline(__always) private func systemWrite(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    #if canImport(Glibc)
    Glibc.write(fd, bytes, count)
    #else
    Darwin.write(fd, bytes, count)
    #endif
}

/// Progress on standard error for long runs: bytes and records, rate, ETA. Only on a TTY.
public final class ProgressReporter {
    private let enabled: Bool
    private let label: String
    private let totalBytes: Int64?
    private let start: UInt64
    private var line = StatusLine()

    public init(label: String, totalBytes: Int64?, enabled: Bool = Terminal.standardErrorIsTTY) {
        self.label = label
        self.totalBytes = totalBytes
        self.enabled = enabled
        start = ProgressReporter.nowNanoseconds()
    }

    public static func nowNanoseconds() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }

    /// Cheap to call often: it looks at the clock only every 65,536 records.
    @inline(__always)
    public func update(records: Int, bytes: Int64) {
        guard enabled, records & 0xFFFF == 0 else { return }
        draw(records: records, bytes: bytes)
    }

    private func draw(records: Int, bytes: Int64) {
        let now = ProgressReporter.nowNanoseconds()
        guard line.isDue(now) else { return }
        let elapsed = Double(now - start) / 1e9
        let rate = elapsed > 0 ? Double(records) / elapsed : 0
        var text = "\(label): \(formatCount(records)) records, \(formatBytes(bytes))"
        if let total = totalBytes, total > 0 {
            let fraction = min(1, Double(bytes) / Double(total))
            text += " (\(Int(fraction * 100)) %)"
            if fraction > 0.01 {
                let eta = elapsed / fraction - elapsed
                text += ", ETA \(Int(eta.rounded())) s"
            }
        }
        text += ", \(formatCount(Int(rate))) records/s"
        line.show(text)
    }

    /// Clears the progress line.
    public func finish() { line.clear() }
}

/// One line of status on standard error, redrawn in place at most five times a second and cleared at the end.
struct StatusLine {
    private var lastDraw: UInt64 = 0
    private var drawn = false

    /// True (and the clock restarted) when 200 ms have passed since the last draw.
    mutating func isDue(_ now: UInt64) -> Bool {
        guard now - lastDraw > 200_000_000 else { return false }
        lastDraw = now
        return true
    }

    mutating func show(_ text: String) {
        writeStandardError("\r\u{1B}[K" + text)
        drawn = true
    }

    mutating func clear() {
        if drawn { writeStandardError("\r\u{1B}[K") }
        drawn = false
    }
}

/// `1,234,567`
public func formatCount(_ n: Int) -> String {
    let digits = String(n.magnitude)
    var out = ""
    for (i, c) in digits.enumerated() {
        if i > 0, (digits.count - i) % 3 == 0 { out.append(",") }
        out.append(c)
    }
    return (n < 0 ? "-" : "") + out
}

/// `764.2 MB` (decimal units, as capinfos prints them).
public func formatBytes(_ n: Int64) -> String {
    let v = Double(n)
    if v < 1000 { return "\(n) B" }
    if v < 1e6 { return String(fractionDigits: 1, v / 1e3) + " kB" }
    if v < 1e9 { return String(fractionDigits: 1, v / 1e6) + " MB" }
    return String(fractionDigits: 2, v / 1e9) + " GB"
}

/// `512.0 kbps`: a rate in the run's one unit (``RateUnit/display``, `--units`).
public func formatBitRate(_ bps: Double) -> String { formatRate(bps) }

/// Writes text to standard error unbuffered (progress lines, error messages).
public func writeStandardError(_ text: String) {
    var bytes = Array(text.utf8)
    bytes.withUnsafeMutableBytes { raw in
        var offset = 0
        while offset < raw.count {
            let n = write(STDERR_FILENO, raw.baseAddress! + offset, raw.count - offset)
            if n <= 0 { break }
            offset += n
        }
    }
}
