import BLECapture
import BLECore
import BLEProtocols

/// A Disconnect whose Disconnection Complete the log holds just before it. BTstack, shutting down, logs the eSCO link's
/// Disconnection Complete before the Disconnect command that names the same handle: the corpus's HFP gateway logs,
/// 45697 then 45707 (11.2 ms) and 25201 then 25211, each followed by the ACL's completion about 0.1 ms after the
/// command and nothing more (no controller answers over USB in 0.1 ms: the order is the host's logging, not the
/// controller's). The outcome of that Disconnect is in the log: it is answered, not "still waiting for its answer"
/// (CQ-03). Only a completion of the same handle on the same controller, at most ``window`` before the command, pairs
/// with it; any other Disconnect waits for its Command Status as before.
struct DisconnectsLoggedFirst {
    private struct Key: Hashable {
        var controller: UInt16
        var handle: UInt16
    }

    /// The latest successful Disconnection Complete of each handle, not yet paired with a Disconnect.
    private var ended: [Key: (frame: Int, timestamp: Timestamp)] = [:]
    /// Disconnect commands (by frame) answered by a completion logged before them: that completion's frame.
    private var answered: [Int: Int] = [:]

    /// How long before its Disconnect a completion may be logged and still answer it: the BTstack logs show 10–13 ms.
    static let window: Int64 = 20_000

    /// A successful Disconnection Complete of `handle` on `controller`.
    mutating func disconnected(controller: UInt16, handle: UInt16, frame: Int, timestamp: Timestamp) {
        ended[Key(controller: controller, handle: handle & 0x0FFF)] = (frame, timestamp)
    }

    /// A Disconnect of `handle` on `controller` sent at `frame`: the frame of the completion that answered it before it
    /// was logged, if one did (then kept for ``take(commandFrame:)``).
    mutating func disconnect(controller: UInt16, handle: UInt16, frame: Int, timestamp: Timestamp) -> Int? {
        let key = Key(controller: controller, handle: handle & 0x0FFF)
        guard let end = ended[key] else { return nil }
        let before = timestamp.microseconds(since: end.timestamp)
        guard before >= 0, before <= Self.window else { return nil }
        ended[key] = nil
        answered[frame] = end.frame
        return end.frame
    }

    /// The completion that answered the Disconnect sent at `commandFrame` before it was logged, taken out.
    mutating func take(commandFrame: Int) -> Int? { answered.removeValue(forKey: commandFrame) }
}

extension HCIMachine {
    /// A Disconnect command: paired with its handle's Disconnection Complete when that was logged just before it.
    func noteDisconnectLoggedAfterItsEnd(_ packet: HCICommandPacket, _ record: CaptureRecord) {
        guard case .disconnect(let d) = packet.decoded else { return }
        _ = disconnectsLoggedFirst.disconnect(
            controller: record.controllerIndex, handle: d.handle, frame: record.frame, timestamp: record.timestamp)
    }

    /// A command still waiting (at the end of the capture, or at an HCI Reset) that a Disconnection Complete logged
    /// before it answered: its timeline event says so and is settled; true when it was one.
    func answeredBeforeItWasLogged(_ pending: HCICommandPairing.Unanswered) -> Bool {
        guard pending.opcode == .disconnect, let end = disconnectsLoggedFirst.take(commandFrame: pending.frame) else { return false }
        if let id = pending.eventID {
            sink.queue.update(id) { e in
                e.responseFrame = end
                e.summary += " (its Disconnection Complete logged before it, at frame \(end))"
            }
            sink.queue.settle(id)
        }
        return true
    }
}
