import BLECore
import BLEProtocols

/// The advertising commands as evidence (``EvidenceEvent/Kind/advertisingCommand(_:sets:enabled:)``): the sets each
/// names and whether it turns them on, read from the declared parameter sets.
extension HCIEvidence {
    static let advertisingOpcodes: Set<HCICommand> = [
        .leSetAdvertisingEnable, .leSetExtendedAdvertisingEnable, .leSetPeriodicAdvertisingEnable, .leRemoveAdvertisingSet,
        .leClearAdvertisingSets, .leSetAdvertisingSetRandomAddress,
    ]

    static func advertisingCommand(_ packet: HCICommandPacket) -> EvidenceEvent.Kind? {
        let op = packet.opcode
        switch packet.decoded {
        case .leSetExtendedAdvertisingEnable(let e):
            return .advertisingCommand(op, sets: e.sets.map(\.handle), enabled: e.enable)
        case .declared(let d):
            switch d.value {
            case let a as LESetAdvertisingEnable: return .advertisingCommand(op, sets: [], enabled: a.enable != 0)
            case let p as LESetPeriodicAdvertisingEnable:
                return .advertisingCommand(op, sets: [p.advertisingHandle], enabled: p.enable & 0x01 != 0)
            case let r as LERemoveAdvertisingSet: return .advertisingCommand(op, sets: [r.advertisingHandle], enabled: nil)
            case let r as LESetAdvertisingSetRandomAddress:
                return .advertisingCommand(op, sets: [r.advertisingHandle], enabled: nil)
            default: return nil
            }
        default:
            // LE Clear Advertising Sets has no parameters.
            return op == .leClearAdvertisingSets ? .advertisingCommand(op, sets: [], enabled: nil) : nil
        }
    }
}
