import BLECore

/// A Silicon Labs OTA control value (Gecko bootloader, AN1086 "Using the Gecko Bootloader with the
/// Silicon Labs Bluetooth Applications", OTA control characteristic).
public struct SiliconLabsOTAControl: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let start = SiliconLabsOTAControl(rawValue: 0x00)
    public static let end = SiliconLabsOTAControl(rawValue: 0x03)
    public static let closeConnection = SiliconLabsOTAControl(rawValue: 0x04)
    public static let names = OTACodeTable<SiliconLabsOTAControl>(
        [.start: "OTA start", .end: "OTA end", .closeConnection: "close connection"], unknown: { _ in "control" })
    public var description: String { Self.names[self] }
}

/// Silicon Labs OTA (service 1D14D6EE-FD63-4FA1-BFA4-8F47B42119F0): `00` on the control
/// characteristic starts, the image follows as writes to the data characteristic, `03` ends.
public struct SiliconLabsOTA: OTAProfile {
    public static let protocolName = OTAProtocol.siliconLabs
    public static let control = BluetoothUUID("F7BF3564-FB6D-4E53-88A4-5E37E0326063")!
    public static let data = BluetoothUUID("984227F3-34FC-4045-A5D0-2C581F81A153")!
    public static let endpoints: [BluetoothUUID: OTAEndpoint] = [control: .control, data: .packet]

    var ended = false
    var packets = 0

    public init() {}

    public static func admission(_ v: OTAValue, open: SiliconLabsOTA?) -> OTAAdmission {
        guard v.isSent else { return .ignore }
        let start = v.first.map(SiliconLabsOTAControl.init(rawValue:)) == .start
        if v.isControl, start, let open, open.packets > 0 || open.ended { return .restart("a new upload") }
        if open == nil && v.isControl && !start { return .ignore }
        return .join
    }

    public mutating func feed(_ v: OTAValue, _ o: inout OTASessionBuilder) {
        let e = v.event
        if v.isControl {
            let op = v.first.map(SiliconLabsOTAControl.init(rawValue:))
            o.account(e, op?.description ?? "control")
            switch op {
            case .start?: o.beginPhase("upload", e)
            case .end?: o.beginPhase("end", e); ended = true
            default: break
            }
            return
        }
        o.account(e, "packet")
        o.append(v.bytes, frame: e.frame)
        o.countPacket(e, bytes: v.count)
        packets += 1
    }

    public func finish(_ o: inout OTASessionBuilder, why: String, frame: Int) {
        if ended { o.session.result = .success } else { o.cut(why, frame: frame) }
    }
}
