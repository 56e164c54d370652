import BLECore
import BLEProtocols

/// Which side of an air link sent an ATT PDU the pseudo-header gave no direction (LT 256 PDU type 0: the H-Band
/// capture's 29 notifications, flags 0x0c03, 18 of which the connection events alone put on the central's side), from
/// ATT's own semantics (Core Spec Vol 3, Part F, 3.3): a notification, indication or response comes from the server, a
/// request, command or confirmation from the client. The server is learned from the PDUs whose direction the sniffer
/// gave: a handle is served by the side that notified it or whose CCCD (a 2-byte 0x0001 / 0x0002 written one to three
/// handles after it) the other side wrote; the link's server is the side that alone answered or received requests.
/// Where both sides serve and the handle says nothing, the connection events decide, as before.
struct ATTSides: Sendable {
    /// Sides seen as server: bit 0 the central, bit 1 the peripheral.
    private var servers: UInt8 = 0
    /// Handles notified with a given direction, and CCCDs written: the side that serves them (a few per link).
    private var notified: [(handle: UInt16, server: Direction)] = []
    private var cccds: [(handle: UInt16, server: Direction)] = []

    /// An unencrypted L2CAP start fragment on the ATT channel: its opcode and first handle (0 where it has none).
    static func pdu(_ payload: UnsafeRawBufferPointer, llid: UInt8) -> (opcode: ATTOpcode, handle: UInt16)? {
        guard llid == 2, payload.count >= 5, payload[2] == 0x04, payload[3] == 0 else { return nil }
        let handle = payload.count >= 7 ? UInt16(payload[5]) | UInt16(payload[6]) << 8 : 0
        return (ATTOpcode(payload[4]), handle)
    }

    /// Learns from a PDU whose direction the sniffer gave.
    mutating func learn(_ payload: UnsafeRawBufferPointer, llid: UInt8, from side: Direction) {
        guard let (opcode, handle) = Self.pdu(payload, llid: llid), let fromServer = Self.sentByServer(opcode) else { return }
        let server = fromServer ? side : Self.other(side)
        servers |= server == .tx ? 1 : 2
        if fromServer, opcode.method == .notification || opcode.method == .indication {
            if notified.count < 32, !notified.contains(where: { $0.handle == handle }) { notified.append((handle, side)) }
        } else if !fromServer, opcode == .writeRequest || opcode == .writeCommand, payload.count == 9, payload[8] == 0,
            (1...2).contains(payload[7]), cccds.count < 32
        {
            cccds.append((handle, server))
        }
    }

    /// The side that sent a PDU the sniffer gave no direction, nil where ATT does not tell it.
    func sender(_ payload: UnsafeRawBufferPointer, llid: UInt8) -> Direction? {
        guard let (opcode, handle) = Self.pdu(payload, llid: llid), let fromServer = Self.sentByServer(opcode) else { return nil }
        var server: Direction? = servers == 1 ? .tx : servers == 2 ? .rx : nil
        if fromServer, opcode.method == .notification || opcode.method == .indication {
            let byHandle =
                notified.last(where: { $0.handle == handle })?.server
                ?? cccds.last(where: { $0.handle > handle && $0.handle - handle <= 3 })?.server
            server = byHandle ?? server
        }
        return server.map { fromServer ? $0 : Self.other($0) }
    }

    /// Whether the server sends this opcode (true), the client (false), or ATT does not say (nil).
    private static func sentByServer(_ opcode: ATTOpcode) -> Bool? {
        switch opcode.method {
        case .notification, .indication, .response: true
        case .request, .command, .confirmation: false
        default: nil
        }
    }

    private static func other(_ side: Direction) -> Direction { side == .tx ? .rx : .tx }
}
