import BLECore

/// A Buttonless DFU opcode (nRF5 SDK `ble_dfu_buttonless`): written by the app, answered by an
/// indication `20 op result`.
public struct ButtonlessDFUOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let enterBootloader = ButtonlessDFUOpcode(rawValue: 0x01)
    public static let setAdvertisementName = ButtonlessDFUOpcode(rawValue: 0x02)
    public static let response = ButtonlessDFUOpcode(rawValue: 0x20)
    public static let names = OTACodeTable<ButtonlessDFUOpcode>(
        [.enterBootloader: "Enter bootloader", .setAdvertisementName: "Set advertisement name", .response: "Response"],
        unknown: { "buttonless \(hex($0.rawValue))" })
    public var description: String { Self.names[self] }
}

/// A Buttonless DFU result code (`ble_dfu_buttonless_rsp_code_t`).
public struct ButtonlessDFUResult: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let success = ButtonlessDFUResult(rawValue: 0x01)
    public static let names = OTACodeTable<ButtonlessDFUResult>(
        [
            .success: "Success", .init(rawValue: 0x02): "Opcode not supported", .init(rawValue: 0x04): "Operation failed",
            .init(rawValue: 0x05): "Invalid advertisement name", .init(rawValue: 0x06): "Busy", .init(rawValue: 0x07): "Not bonded",
        ],
        unknown: { "Result(\(hex($0.rawValue)))" })
    public var description: String { Self.names[self] }
}

/// Nordic Buttonless DFU (characteristic 8EC90003-… without bonds, 8EC90004-… with bonds, in
/// service 0xFE59 of the application): the app asks the application to reboot into its bootloader.
///
/// A session of its own ends with the connection (the device resets); ``OTAUpdateStory`` then
/// joins it to the Secure DFU session on the bootloader's connection (the same address or the
/// address + 1) as one update.
public struct NordicButtonlessDFU: OTAProfile {
    public static let protocolName = OTAProtocol.nordicButtonlessDFU
    public static let withoutBonds = BluetoothUUID("8EC90003-F315-4F60-9FB8-838830DAEA50")!
    public static let withBonds = BluetoothUUID("8EC90004-F315-4F60-9FB8-838830DAEA50")!
    public static let endpoints: [BluetoothUUID: OTAEndpoint] = [withoutBonds: .control, withBonds: .control]

    var requested = false
    var entered = false

    public init() {}

    public static func admission(_ v: OTAValue, open: NordicButtonlessDFU?) -> OTAAdmission {
        guard let first = v.first else { return .ignore }
        if v.isSent { return ButtonlessDFUOpcode(rawValue: first) == .enterBootloader || open != nil ? .join : .ignore }
        return open == nil ? .ignore : .join
    }

    public mutating func feed(_ v: OTAValue, _ o: inout OTASessionBuilder) {
        let e = v.event
        guard let first = v.first else { return }
        let op = ButtonlessDFUOpcode(rawValue: first)
        if v.isSent {
            o.account(e, op.description)
            if op == .enterBootloader { o.beginPhase("enter bootloader", e); requested = true }
            return
        }
        o.account(e, "indication")
        guard op == .response, v.count >= 3 else {
            o.session.findings.append(Finding(.warning, .otaError("buttonless DFU indication without 0x20"), frame: e.frame))
            return
        }
        let result = ButtonlessDFUResult(rawValue: v[2])
        if result == .success {
            o.lastResponseOK = true
            if ButtonlessDFUOpcode(rawValue: v[1]) == .enterBootloader { entered = true }
        } else {
            o.fail(code: Int(v[2]), name: result.description, finding: "request \(hex(v[1])) failed: \(result)", frame: e.frame)
        }
    }

    public func finish(_ o: inout OTASessionBuilder, why: String, frame: Int) {
        if let failure = o.standingFailure {
            o.session.result = failure
        } else if entered {
            o.session.result = .success
        } else {
            o.cut(why, frame: frame)
        }
    }
}
