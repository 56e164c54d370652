import BLECore

/// A connection event that comes between the host's HCI Reset and the reset's Command Complete is one the controller
/// queued before it reset: the reset ends every connection (Core Spec Vol 4, Part E, 7.3.2), and the host sends the
/// next command, the only way to a new connection, once the reset completed (4.4). BTstack's and CSR dongles' logs
/// hold such events 1.5 ms after the reset (corpus: the Audio Gateway HFP logs, frames 33–34).
///
/// The window is bounded so that a reset whose completion the log lacks does not swallow every later connection.
enum StaleAfterReset {
    /// A controller completes a reset well within this (BTstack, BlueZ and Android wait at most 1–2 s for it).
    static let window: Int64 = 1_000_000

    /// True when an event at `event` comes while the reset sent at `resetSent` has not completed, within ``window``.
    static func isStale(_ event: Timestamp, resetSent: Timestamp?) -> Bool {
        guard let resetSent else { return false }
        let after = event.microseconds(since: resetSent)
        return after >= 0 && after <= window
    }
}
