#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether a second thread may be used for one file's pass: more than one core online, and
/// `BLESCOPE_THREADS=1` not set (it runs every pass on one thread, for byte-identity checks and measurements).
public let secondThreadAvailable: Bool = {
    if let v = getenv("BLESCOPE_THREADS"), String(cString: v) == "1" { return false }
    return sysconf(Int32(_SC_NPROCESSORS_ONLN)) > 1
}()

/// `BLESCOPE_THREADS=2`: use the second thread wherever a pass can, whatever the load or the default (to measure
/// both ways on any machine).
public let secondThreadForced: Bool = {
    guard let v = getenv("BLESCOPE_THREADS") else { return false }
    return String(cString: v) == "2" && secondThreadAvailable
}()

/// Whether a second thread for one file's pass is expected to pay now: ``secondThreadAvailable`` and, besides this
/// process, fewer than one task per other core running.
///
/// Linux: `procs_running` of `/proc/stat` (tasks running or runnable now, the calling thread included), five samples
/// 1 ms apart, averaged. The 1-minute load average used before counts blescope's own previous runs: after one run it
/// stays above 1 for a minute, so back-to-back runs on an idle 2-core machine never used the second thread. Elsewhere,
/// or if `/proc/stat` cannot be read, the 1-minute load average (at most cores − 1).
/// - Parameter samples: how many samples to average (each after the first waits 1 ms); one takes no time, for a caller
///   that asks again later.
public func secondCoreIdle(samples: Int = 5) -> Bool {
    guard secondThreadAvailable else { return false }
    let cores = Double(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
    if let others = otherRunnableTasks(samples: max(1, samples)) { return others <= cores - 1.5 }
    var load = [Double](repeating: 0, count: 1)
    guard getloadavg(&load, 1) == 1 else { return true }
    return load[0] <= cores - 1
}

/// Average number of tasks running or runnable besides the calling thread, from `/proc/stat`'s `procs_running`
/// sampled `samples` times 1 ms apart; nil where there is no such file.
func otherRunnableTasks(samples: Int) -> Double? {
    var total = 0
    for i in 0..<samples {
        if i > 0 { usleep(1_000) }
        guard let running = procsRunning() else { return nil }
        total += max(0, running - 1)
    }
    return Double(total) / Double(samples)
}

/// `procs_running` from `/proc/stat` (about 1 KiB here; the interrupt line makes it longer on large machines); nil
/// where there is no `/proc` (Darwin: ``secondCoreIdle(samples:)`` then reads the load average).
func procsRunning() -> Int? {
    #if os(Linux)
    let fd = open("/proc/stat", O_RDONLY)
    #else
    let fd: Int32 = -1
    #endif
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var buffer = [UInt8](repeating: 0, count: 16_384)
    var n = 0
    while true {
        if n == buffer.count {
            guard buffer.count < 1 << 20 else { break }
            buffer.append(contentsOf: repeatElement(0, count: buffer.count))
        }
        let got = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress! + n, $0.count - n) }
        if got <= 0 { break }
        n += got
    }
    guard n > 0 else { return nil }
    let key = Array("procs_running ".utf8)
    var i = 0
    while i + key.count <= n {
        // At the start of a line.
        if (i == 0 || buffer[i - 1] == UInt8(ascii: "\n")) && buffer[i..<(i + key.count)].elementsEqual(key) {
            var j = i + key.count, value = 0, digits = 0
            while j < n, buffer[j] >= UInt8(ascii: "0"), buffer[j] <= UInt8(ascii: "9") {
                value = value * 10 + Int(buffer[j] - UInt8(ascii: "0"))
                j += 1
                digits += 1
            }
            return digits > 0 ? value : nil
        }
        i += 1
    }
    return nil
}
