import BLECapture
import BLECore
import BLEProtocols

extension CaptureBuilder {
    /// A declared HCI event (``HCIParameterSet`` with an event carrier).
    public func declaredEvent(_ value: some HCIParameterSet) -> CaptureBuilder { event(HCIBuild.event(.declared(value))) }

    /// A declared HCI command.
    public func declaredCommand(_ value: some HCIParameterSet) -> CaptureBuilder {
        command(HCIBuild.command(.declared(value)))
    }

    /// A SCO data packet on `handle` (Core Spec Vol 4, Part E, 5.4.3): handle and status flags, length, data.
    public func sco(handle: UInt16, _ direction: Direction, bytes: Int = 60, status: UInt8 = 0) -> CaptureBuilder {
        let high = UInt8(handle >> 8 & 0x0F) | (status & 0x3) << 4
        return record(.sco, direction, [UInt8(handle & 0xFF), high, UInt8(bytes)] + Array(repeating: 0x55, count: bytes))
    }
}
