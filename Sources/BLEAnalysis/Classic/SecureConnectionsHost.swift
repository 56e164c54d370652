import BLECapture
import BLECore
import BLEProtocols

/// Whether this side's host enabled BR/EDR Secure Connections on its controller (Core Spec Vol 4, Part E, 7.3.92–93:
/// Write / Read Secure Connections Host Support; with the controller's support it makes pairings P-256 and
/// encryption AES-CCM, Vol 2, Part C, 4.2.6): a fact of this side, as the log last showed it before each link opened.
public struct SecureConnectionsHostSupport: Hashable, Sendable {
    public var on: Bool
    /// The Write command the controller accepted, or the Read command's answer.
    public var frame: Int
    public var shownBy: String

    public init(on: Bool, frame: Int, shownBy: String) {
        self.on = on
        self.frame = frame
        self.shownBy = shownBy
    }

    /// `on, frame 12 (Write Secure Connections Host Support)`.
    public var description: String { "\(on ? "on" : "off"), frame \(frame) (\(shownBy))" }
}

extension HCIMachine {
    static let writeSecureConnectionsHostSupport = HCICommand(ogf: 0x03, ocf: 0x007A)
    static let readSecureConnectionsHostSupport = HCICommand(ogf: 0x03, ocf: 0x0079)

    /// Write Secure Connections Host Support: its value, held until the controller accepts it.
    func noteSecureConnectionsHostWrite(_ packet: HCICommandPacket, _ record: CaptureRecord) {
        guard packet.opcode == Self.writeSecureConnectionsHostSupport, let value = packet.parameters.first else { return }
        classic.secureConnectionsWrite[record.controllerIndex] = SecureConnectionsHostSupport(
            on: value == 0x01, frame: record.frame, shownBy: "Write Secure Connections Host Support")
    }

    /// Its Command Complete with success (the write takes effect), or Read's answer: status, Secure_Connections_Host_Support.
    func noteSecureConnectionsHostAnswer(_ cc: CommandComplete, _ record: CaptureRecord) {
        let r = cc.returnParameters, controller = record.controllerIndex
        if cc.opcode == Self.writeSecureConnectionsHostSupport {
            guard let written = classic.secureConnectionsWrite.removeValue(forKey: controller), r.first == 0 else { return }
            classic.secureConnectionsHost[controller] = written
        } else if cc.opcode == Self.readSecureConnectionsHostSupport, r.count >= 2, r[0] == 0 {
            classic.secureConnectionsHost[controller] = SecureConnectionsHostSupport(
                on: r[1] == 0x01, frame: record.frame, shownBy: "Read Secure Connections Host Support")
        }
    }
}
