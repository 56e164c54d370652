/// Connection timing units (Core Spec Vol 6, Part B, 4.5.1; Vol 4, Part E, 7.7.65.1): the connection interval counts
/// steps of 1.25 ms.
public enum ConnectionTiming {
    @inlinable public static func intervalMilliseconds(_ units: UInt16) -> Double { Double(units) * 1.25 }
}
