import BLECapture
import BLECore
import BLEProtocols

/// Builds nRF Sniffer (LT 272, version 2) records from typed values.
package struct NordicBuilder {
    package var records: [TinyPcap.Rec] = []
    package var time: Int64 = 1_000_000
    package var counter: UInt16 = 0
    /// The PHY the header's flags give every packet.
    package var phy = LEPHY.le1M

    package init() {}

    package mutating func add(
        aa: LLAccessAddress, pdu: [UInt8], crcInit: UInt32, data: Bool, central: Bool = true, event: UInt16 = 0,
        crcOK: Bool = true, encrypted: Bool = false, micOK: Bool = false, dt: Int64 = 300
    ) {
        let ll = LLPacket(accessAddress: aa, pdu: pdu, crcInit: crcInit).bytes
        let h = NordicBLEHeader(
            boardID: 1, protocolVersion: 2, packetCounter: counter, packetID: .eventPacketData,
            flags: NordicBLEFlags(crcOK: crcOK, centralToPeripheral: central, encrypted: encrypted, micOK: micOK, phy: phy),
            channel: data ? 5 : 37, eventCounter: event, linkLayerLength: ll.count)
        counter &+= 1
        time += dt
        records.append(TinyPcap.Rec(frame: records.count + 1, micros: time, linkType: 272, bytes: h.bytes + ll, origLen: h.size + ll.count))
    }

    package static let aa = LLAccessAddress(0x50654A27)
    package static let crcInit: UInt32 = 0x12_3456

    package mutating func connect() {
        let c = LLConnectInd(
            initiator: LLDeviceAddress(0x1122_3344_5566, isRandom: true), advertiser: LLDeviceAddress(0xC0FF_EE00_0001),
            parameters: LLConnectionParameters(accessAddress: Self.aa, crcInit: Self.crcInit, interval: 24, timeout: 72))
        add(aa: .advertising, pdu: LLAdvertisingPacketPDU(.connectInd(c)).bytes, crcInit: 0x55_5555, data: false)
    }

    package mutating func data(
        _ llid: LLID, _ payload: [UInt8], central: Bool = true, sn: Bool = false, nesn: Bool = false, event: UInt16 = 0,
        crcOK: Bool = true, encrypted: Bool = false, micOK: Bool = false
    ) {
        add(
            aa: Self.aa, pdu: LLDataPDU(llid: llid, nesn: nesn, sn: sn, payload: payload).bytes, crcInit: Self.crcInit, data: true,
            central: central,
            event: event, crcOK: crcOK, encrypted: encrypted, micOK: micOK)
    }

    /// One ATT Handle Value Notification (0x1B on 0x002A) in its L2CAP frame, the payload of a data PDU.
    package static func attPDU(_ value: [UInt8]) -> [UInt8] {
        let att: [UInt8] = [0x1B, 0x2A, 0x00] + value
        return [UInt8(att.count), 0, 0x04, 0x00] + att
    }
}
