import BLECapture
import BLECore

/// Gaps the log itself explains: the host went to sleep. macOS's PacketLogger writes power records (type 0xFB) as
/// the machine sleeps and wakes: "System Sleep" (with "ON->SLEEP") before, "System Power On" (with "SLEEP->ON") after
/// (measured: `pklg-macos-le_hciparse-broadcom-2.5h-sleep-wake-bg-connect-create-cancel-x64.pklg`, frames 635 and 650,
/// 2033 and 2048). A gap that opens within a minute of a sleep note is the host asleep (seen), not a paused log.
struct SleepGaps: Sendable {
    /// One gap explained: the first record after it, and the notes that say the host slept and woke.
    struct Sleep: Sendable {
        var gapFrame: Int
        var sleepFrame: Int
        var wakeFrame: Int?
    }

    /// The last sleep note not yet matched to a gap: its frame and time.
    var pending: (frame: Int, at: Timestamp)?
    var sleeps: [Sleep] = []
    /// A sleep note this long before the last record of a gap still explains it (the stack's last words before sleep).
    static let window: Int64 = 60_000_000

    static func isSleep(_ text: String) -> Bool { text.hasPrefix("System Sleep") }
    static func isWake(_ text: String) -> Bool { text.hasPrefix("System Power On") || text.hasPrefix("System PowerOn") }

    /// The last wake note: PacketLogger writes it before the first record after the gap.
    var wake: Int?

    /// A power note: a sleep is held until a gap follows; a wake is kept for the gap it ends.
    mutating func note(_ record: CaptureRecord) {
        let text = record.text
        // The first of PacketLogger's repeated notes ("System Sleep" twice, "System Power On" then "System PowerOn").
        if Self.isSleep(text) {
            if let p = pending, record.timestamp.microseconds(since: p.at) <= Self.window { return }
            pending = (record.frame, record.timestamp)
        } else if Self.isWake(text), (wake ?? 0) <= (pending?.frame ?? Int.max) {
            wake = record.frame
        }
    }

    /// A gap before `frame` opened at `start`: the host asleep when a sleep note came at most ``window`` before.
    mutating func gap(before frame: Int, from start: Timestamp) {
        guard let p = pending, start.microseconds(since: p.at) <= Self.window else { return }
        sleeps.append(Sleep(gapFrame: frame, sleepFrame: p.frame, wakeFrame: wake.flatMap { $0 > p.frame ? $0 : nil }))
        pending = nil
    }

    /// The words after the longest gap: the host asleep when the log says so, else the question it was.
    func explanation(largest: Int?, gaps: Int) -> String {
        guard let longest = sleeps.first(where: { $0.gapFrame == largest }) else {
            let asleep = sleeps.isEmpty ? "" : " (\(sleeps.count) other\(sleeps.count == 1 ? " was" : "s were") the host asleep)"
            return "a paused or rotated log?" + asleep
        }
        let woke = longest.wakeFrame.map { ", \"System Power On\" at frame \($0)" } ?? ""
        let others = gaps - sleeps.count
        return "the host slept (seen: PacketLogger's \"System Sleep\" at frame \(longest.sleepFrame)\(woke))"
            + (others > 0 || sleeps.count > 1
                ? "; \(sleeps.count) of the \(gaps) gaps were sleeps"
                    + (others > 0 ? ", \(others) ha\(others == 1 ? "s" : "ve") no note saying why" : "") : "")
    }
}

extension CompletenessTracker {
    /// A text record: only PacketLogger's power notes matter to the gaps (cheap: one prefix test per note).
    @inline(__always) mutating func notePower(_ record: CaptureRecord) {
        guard let first = record.bytes.first, first == UInt8(ascii: "S") else { return }
        sleep.note(record)
    }

    mutating func noteSleepGap(before frame: Int, from start: Timestamp) {
        sleep.gap(before: frame, from: start)
    }
}
