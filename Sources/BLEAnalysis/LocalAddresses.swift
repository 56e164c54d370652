import BLECore
import BLEProtocols

/// What a host told its controller of its own LE address, per controller: the random address (LE Set Random Address,
/// Core Spec Vol 4, Part E, 7.8.4) and the Own_Address_Type of the commands that make links: LE Create Connection and
/// LE Extended Create Connection (this side central, 7.8.12, 7.8.66), LE Set Advertising Parameters (peripheral, 7.8.5).
/// The local side of a link's ``LinkSecurity/addresses`` comes from here when its connection event does not name it.
struct LocalAddresses {
    struct RandomAddress {
        var value: UInt64
        var frame: Int
    }

    /// An Own_Address_Type as a command gave it, with the random address in force then.
    struct OwnAddress {
        var type: LEAddressType
        var frame: Int
        var random: RandomAddress?
    }

    private var random: [UInt16: RandomAddress] = [:]
    /// Each resolvable private address a host set that changed its controller's (``AddressRotation/own``).
    private(set) var rotation = AddressRotation()
    private var initiating: [UInt16: OwnAddress] = [:]
    private var advertising: [UInt16: OwnAddress] = [:]

    /// A command that sets this side's address or chooses it; the others cost one comparison of the opcode.
    mutating func command(_ packet: HCICommandPacket, controller: UInt16, frame: Int, timestamp: Timestamp) {
        switch packet.opcode {
        case .leSetRandomAddress:
            // Random_Address: 6 octets, least significant first.
            guard packet.parameters.count == 6 else { return }
            let value = packet.parameters.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
            if LEAddressKind(random: value) == .resolvablePrivate, random[controller]?.value != value {
                noteOwnRPA(value, controller: controller, frame: frame, timestamp: timestamp)
            }
            random[controller] = RandomAddress(value: value, frame: frame)
        case .leCreateConnection, .leExtendedCreateConnection, .leExtendedCreateConnectionV2:
            let type: LEAddressType
            switch packet.decoded {
            case .leCreateConnection(let c): type = c.ownAddressType
            case .leExtendedCreateConnection(let c): type = c.ownAddressType
            case .leExtendedCreateConnectionV2(let c): type = c.connection.ownAddressType
            default: return
            }
            initiating[controller] = OwnAddress(type: type, frame: frame, random: random[controller])
        case .leSetAdvertisingParameters:
            guard case .declared(let d) = packet.decoded, let p = d.as(LESetAdvertisingParameters.self) else { return }
            advertising[controller] = OwnAddress(type: p.ownAddressType, frame: frame, random: nil)
        default:
            return
        }
    }

    private mutating func noteOwnRPA(_ value: UInt64, controller: UInt16, frame: Int, timestamp: Timestamp) {
        guard rotation.own.count < AddressRotation.ownLimit else {
            rotation.ownOmitted += 1
            return
        }
        rotation.own.append(.init(controller: controller, frame: frame, timestamp: timestamp, address: BDAddress(value).description))
    }

    /// This side's address on a link `role` opened at `frame`: the local resolvable private address LE Enhanced
    /// Connection Complete names (7.7.65.10), else the address the Own_Address_Type chose; nil: not in the log.
    func local(controller: UInt16, central: Bool, localRPA: BDAddress?, frame: Int, event: String) -> SeenAddress? {
        if let rpa = localRPA, rpa.value != 0 {
            return SeenAddress(kind: .resolvablePrivate, address: rpa.description, frame: frame, shownBy: event)
        }
        guard var own = central ? initiating[controller] : advertising[controller] else { return nil }
        if !central { own.random = random[controller] }
        let command = central ? "LE Create Connection" : "LE Set Advertising Parameters"
        // 0x02 / 0x03: the controller makes a resolvable private address, or falls back to the public (0x02) or random
        // (0x03) address when it has no local IRK for the peer; without a local RPA in the event, LE Connection Complete
        // does not say which, LE Enhanced Connection Complete says "none" by zeros.
        let enhanced = localRPA != nil
        switch own.type.rawValue {
        case 0x00,
            0x02 where enhanced:
            return SeenAddress(kind: .public, address: nil, frame: own.frame, shownBy: command)
        case 0x01,
            0x03 where enhanced:
            guard let r = own.random else { return nil }
            return SeenAddress(
                kind: LEAddressKind(random: r.value), address: BDAddress(r.value).description, frame: r.frame,
                shownBy: "LE Set Random Address",
                ownAddressTypeFrame: own.frame)
        default:
            return nil
        }
    }
}

/// The addresses an LE (Enhanced) Connection Complete names (Vol 4, Part E, 7.7.65.1, 7.7.65.10): the peer's address
/// and type, and the Enhanced event's resolvable private addresses (zeros: none; nil: the event has no such field).
struct ConnectedAddresses {
    var address: BDAddress
    var type: LEAddressType
    var rpa: BDAddress?
    var local: BDAddress?

    init(_ address: BDAddress, _ type: LEAddressType, rpa: BDAddress?, local: BDAddress?) {
        self.address = address
        self.type = type
        self.rpa = rpa
        self.local = local
    }

    /// The peer's address on the link: public (0x00), random by its top bits (0x01), or a resolvable private address the
    /// controller resolved to the identity the event names (0x02 public identity, 0x03 random identity).
    func seen(frame: Int, event: String) -> SeenAddress? {
        switch type.rawValue {
        case 0x00, 0x01:
            return SeenAddress(value: address.value, isRandom: type.rawValue == 0x01, frame: frame, shownBy: event)
        case 0x02, 0x03:
            let rpa = self.rpa.flatMap { $0.value == 0 ? nil : $0.description }
            let identity = address.description + (type.rawValue == 0x03 ? " (random)" : "")
            return SeenAddress(kind: .resolvablePrivate, address: rpa, identity: identity, frame: frame, shownBy: event)
        default:
            return nil
        }
    }
}
