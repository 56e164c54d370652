import BLECore
import BLEProtocols

/// The findings the analyzer and the links' machines say in more than one place.
extension FindingKind {
    static func heldBytes(_ n: Int) -> FindingKind {
        .init(
            .limitHeldBytes,
            message:
                "unfinished PDUs, SDUs, long reads and prepared writes held more than \(n >> 20) MiB: the partial ones were dropped (see the report's counts) and decoding went on"
        )
    }
    static let commandUnanswered = FindingKind(
        .hciCommandUnanswered, message: "HCI command never answered (no Command Complete or Command Status)")
    /// A command whose answer the capture cannot show: `by` says what came first.
    static func commandCutShort(by what: String) -> FindingKind {
        .init(
            .hciCommandUnanswered, message: "HCI command with no answer in the capture before \(what): cannot tell whether it was answered")
    }
    static func connectionInferred(_ handle: UInt16) -> FindingKind {
        .init(
            .hciConnectionInferred,
            message:
                "ACL traffic on handle \(hex(handle, width: 4)) without a Connection Complete: connection inferred (capture started mid-connection?)"
        )
    }
    static func tooManyConnections(_ n: Int) -> FindingKind {
        .init(.limitConnections, message: "more than \(n) connections open at once: further handles are not tracked")
    }
    static func tooManyConnectionsInCapture(_ n: Int) -> FindingKind {
        .init(
            .limitConnectionsTotal,
            message: "more than \(n) connections in the capture: later connections are not tracked (their packets are counted, not decoded)"
        )
    }
    static func tooManyCreditChannels(_ n: Int) -> FindingKind {
        .init(
            .limitCreditChannels,
            message: "more than \(n) LE credit-based channels open at once: further channels are not reassembled")
    }
    static func tooManyPendingCommands(_ n: Int) -> FindingKind {
        .init(
            .limitPendingCommands,
            message: "more than \(n) HCI commands waiting for an answer at once: further ones are not paired")
    }
    static func requestUnanswered(_ opcode: ATTOpcode, handle: UInt16?, end: String) -> FindingKind {
        .init(
            .attRequestUnanswered,
            message: "ATT \(opcode)\(handle.map { " on handle " + hex($0, width: 4) } ?? "") got no response before \(end)")
    }
    static func truncatedACL(_ n: Int) -> FindingKind {
        .init(
            .hciACLCutByCapturer,
            message:
                "ACL packet cut by the capturer (\(n) bytes kept, e.g. Android filtered snoop): counted with its original length, not decoded"
        )
    }
    static func malformed(_ what: String, _ error: DecodeError) -> FindingKind {
        .init(.decodeMalformed, message: "malformed \(what): \(error)")
    }
}
