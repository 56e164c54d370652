import BLECore
import BLEProtocols

/// The evidence events of one pass, in frame order, bounded: a hostile capture cannot grow it without end (past
/// ``capacity`` events, later ones are counted in ``dropped`` and the diagnosis says so).
struct EvidenceLog {
    static let capacity = 200_000
    private(set) var events: [EvidenceEvent] = []
    private(set) var dropped = 0
    /// Controllers already announced by a `controllerSeen` event.
    private var controllersSeen: Set<UInt16> = []
    /// The controller of the last record (most records come from the one before's: no set lookup for them).
    private(set) var lastController: UInt16 = .max

    mutating func append(_ event: EvidenceEvent) {
        guard events.count < Self.capacity else {
            dropped += 1
            return
        }
        events.append(event)
    }

    /// Announces `controller` the first time a record names it.
    @inline(__always)
    mutating func noteController(_ controller: UInt16, frame: Int, timestamp: Timestamp) {
        lastController = controller
        guard !controllersSeen.contains(controller) else { return }
        controllersSeen.insert(controller)
        append(EvidenceEvent(frame: frame, timestamp: timestamp, controller: controller, kind: .controllerSeen(index: controller)))
    }
}

/// The HCI command's time-out Android's stack applies (`kHciTimeoutMs`, AOSP `system/gd/hci/hci_layer.cc`): a command
/// answered later than this (or never) is the controller-health rule's evidence.
package let hciCommandTimeoutMicroseconds: Int64 = 2_000_000

/// The ATT transaction time-out (Core Spec Vol 3, Part F, 3.3.3): a request not answered within 30 s ends the bearer.
package let attTransactionTimeoutMicroseconds: Int64 = 30_000_000

extension HCICommand {
    /// Whether the controller answers this command: Host Number Of Completed Packets (0x0C35) gets no Command Complete
    /// unless it fails (Core Spec Vol 4, Part E, 7.3.40), and PacketLogger logs Apple host-internal records under OGF
    /// 0x3D that no controller sees.
    var expectsAnswer: Bool { self != .hostNumberOfCompletedPackets && ogf != 0x3D }
}
