import BLECore
import BLEProtocols

/// What a host told its controller of its own LE address, per controller: the random address (LE Set Random Address,
/// Core Spec Vol 4, Part E, 7.8.4; an advertising set's, 7.8.52), the public address (Read BD_ADDR's answer, 7.4.6) and
/// the Own_Address_Type of the commands that make links: LE Create Connection and LE Extended Create Connection (this
/// side central, 7.8.12, 7.8.66), LE Set Advertising Parameters and LE Set Extended Advertising Parameters (peripheral,
/// 7.8.5, 7.8.53; the set a link came from named by LE Advertising Set Terminated, 7.7.65.18).
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
        var command = "LE Create Connection"
    }

    private var random: [UInt16: RandomAddress] = [:]
    /// The address in force before the latest LE Set Random Address (outer nil: none waits for its answer), restored
    /// when the controller refuses the command (a status other than success, 7.8.4): a refused address is not used.
    private var beforeRandom: [UInt16: RandomAddress?] = [:]
    /// The public address Read BD_ADDR returned (7.4.6), per controller.
    private var bdAddr: [UInt16: RandomAddress] = [:]
    /// Each resolvable private address a host set that changed its controller's (``AddressRotation/own``).
    private(set) var rotation = AddressRotation()
    private var initiating: [UInt16: OwnAddress] = [:]
    private var advertising: [UInt16: OwnAddress] = [:]
    /// Per advertising set (controller << 8 | handle): its parameters' Own_Address_Type and its random address.
    private var sets: [UInt32: OwnAddress] = [:]
    private var setRandom: [UInt32: RandomAddress] = [:]
    private var beforeSetRandom: [UInt16: (set: UInt32, address: RandomAddress?)] = [:]
    /// Peripheral links (controller << 16 | handle) whose event did not name this side's address: an LE Advertising Set
    /// Terminated may follow it and name the set (true: the event was LE Enhanced Connection Complete).
    private var awaitingSet: [UInt32: Bool] = [:]

    /// A command that sets this side's address or chooses it; the others cost one comparison of the opcode.
    mutating func command(_ packet: HCICommandPacket, controller: UInt16, frame: Int, timestamp: Timestamp) {
        let p = packet.parameters
        switch packet.opcode {
        case .leSetRandomAddress:
            // Random_Address: 6 octets, least significant first.
            guard p.count == 6 else { return }
            let value = Self.address(p[...])
            if LEAddressKind(random: value) == .resolvablePrivate, random[controller]?.value != value {
                noteOwnRPA(value, controller: controller, frame: frame, timestamp: timestamp)
            }
            beforeRandom[controller] = .some(random[controller])
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
            guard case .declared(let d) = packet.decoded, let a = d.as(LESetAdvertisingParameters.self) else { return }
            advertising[controller] = OwnAddress(type: a.ownAddressType, frame: frame, command: LESetAdvertisingParameters.name)
        case .leSetAdvertisingSetRandomAddress where p.count == 7:
            let set = UInt32(controller) << 8 | UInt32(p[0])
            beforeSetRandom[controller] = (set, setRandom[set])
            setRandom[set] = RandomAddress(value: Self.address(p.dropFirst()), frame: frame)
        case Self.setExtendedAdvertisingParameters, Self.setExtendedAdvertisingParametersV2:
            // Advertising_Handle (1), Event_Properties (2), Interval Min and Max (3 each), Channel_Map (1), Own_Address_Type.
            guard p.count > 10 else { return }
            sets[UInt32(controller) << 8 | UInt32(p[0])] = OwnAddress(
                type: LEAddressType(p[10]), frame: frame, command: "LE Set Extended Advertising Parameters")
        default:
            return
        }
    }

    static let setExtendedAdvertisingParameters = HCICommand(ogf: 0x08, ocf: 0x0036)
    static let setExtendedAdvertisingParametersV2 = HCICommand(ogf: 0x08, ocf: 0x007F)

    private static func address(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    /// Command Complete of a command above: Read BD_ADDR's public address; a refused LE Set Random Address or LE Set
    /// Advertising Set Random Address leaves the address as it was (and a refused RPA is no rotation).
    mutating func answered(_ cc: CommandComplete, controller: UInt16, frame: Int) {
        let r = cc.returnParameters
        guard let status = r.first else { return }
        switch cc.opcode {
        case .readBDADDR where status == 0 && r.count >= 7:
            bdAddr[controller] = RandomAddress(value: Self.address(r[1..<7]), frame: frame)
        case .leSetRandomAddress:
            guard let before = beforeRandom.removeValue(forKey: controller), status != 0 else { return }
            if let refused = random[controller], rotation.own.last?.frame == refused.frame { rotation.own.removeLast() }
            random[controller] = before
        case .leSetAdvertisingSetRandomAddress:
            guard let before = beforeSetRandom.removeValue(forKey: controller), status != 0 else { return }
            setRandom[before.set] = before.address
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
    /// Connection Complete names (7.7.65.10), else the address the Own_Address_Type chose; nil: not in the log (or, for
    /// a peripheral, not yet: ``advertisingSetTerminated(set:handle:controller:)``).
    mutating func local(
        controller: UInt16, handle: UInt16, central: Bool, localRPA: BDAddress?, frame: Int, event: String
    ) -> SeenAddress? {
        if let rpa = localRPA, rpa.value != 0 {
            return SeenAddress(kind: .resolvablePrivate, address: rpa.description, frame: frame, shownBy: event)
        }
        if !central { awaitingSet[UInt32(controller) << 16 | UInt32(handle)] = localRPA != nil }
        guard var own = central ? initiating[controller] : advertising[controller] else { return nil }
        if !central { own.random = random[controller] }
        return Self.seen(own, enhanced: localRPA != nil, bdAddr: bdAddr[controller], randomBy: "LE Set Random Address")
    }

    /// LE Advertising Set Terminated with success (7.7.65.18), which follows the connection event: the advertising set
    /// the peripheral link `handle` came from, and so this side's address from that set's parameters and random address.
    mutating func advertisingSetTerminated(set: UInt8, handle: UInt16, controller: UInt16) -> SeenAddress? {
        let key = UInt32(controller) << 8 | UInt32(set)
        guard let enhanced = awaitingSet.removeValue(forKey: UInt32(controller) << 16 | UInt32(handle)), var own = sets[key] else {
            return nil
        }
        own.random = setRandom[key]
        return Self.seen(own, enhanced: enhanced, bdAddr: bdAddr[controller], randomBy: LESetAdvertisingSetRandomAddress.name)
    }

    private static func seen(_ own: OwnAddress, enhanced: Bool, bdAddr: RandomAddress?, randomBy: String) -> SeenAddress? {
        // 0x02 / 0x03: the controller makes a resolvable private address, or falls back to the public (0x02) or random
        // (0x03) address when it has no local IRK for the peer; without a local RPA in the event, LE Connection Complete
        // does not say which, LE Enhanced Connection Complete says "none" by zeros.
        switch own.type.rawValue {
        case 0x00,
            0x02 where enhanced:
            guard let bd = bdAddr else { return SeenAddress(kind: .public, address: nil, frame: own.frame, shownBy: own.command) }
            return SeenAddress(
                kind: .public, address: BDAddress(bd.value).description, frame: bd.frame, shownBy: "Read BD_ADDR",
                ownAddressTypeFrame: own.frame)
        case 0x01,
            0x03 where enhanced:
            guard let r = own.random else { return nil }
            return SeenAddress(
                kind: LEAddressKind(random: r.value), address: BDAddress(r.value).description, frame: r.frame, shownBy: randomBy,
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
