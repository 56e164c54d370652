import BLECapture
import BLECore
import BLEProtocols

/// Builds HCI packet bytes (without the H4 indicator) from typed values, for fixtures and capture builders.
public enum HCIBuild {
    /// An L2CAP basic frame: length(2) CID(2) payload.
    public static func l2cap(cid: UInt16, payload: [UInt8]) -> [UInt8] {
        L2CAPBasicFrame(cid: L2CAPCID(cid), payload: payload).bytes
    }

    /// Splits an L2CAP PDU into ACL packets (header included) of at most `fragmentSize` data bytes.
    ///
    /// The first packet gets `firstBoundary` (00 host → controller by default; controllers send 10), the
    /// rest 01 (continuation). An empty PDU still yields one (empty) packet.
    public static func aclFragments(
        handle: UInt16, l2capPDU: [UInt8], fragmentSize: Int,
        firstBoundary: ACLPacketBoundary = .firstNonFlushable
    ) -> [[UInt8]] {
        let size = max(1, fragmentSize)
        var out: [[UInt8]] = []
        var start = 0
        repeat {
            let end = min(l2capPDU.count, start + size)
            let pb: ACLPacketBoundary = start == 0 ? firstBoundary : .continuation
            out.append(ACLPacket(handle: handle, packetBoundary: pb, data: Array(l2capPDU[start..<end])).bytes)
            start = end
        } while start < l2capPDU.count
        return out
    }

    /// An ATT PDU on the ATT channel, fragmented into ACL packets.
    public static func att(
        handle: UInt16, _ pdu: ATTPDU, fragmentSize: Int = 27,
        firstBoundary: ACLPacketBoundary = .firstNonFlushable
    ) -> [[UInt8]] {
        aclFragments(
            handle: handle, l2capPDU: l2cap(cid: 0x0004, payload: pdu.bytes), fragmentSize: fragmentSize,
            firstBoundary: firstBoundary)
    }

    /// An SMP PDU on the SMP channel, fragmented into ACL packets.
    public static func smp(
        handle: UInt16, _ pdu: SMPPDU, fragmentSize: Int = 27,
        firstBoundary: ACLPacketBoundary = .firstNonFlushable
    ) -> [[UInt8]] {
        aclFragments(
            handle: handle, l2capPDU: l2cap(cid: 0x0006, payload: pdu.bytes), fragmentSize: fragmentSize,
            firstBoundary: firstBoundary)
    }

    /// An LE signalling command on CID 0x0005, fragmented into ACL packets.
    public static func leSignal(
        handle: UInt16, _ signal: L2CAPSignal, fragmentSize: Int = 27,
        firstBoundary: ACLPacketBoundary = .firstNonFlushable
    ) -> [[UInt8]] {
        aclFragments(
            handle: handle, l2capPDU: l2cap(cid: 0x0005, payload: signal.bytes), fragmentSize: fragmentSize,
            firstBoundary: firstBoundary)
    }

    /// A command packet from raw parameters.
    public static func command(_ opcode: HCICommand, parameters: [UInt8] = []) -> [UInt8] {
        HCICommandPacket(opcode: opcode, parameters: parameters).bytes
    }

    /// A command packet from typed parameters (`.empty`/`.raw` need `opcode`).
    public static func command(_ parameters: HCICommandParameters, opcode: HCICommand? = nil) -> [UInt8] {
        HCICommandPacket(parameters, opcode: opcode).bytes
    }

    /// An event packet from raw parameters.
    public static func event(_ code: HCIEventCode, parameters: [UInt8] = []) -> [UInt8] {
        HCIEventPacket(code: code, parameters: parameters).bytes
    }

    /// An event packet from typed parameters (LE events get the LE Meta header and subevent code).
    public static func event(_ parameters: HCIEventParameters) -> [UInt8] {
        HCIEventPacket(parameters).bytes
    }

    /// An LE Meta event with raw subevent parameters.
    public static func leMeta(_ subevent: LESubevent, parameters: [UInt8]) -> [UInt8] {
        HCIEventPacket(code: .leMeta, parameters: [subevent.rawValue] + parameters).bytes
    }

    /// Command Complete for `opcode` with the given return parameters (default: status Success only).
    public static func commandComplete(_ opcode: HCICommand, returnParameters: [UInt8] = [0x00], numPackets: UInt8 = 1) -> [UInt8] {
        event(.commandComplete(CommandComplete(numHCICommandPackets: numPackets, opcode: opcode, returnParameters: returnParameters)))
    }

    /// Command Status for `opcode`.
    public static func commandStatus(_ opcode: HCICommand, status: HCIStatus = .success, numPackets: UInt8 = 1) -> [UInt8] {
        event(.commandStatus(CommandStatus(status: status, numHCICommandPackets: numPackets, opcode: opcode)))
    }

    /// Number Of Completed Packets for one handle.
    public static func numberOfCompletedPackets(handle: UInt16, count: UInt16) -> [UInt8] {
        event(.numberOfCompletedPackets(NumberOfCompletedPackets(entries: [.init(handle: handle, completedPackets: count)])))
    }

    /// LE Connection Complete with common defaults (30 ms interval, 4 s timeout).
    public static func leConnectionComplete(
        handle: UInt16, role: HCIRole = .central, peer: BDAddress,
        peerAddressType: LEAddressType = .random, interval: UInt16 = 24,
        latency: UInt16 = 0, timeout: UInt16 = 400, status: HCIStatus = .success
    ) -> [UInt8] {
        let complete = LEConnectionComplete {
            $0.status = status
            $0.handle = handle
            $0.role = role
            $0.peerAddressType = peerAddressType
            $0.peerAddress = peer
            $0.timing.interval = interval
            $0.timing.latency = latency
            $0.timing.supervisionTimeout = timeout
        }
        return event(.declared(complete))
    }

    /// Disconnection Complete.
    public static func disconnectionComplete(handle: UInt16, reason: HCIStatus = .remoteUserTerminatedConnection) -> [UInt8] {
        let complete = DisconnectionComplete {
            $0.handle = handle
            $0.reason = reason
        }
        return event(.declared(complete))
    }

    /// The H4 form: packet indicator (01 command, 02 ACL, 03 SCO, 04 event, 05 ISO) then the packet.
    public static func h4(_ kind: RecordKind, _ packet: [UInt8]) -> [UInt8] { [kind.rawValue] + packet }
}
