import BLECore
import BLEProtocols

/// The name a link's GATT gives its peer: a read of the peer's Device Name characteristic (Core Spec Vol 3, Part C,
/// 12.1), by Read on its handle or by Read Using Characteristic UUID (Read By Type 0x2A00).
extension ConnectionMachine {
    static let deviceNameCharacteristic: UInt16 = 0x2A00

    /// A value read from the peer's database: its name when the handle is the Device Name's. A value that fills the
    /// response (ATT_MTU − 1 bytes for a Read, − 3 less for Read By Type's item) may go on in a Read Blob: marked cut.
    func readPeerName(_ value: [UInt8], handle: UInt16, typeHint: BluetoothUUID?, room: Int, in context: ATTContext) {
        guard context.db == .peer, let address = connection.peerAddress.flatMap(Connection.addressValue),
            sink.names.wants(address, whole: true)
        else { return }
        guard (typeHint ?? connection[database: .peer].uuid(for: handle))?.uuid16 == Self.deviceNameCharacteristic else { return }
        if let name = PeerName(bytes: value, source: .gattDeviceName, frame: context.frame, cut: value.count >= room) {
            sink.names.observe(name, address: address)
        }
    }
}
