import BLECapture
import BLECore
import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs one piece of work per capture on several threads and writes their outputs in input order,
/// exactly as a sequential run would.
///
/// Each capture's output goes to its own anonymous temporary file; the calling thread copies the
/// files to the output in order as they complete. Memory stays bounded: at most `jobs` captures are
/// being analysed at once, and workers wait when they get more than `window` files ahead of the one
/// being written (so open temporary files are bounded too). Failures are written to standard error
/// in the same order, and the run goes on.
public enum BatchRunner {
    public static var cores: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// What one capture's work reports.
    public struct Outcome: Sendable {
        /// False when the capture could not be read (the run exits 2 at the end).
        public var ok: Bool
        /// One line for standard error (the capture's failure), written in order with the outputs.
        public var message: String?

        public init(ok: Bool, message: String? = nil) {
            self.ok = ok
            self.message = message
        }
    }

    /// Unchecked Sendable: `fd` and `outcome` are written by one worker before `done.signal()` and read by the calling
    /// thread only after `done.wait()`; the semaphore orders the two (it is the lock here).
    private final class Slot: @unchecked Sendable {
        let done = DispatchSemaphore(value: 0)
        var fd: Int32 = -1
        var outcome = Outcome(ok: false, message: nil)
    }

    /// Runs `work(index, path, output)` for every path and returns how many failed.
    /// `work` must only write to the stream it is given (it runs on a worker thread). `progress`, when given,
    /// is told how many captures are done after each one is written (on the calling thread).
    public static func run(
        _ paths: [String], jobs: Int, out: OutputStream, progress: FilesProgress? = nil,
        work: @escaping @Sendable (Int, String, OutputStream) -> Outcome
    ) -> Int {
        let jobs = max(1, min(jobs, paths.count))
        var failed = 0
        func finish(_ outcome: Outcome, done: Int) {
            if let message = outcome.message {
                out.flush()
                progress?.clear()
                writeStandardError(message)
            }
            if !outcome.ok { failed += 1 }
            progress?.update(done: done, failed: failed)
        }
        if jobs == 1 {
            // Sequential: straight to the output.
            for (i, path) in paths.enumerated() { finish(work(i, path, out), done: i + 1) }
            progress?.clear()
            return failed
        }
        let slots = paths.map { _ in Slot() }
        let next = Locked(0)
        let window = DispatchSemaphore(value: max(4 * jobs, 8))
        let group = DispatchGroup()
        for _ in 0..<jobs {
            DispatchQueue.global().async(group: group) {
                while true {
                    window.wait()
                    let i = next.withLock { n -> Int in
                        defer { n += 1 }; return n
                    }
                    guard i < paths.count else { window.signal(); return }
                    let slot = slots[i]
                    if let file = tmpfile() {
                        let fd = dup(fileno(file))
                        fclose(file)  // the anonymous file lives on through `fd`
                        let stream = OutputStream(fd: fd)
                        slot.outcome = work(i, paths[i], stream)
                        stream.flush()
                        slot.fd = fd
                    } else {
                        slot.outcome = Outcome(ok: false, message: "blescope: \(paths[i]): cannot create a temporary file\n")
                    }
                    slot.done.signal()
                }
            }
        }
        for (i, slot) in slots.enumerated() {
            slot.done.wait()
            if slot.fd >= 0 {
                out.copy(fromStartOf: slot.fd)
                close(slot.fd)
                slot.fd = -1
            }
            finish(slot.outcome, done: i + 1)
            window.signal()
        }
        group.wait()
        progress?.clear()
        return failed
    }
}

extension BatchRunner {
    /// Runs `work(index, path, capture, output)` for every capture that opens (as ``run(_:jobs:out:progress:work:)``)
    /// and returns how many failed. A capture that cannot be opened fails with its reason on standard error and, when
    /// `jsonErrors` (a JSON Lines batch), its ``errorLine(file:error:)`` in the output where its result would have been.
    public static func forEachCapture(
        _ paths: [String], jobs: Int, out: OutputStream, progress: FilesProgress? = nil, jsonErrors: Bool = false,
        work: @escaping @Sendable (Int, String, CaptureFile, OutputStream) -> Outcome
    ) -> Int {
        run(paths, jobs: jobs, out: out, progress: progress) { i, path, out in
            let capture: CaptureFile
            do throws(CaptureOpenError) { capture = try CaptureFile.open(path: path) } catch {
                if jsonErrors { out.write(errorLine(file: path, error: error) + "\n") }
                return Outcome(ok: false, message: "blescope: \(error)\n")
            }
            return work(i, path, capture, out)
        }
    }

    /// `{"file": path, "error": reason}`: the JSON line of a capture that could not be read (`info --json`, `ota --json`
    /// over several captures).
    public static func errorLine(file: String, error: CaptureOpenError) -> String {
        var w = JSONWriter()
        w.beginObject()
        w.field("file", file)
        w.field("error", error.message)
        w.endObject()
        return w.string
    }
}

/// `report: 1,204 of 3,000 files (2 unreadable), 41 files/s, ETA 43 s` on standard error, for runs over many
/// captures. Only on a terminal; redrawn at most five times a second.
public final class FilesProgress {
    private let label: String
    private let total: Int
    private let start = ProgressReporter.nowNanoseconds()
    private var line = StatusLine()

    /// Nil unless standard error is a terminal (or `enabled` says otherwise) and there is more than one file.
    public init?(label: String, total: Int, enabled: Bool = Terminal.standardErrorIsTTY) {
        guard enabled, total > 1 else { return nil }
        self.label = label
        self.total = total
    }

    public func update(done: Int, failed: Int) {
        let now = ProgressReporter.nowNanoseconds()
        guard done < total, line.isDue(now) else { return }
        let elapsed = Double(now - start) / 1e9
        var text = "\(label): \(formatCount(done)) of \(formatCount(total)) files"
        if failed > 0 { text += " (\(formatCount(failed)) unreadable)" }
        if elapsed > 0.5, done > 0 {
            let rate = Double(done) / elapsed
            text += ", \(String(fractionDigits: rate < 10 ? 1 : 0, rate)) files/s, ETA \(Int((Double(total - done) / rate).rounded())) s"
        }
        line.show(text)
    }

    public func clear() { line.clear() }
}

extension OutputStream {
    /// Writes a JSON object line with `"file": path` as its first key, given a line `{...}\n`.
    public func writeTagged(file key: [UInt8], line: [UInt8]) {
        line.withUnsafeBytes { line in
            guard line.count >= 2, line[0] == UInt8(ascii: "{") else { write(line); return }
            write(key)
            if line[1] != UInt8(ascii: "}") { write([UInt8(ascii: ",")]) }
            write(UnsafeRawBufferPointer(rebasing: line[1...]))
        }
    }

    /// Appends everything in the file `fd` from its first byte (a worker's spooled output).
    public func copy(fromStartOf fd: Int32) {
        _ = lseek(fd, 0, SEEK_SET)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            chunk.withUnsafeBytes { write(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        }
    }
}

/// `{"file":"<path>"` as JSON bytes (the prefix `writeTagged` puts in front of each line).
public func jsonFileKey(_ path: String) -> [UInt8] {
    var w = JSONWriter()
    w.beginObject()
    w.field("file", path)
    w.endObject()
    var bytes = Array(w.string.utf8)
    while let last = bytes.last, last != UInt8(ascii: "\"") { bytes.removeLast() }  // drop the closing brace
    return bytes
}
