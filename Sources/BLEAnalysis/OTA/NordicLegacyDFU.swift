import BLECore

/// A legacy DFU control point opcode (nRF5 SDK ≤ 11, `dfu_ble_svc` / `dfu_transport_ble.c`).
public struct LegacyDFUOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let start = LegacyDFUOpcode(rawValue: 0x01)
    public static let initialize = LegacyDFUOpcode(rawValue: 0x02)
    public static let receiveImage = LegacyDFUOpcode(rawValue: 0x03)
    public static let validate = LegacyDFUOpcode(rawValue: 0x04)
    public static let activateAndReset = LegacyDFUOpcode(rawValue: 0x05)
    public static let reset = LegacyDFUOpcode(rawValue: 0x06)
    public static let packetReceiptRequest = LegacyDFUOpcode(rawValue: 0x08)
    /// Notifications: `10 op status` answers a request, `11 bytes(u32 LE)` is a packet receipt.
    public static let response = LegacyDFUOpcode(rawValue: 0x10)
    public static let packetReceipt = LegacyDFUOpcode(rawValue: 0x11)

    public static let names = OTACodeTable<LegacyDFUOpcode>(
        [
            .start: "Start DFU", .initialize: "Initialize DFU parameters", .receiveImage: "Receive firmware image",
            .validate: "Validate firmware", .activateAndReset: "Activate and reset", .reset: "Reset",
            .packetReceiptRequest: "PRN request", .response: "Response", .packetReceipt: "Packet receipt",
        ],
        unknown: { "control \(hex($0.rawValue))" })
    public var description: String { Self.names[self] }
}

/// A legacy DFU response status (`10 op status`).
public struct LegacyDFUStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let success = LegacyDFUStatus(rawValue: 1)
    public static let names = OTACodeTable<LegacyDFUStatus>(
        [
            .success: "Success", LegacyDFUStatus(rawValue: 2): "Invalid state", LegacyDFUStatus(rawValue: 3): "Not supported",
            LegacyDFUStatus(rawValue: 4): "Data size exceeds limit", LegacyDFUStatus(rawValue: 5): "CRC error",
            LegacyDFUStatus(rawValue: 6): "Operation failed",
        ],
        unknown: { "Status(\(hex($0.rawValue)))" })
    public var description: String { Self.names[self] }
}

/// Nordic legacy DFU (service 00001530-1212-EFDE-1523-785FEABCD123): Start DFU with the sizes on
/// the packet characteristic, the init packet, the image, Validate, Activate and reset.
public struct NordicLegacyDFU: OTAProfile {
    public static let protocolName = OTAProtocol.nordicLegacyDFU
    public static let controlPoint = BluetoothUUID("00001531-1212-EFDE-1523-785FEABCD123")!
    public static let packet = BluetoothUUID("00001532-1212-EFDE-1523-785FEABCD123")!
    public static let endpoints: [BluetoothUUID: OTAEndpoint] = [controlPoint: .control, packet: .packet]

    /// What the packet characteristic carries next.
    enum PacketState { case image, sizes, initPacket }
    var packetState = PacketState.image
    var activated = false
    var validated = false
    var reset = false

    public init() {}

    public static func admission(_ v: OTAValue, open: NordicLegacyDFU?) -> OTAAdmission {
        guard v.first != nil else { return .ignore }
        return open == nil && !(v.isControl && v.isSent) ? .ignore : .join
    }

    public mutating func feed(_ v: OTAValue, _ o: inout OTASessionBuilder) {
        let e = v.event
        guard let first = v.first else { return }
        if !v.isControl {
            o.account(e, "packet")
            switch packetState {
            case .sizes:
                // Start DFU sizes: SoftDevice, bootloader, application (u32 LE each), or the application alone.
                o.session.expectedSize = stride(from: 0, to: v.count - 3, by: 4).compactMap { v.le32($0) }.reduce(0, +)
                packetState = .image
            case .initPacket:
                o.session.initPacket.append(contentsOf: v.bytes)
            case .image:
                o.append(v.bytes, frame: e.frame)
                o.countPacket(e, bytes: v.count)
            }
            return
        }
        let op = LegacyDFUOpcode(rawValue: first)
        if !v.isSent {
            o.account(e, "notification")
            if op == .response, v.count >= 3 {
                let status = LegacyDFUStatus(rawValue: v[2])
                if status == .success {
                    o.lastResponseOK = true
                    if LegacyDFUOpcode(rawValue: v[1]) == .validate { validated = true }
                } else {
                    o.fail(
                        code: Int(v[2]), name: status.description,
                        finding: "request \(hex(v[1])) failed: \(status)", frame: e.frame)
                }
            } else if op == .packetReceipt, let n = v.le32(1) {
                o.session.receipts += 1
                if n > o.session.image.count {
                    o.session.findings.append(Finding(.warning, .otaOffsetMismatch(device: n, sent: o.session.image.count), frame: e.frame))
                }
            }
            return
        }
        switch op {
        case .start:
            o.account(e, op.description)
            o.beginPhase("start", e)
            packetState = .sizes
        case .initialize:
            o.account(e, op.description)
            o.beginPhase("init packet", e)
            packetState = v.count >= 2 && v[1] == 1 ? .image : .initPacket
        case .receiveImage:
            o.account(e, op.description)
            o.beginPhase("image", e)
            packetState = .image
        case .validate:
            o.account(e, op.description)
            o.beginPhase("validate", e)
        case .activateAndReset:
            o.account(e, op.description)
            o.beginPhase("activate", e)
            activated = true
        case .reset:
            o.account(e, op.description)
            reset = true
        case .packetReceiptRequest where v.count >= 3:
            o.account(e, op.description)
            o.session.packetReceiptInterval = v.le16(1)
        default:
            o.account(e, "control \(hex(first))")
        }
    }

    public func finish(_ o: inout OTASessionBuilder, why: String, frame: Int) {
        if let failure = o.standingFailure {
            o.session.result = failure
        } else if activated && validated {
            o.session.result = .success
        } else if reset {
            o.session.result = .aborted("system reset (0x06)")
        } else {
            o.cut(why, frame: frame)
        }
    }
}
