/// Connection timing units, the one place their sizes are written down: the connection interval counts steps of
/// 1.25 ms (Core Spec Vol 6, Part B, 4.5.1; Vol 4, Part E, 7.7.65.1; the Peripheral Preferred Connection Parameters
/// characteristic, Vol 3, Part C, 12.3, uses the same unit), the supervision timeout steps of 10 ms.
public enum ConnectionTiming {
    /// Connection interval units of 1.25 ms → milliseconds (`24` → `30.0`).
    @inlinable public static func intervalMilliseconds(_ units: UInt16) -> Double { Double(units) * 1.25 }
    /// Connection interval units of 1.25 ms → whole microseconds (`24` → `30_000`).
    @inlinable public static func intervalMicroseconds(_ units: UInt16) -> Int { Int(units) * 1250 }
    /// Supervision timeout units of 10 ms → milliseconds (`400` → `4000`).
    @inlinable public static func supervisionTimeoutMilliseconds(_ units: UInt16) -> Int { Int(units) * 10 }
}
