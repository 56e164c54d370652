import BLECore
import BLEProtocols

/// Pairs HCI commands with the Command Complete or Command Status that answers them (Core Spec Vol 4, Part E, 4.4;
/// 7.7.14–15), per controller and opcode: a command sent again before its answer was never answered.
struct HCICommandPairing {
    /// A command waiting for its answer.
    struct Pending {
        var frame: Int
        var timestamp: Timestamp
        /// Its timeline event, held in the queue until the answer fills in the response frame.
        var eventID: Int?
        /// The command's opcode (set when it is fed: an answer for 0xFFFF names the vendor command it answers).
        var opcode = HCICommand(rawValue: 0)
        /// The connection its handle parameter names (a Command Status names none: Exit Sniff Mode refused is told
        /// with the link it was for).
        var connection: Int? = nil
    }

    /// What sending a command did.
    struct Sent {
        /// The same command, still waiting: it was never answered.
        var unanswered: Pending?
        /// Too many commands waiting (``maxPending``): this one is not paired.
        var refused = false
    }

    /// Bound on the commands waiting at once (a capture of commands without events must not grow the table).
    static let maxPending = 1024

    private var pending: [UInt32: Pending] = [:]

    private static func key(_ controller: UInt16, _ opcode: HCICommand) -> UInt32 { UInt32(controller) << 16 | UInt32(opcode.rawValue) }

    /// A command sent to `controller`.
    mutating func feed(_ opcode: HCICommand, controller: UInt16, _ command: Pending) -> Sent {
        let key = Self.key(controller, opcode)
        var sent = Sent(unanswered: pending[key])
        if pending.count < Self.maxPending {
            var command = command
            command.opcode = opcode
            pending[key] = command
        } else {
            sent.refused = true
        }
        return sent
    }

    /// A Command Complete or Command Status from `controller` for `opcode`: the command it answers, no longer waiting.
    ///
    /// Qualcomm controllers answer a vendor command they do not know with a Command Complete for opcode 0xFFFF (OGF
    /// 0x3F, OCF 0x3FF) and Unknown HCI Command: that answers the oldest vendor (OGF 0x3F) command waiting.
    /// The opcode of that answer: OGF 0x3F (vendor), OCF 0x3FF.
    static let unknownVendorCommandAnswer = HCICommand(ogf: 0x3F, ocf: 0x03FF)

    mutating func answer(_ opcode: HCICommand, controller: UInt16) -> Pending? {
        if let p = pending.removeValue(forKey: Self.key(controller, opcode)) { return p }
        guard opcode == Self.unknownVendorCommandAnswer else { return nil }
        let oldest = pending.filter { key, _ in
            UInt16(truncatingIfNeeded: key >> 16) == controller && HCICommand(UInt16(truncatingIfNeeded: key)).ogf == 0x3F
        }.min { $0.value.frame < $1.value.frame }
        return oldest.flatMap { pending.removeValue(forKey: $0.key) }
    }

    /// `opcode` sent to `controller` when it still waits for its Command Complete or Status.
    func waiting(_ opcode: HCICommand, controller: UInt16) -> Pending? { pending[Self.key(controller, opcode)] }

    /// A command that was never answered: which, on which controller, and when it was sent.
    struct Unanswered {
        var opcode: HCICommand
        var controller: UInt16
        var frame: Int
        var timestamp: Timestamp
        var eventID: Int?
    }

    /// The commands still waiting (on `controller` only, when given), in frame order; none of them waits afterwards
    /// (the end of the capture, or an HCI Reset of that controller).
    mutating func takeUnanswered(controller: UInt16? = nil) -> [Unanswered] {
        let taken = pending.filter { key, _ in controller.map { UInt16(truncatingIfNeeded: key >> 16) == $0 } ?? true }
        for key in taken.keys { pending.removeValue(forKey: key) }
        return taken.map {
            Unanswered(
                opcode: HCICommand(UInt16(truncatingIfNeeded: $0.key)), controller: UInt16(truncatingIfNeeded: $0.key >> 16),
                frame: $0.value.frame, timestamp: $0.value.timestamp, eventID: $0.value.eventID)
        }.sorted { $0.frame < $1.frame }
    }
}
