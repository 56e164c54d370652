import ArgumentParser
import BLEReports
import Dispatch
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Options of the commands that take many captures (`info`, `timeline`).
struct BatchOptions: ParsableArguments {
    @Option(name: .customLong("jobs"), help: "Captures processed at once when several are given (default: the number of cores).")
    var jobs: Int?

    var effectiveJobs: Int { max(1, jobs ?? BatchRunner.cores) }
}

/// Runs one piece of work per capture on several threads and writes their outputs in input order,
/// exactly as a sequential run would.
///
/// Each capture's output goes to its own anonymous temporary file; the calling thread copies the
/// files to standard output in order as they complete. Memory stays bounded: at most `jobs`
/// captures are being analysed at once, and workers wait when they get more than `window` files
/// ahead of the one being written (so open temporary files are bounded too).
enum BatchRunner {
    static var cores: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }

    /// What one capture's work reports.
    struct Outcome: Sendable {
        /// False when the capture could not be read (the run exits 2 at the end).
        var ok: Bool
        /// One line for standard error (the capture's failure), written in order with the outputs.
        var message: String?
        init(ok: Bool, message: String? = nil) {
            self.ok = ok
            self.message = message
        }
    }

    private final class Slot: @unchecked Sendable {
        let done = DispatchSemaphore(value: 0)
        var fd: Int32 = -1
        var outcome = Outcome(ok: false, message: nil)
    }

    /// Runs `work(index, path, output)` for every path and returns how many failed.
    /// `work` must only write to the stream it is given (it runs on a worker thread).
    static func run(_ paths: [String], jobs: Int, out: OutputStream,
                    work: @escaping @Sendable (Int, String, OutputStream) -> Outcome) -> Int {
        let jobs = max(1, min(jobs, paths.count))
        if jobs == 1 {
            // Sequential: straight to standard output.
            var failed = 0
            for (i, path) in paths.enumerated() {
                let outcome = work(i, path, out)
                if let message = outcome.message { out.flush(); writeStandardError(message) }
                if !outcome.ok { failed += 1 }
            }
            return failed
        }
        let slots = paths.map { _ in Slot() }
        let next = Mutex(0)
        let window = DispatchSemaphore(value: max(4 * jobs, 8))
        let group = DispatchGroup()
        for _ in 0..<jobs {
            DispatchQueue.global().async(group: group) {
                while true {
                    window.wait()
                    let i = next.withLock { n -> Int in defer { n += 1 }; return n }
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
        var failed = 0
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        for slot in slots {
            slot.done.wait()
            if slot.fd >= 0 {
                _ = lseek(slot.fd, 0, SEEK_SET)
                while true {
                    let n = buffer.withUnsafeMutableBytes { read(slot.fd, $0.baseAddress, $0.count) }
                    if n <= 0 { break }
                    buffer.withUnsafeBytes { out.write(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
                }
                close(slot.fd)
                slot.fd = -1
            }
            if let message = slot.outcome.message { out.flush(); writeStandardError(message) }
            if !slot.outcome.ok { failed += 1 }
            window.signal()
        }
        group.wait()
        return failed
    }
}

extension OutputStream {
    /// Writes a JSON object line with `"file": path` as its first key, given a line `{...}\n`.
    func writeTagged(file key: [UInt8], line: UnsafeRawBufferPointer) {
        guard line.count >= 2, line[0] == UInt8(ascii: "{") else { write(line); return }
        write(key)
        if line[1] != UInt8(ascii: "}") { write([UInt8(ascii: ",")]) }
        write(UnsafeRawBufferPointer(rebasing: line[1...]))
    }
}

/// `{"file":"<path>"` as JSON bytes (the prefix `writeTagged` puts in front of each line).
func jsonFileKey(_ path: String) -> [UInt8] {
    var w = JSONWriter()
    w.beginObject()
    w.field("file", path)
    w.endObject()
    var bytes = Array(w.string.utf8)
    while let last = bytes.last, last != UInt8(ascii: "\"") { bytes.removeLast() }  // drop the closing brace
    return bytes
}
