import BLECapture
import BLECore
import BLEProtocols

/// A connection event that comes between the host's HCI Reset and the reset's Command Complete is one the controller
/// queued before it reset: the reset ends every connection (Core Spec Vol 4, Part E, 7.3.2), and the host sends the
/// next command, the only way to a new connection, once the reset completed (4.4). BTstack's and CSR dongles' logs
/// hold such events 1.5 ms after the reset (corpus: the Audio Gateway HFP logs, frames 33–34).
///
/// So are the events for a link's facts or end that come just after a reset for a handle no link holds: the reset
/// dropped that link, or the log never had it (Thewbi's BTstack log on a BT400: Max Slots Change 45, Link Supervision
/// Timeout Changed 46 and a Disconnection Complete 0x13 at 49 for handle 0x000b, 1–6 ms after the Reset at 43). They
/// make no link and are no link's end. Later ones as well: after the reset a link begins with its Connection Complete,
/// so a Mode Change or Encryption Change seconds later for a handle none opened is no link's either
/// (``staleEvent(_:at:resetSent:)``).
///
/// The window bounds the Connection Complete's staleness only, so that a reset whose completion the log lacks does not
/// swallow every later connection.
enum StaleAfterReset {
    /// A controller completes a reset well within this (BTstack, BlueZ and Android wait at most 1–2 s for it).
    static let window: Int64 = 1_000_000

    /// True when an event at `event` comes while the reset sent at `resetSent` has not completed, within ``window``.
    static func isStale(_ event: Timestamp, resetSent: Timestamp?) -> Bool {
        guard let resetSent else { return false }
        let after = event.microseconds(since: resetSent)
        return after >= 0 && after <= window
    }

    /// The handle and name of an event after a reset sent at `resetSent` that is stale for a handle no link holds: one
    /// stating a link's facts at any time after the reset, a Disconnection Complete within ``window`` (later, it ends a
    /// link from before the log: the capture's edges count it, `link-before-log-ended`).
    static func staleEvent(_ b: UnsafeRawBufferPointer, at time: Timestamp, resetSent: Timestamp) -> (handle: UInt16, name: String)? {
        guard let event = linkEvent(b) else { return nil }
        if b[0] == HCIEventCode.disconnectionComplete.rawValue, !isStale(time, resetSent: resetSent) { return nil }
        return event
    }

    /// The handle and name of an event that states an ACL link's facts or its end, read from the event record's bytes
    /// (code, length, parameters: Vol 4, Part E, 5.4.4); nil for any other event: those that open a link (a stale
    /// Connection Complete is told by ``isStale(_:resetSent:)`` against the reset still pending), SCO/eSCO and ISO
    /// setups, events without a handle.
    static func linkEvent(_ b: UnsafeRawBufferPointer) -> (handle: UInt16, name: String)? {
        guard b.count >= 2 else { return nil }
        let code = b[0]
        let row: (offset: Int, name: String)?
        if code == HCIEventCode.leMeta.rawValue {
            guard b.count >= 3 else { return nil }
            row = leRows[b[2]]
        } else {
            row = rows[code]
        }
        guard let row, b.count >= row.offset + 2 else { return nil }
        return (UInt16(b[row.offset]) | UInt16(b[row.offset + 1] & 0x0F) << 8, row.name)
    }

    /// Event code → the handle's offset in the record (after the code and length octets) and the event's name (7.7).
    private static let rows: [UInt8: (offset: Int, name: String)] = [
        0x05: (3, "Disconnection Complete"), 0x08: (3, "Encryption Change"), 0x59: (3, "Encryption Change"),
        0x30: (3, "Encryption Key Refresh Complete"), 0x0B: (3, "Read Remote Supported Features Complete"),
        0x0C: (3, "Read Remote Version Information Complete"), 0x14: (3, "Mode Change"), 0x1B: (2, "Max Slots Change"),
        0x1D: (3, "Connection Packet Type Changed"), 0x23: (3, "Read Remote Extended Features Complete"),
        0x38: (2, "Link Supervision Timeout Changed"),
    ]
    /// LE Meta subevent → the same (7.7.65: after the subevent code, a status first where the event has one).
    private static let leRows: [UInt8: (offset: Int, name: String)] = [
        0x03: (4, "LE Connection Update Complete"), 0x04: (4, "LE Read Remote Features Complete"),
        0x05: (3, "LE Long Term Key Request"), 0x07: (3, "LE Data Length Change"), 0x0C: (4, "LE PHY Update Complete"),
    ]
}
