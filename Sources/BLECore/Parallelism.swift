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
