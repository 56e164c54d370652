import BLECapture
import BLECore
import BLEProtocols

/// A BR/EDR security setting of this side's host on its controller, as the log last showed it before a link opened: a
/// fact of this side, from a Write the controller accepted or a Read's answer (Core Spec Vol 4, Part E, 7.3).
public struct HostSecuritySetting: Hashable, Sendable {
    /// The settings followed, each with its Read and Write commands (Vol 4, Part E, 7.3.23–24, 7.3.58–59, 7.3.92–93).
    public enum Kind: String, CaseIterable, Hashable, Sendable {
        /// Secure Connections Host Support: with the controller's support, pairings P-256 and encryption AES-CCM
        /// (Vol 2, Part C, 4.2.6).
        case secureConnectionsHost
        /// Simple Pairing Mode: off, the controller pairs by legacy PIN only (Vol 3, Part C, 5.2.2).
        case simplePairingMode
        /// Authentication Enable: on, the controller authenticates every link at its setup, security mode 3 (Vol 3,
        /// Part C, 5.2.2.4), before the host has a say.
        case authenticationEnable

        /// What the log and the report need of a setting, in one place.
        struct Declaration {
            /// The OCFs of its Read and Write commands (OGF 0x03).
            let readOCF: UInt16, writeOCF: UInt16
            let settingName: String, reportLabel: String
            /// The value the report's pairing cell mentions: the one that differs from every current host's; nil for
            /// a setting it always mentions.
            let notableValue: Bool?
        }

        var declaration: Declaration {
            switch self {
            case .secureConnectionsHost:
                Declaration(
                    readOCF: 0x0079, writeOCF: 0x007A, settingName: "Secure Connections Host Support",
                    reportLabel: "this side's Secure Connections host support", notableValue: nil)
            case .simplePairingMode:
                Declaration(
                    readOCF: 0x0055, writeOCF: 0x0056, settingName: "Simple Pairing Mode",
                    reportLabel: "this side's Simple Pairing mode", notableValue: false)
            case .authenticationEnable:
                Declaration(
                    readOCF: 0x001F, writeOCF: 0x0020, settingName: "Authentication Enable",
                    reportLabel: "this side's Authentication Enable (every link authenticated at setup)",
                    notableValue: true)
            }
        }
        var read: HCICommand { HCICommand(ogf: 0x03, ocf: declaration.readOCF) }
        var write: HCICommand { HCICommand(ogf: 0x03, ocf: declaration.writeOCF) }
        /// The setting's name in the spec, e.g. `Secure Connections Host Support`.
        public var settingName: String { declaration.settingName }
        /// How the report names it beside the pairing.
        public var reportLabel: String { declaration.reportLabel }
        static let byWrite = Dictionary(uniqueKeysWithValues: allCases.map { ($0.write, $0) })
        static let byRead = Dictionary(uniqueKeysWithValues: allCases.map { ($0.read, $0) })
    }

    public var kind: Kind
    public var on: Bool
    /// The Write command the controller accepted, or the Read command's answer.
    public var frame: Int
    public var shownBy: String

    public init(_ kind: Kind, on: Bool, frame: Int, shownBy: String) {
        self.kind = kind
        self.on = on
        self.frame = frame
        self.shownBy = shownBy
    }

    /// `on, frame 12 (Write Secure Connections Host Support)`.
    public var description: String { "\(on ? "on" : "off"), frame \(frame) (\(shownBy))" }
}

extension HCIMachine {
    /// A Write of a followed setting: its value, held until the controller accepts it.
    func noteHostSecurityWrite(_ packet: HCICommandPacket, _ record: CaptureRecord) {
        guard let kind = HostSecuritySetting.Kind.byWrite[packet.opcode], let value = packet.parameters.first else { return }
        classic.hostSettingWrites[record.controllerIndex, default: [:]][kind] = HostSecuritySetting(
            kind, on: value == 0x01, frame: record.frame, shownBy: "Write \(kind.settingName)")
    }

    /// Its Command Complete with success (the write takes effect), or a Read's answer: status, the setting.
    func noteHostSecurityAnswer(_ cc: CommandComplete, _ record: CaptureRecord) {
        let r = cc.returnParameters, controller = record.controllerIndex
        if let kind = HostSecuritySetting.Kind.byWrite[cc.opcode] {
            guard let written = classic.hostSettingWrites[controller]?.removeValue(forKey: kind), r.first == 0 else { return }
            classic.hostSettings[controller, default: [:]][kind] = written
        } else if let kind = HostSecuritySetting.Kind.byRead[cc.opcode], r.count >= 2, r[0] == 0 {
            classic.hostSettings[controller, default: [:]][kind] = HostSecuritySetting(
                kind, on: r[1] == 0x01, frame: record.frame, shownBy: "Read \(kind.settingName)")
        }
    }
}

extension LinkSecurity {
    /// This side's BR/EDR settings as the report's pairing cell adds them: Secure Connections host support whenever the
    /// log shows it; Simple Pairing mode only when off (legacy PIN pairing only) and Authentication Enable only when on
    /// (security mode 3), the settings that differ from every current host's. Each starts with "; ".
    public var hostSettingsNote: String {
        var text = ""
        for kind in HostSecuritySetting.Kind.allCases {
            guard let setting = hostSettings[kind] else { continue }
            let notable = kind.declaration.notableValue.map { $0 == setting.on } ?? true
            if notable { text += "; \(kind.reportLabel): \(setting.description)" }
        }
        return text
    }
}
