import BLECore
import BLEProtocols

/// The kind of an LE device address (Core Spec Vol 6, Part B, 1.3): public, or random, whose two most significant
/// bits tell static (0b11), resolvable private (0b01) and non-resolvable private (0b00) apart (1.3.2).
public enum LEAddressKind: String, Hashable, Sendable {
    case `public` = "public"
    case randomStatic = "random static"
    case resolvablePrivate = "resolvable private"
    case nonResolvablePrivate = "non-resolvable private"
    /// A random address whose top bits are 0b10: no sub-type the specification defines.
    case reservedRandom = "random (reserved sub-type)"

    /// A random address's kind from its two most significant bits.
    public init(random value: UInt64) {
        switch (value >> 46) & 0b11 {
        case 0b11: self = .randomStatic
        case 0b01: self = .resolvablePrivate
        case 0b00: self = .nonResolvablePrivate
        default: self = .reservedRandom
        }
    }

    /// A private address: one that can change (resolvable or not), unlike a public or static one.
    public var isPrivate: Bool { self == .resolvablePrivate || self == .nonResolvablePrivate }
}

/// The address one side of an LE link used on it, as the log shows it.
public struct SeenAddress: Hashable, Sendable {
    public var kind: LEAddressKind
    /// `AA:BB:CC:DD:EE:FF`; nil when the log shows only the kind (this side's own address type public, its address not
    /// read in the log).
    public var address: String?
    /// The identity address the controller resolved a resolvable private address to (LE (Enhanced) Connection Complete
    /// peer address type 0x02 / 0x03, Vol 4, Part E, 7.7.65.10), nil when it did not.
    public var identity: String?
    /// The record that shows it (the address itself, or for this side its own address type).
    public var frame: Int
    /// That record's name: `LE Connection Complete`, `CONNECT_IND`, `LE Set Random Address`, ….
    public var shownBy: String
    /// This side: the command whose Own_Address_Type chose the address (LE Create Connection, LE Set Advertising
    /// Parameters), when another record gave the address.
    public var ownAddressTypeFrame: Int?

    public init(
        kind: LEAddressKind, address: String?, identity: String? = nil, frame: Int, shownBy: String, ownAddressTypeFrame: Int? = nil
    ) {
        self.kind = kind
        self.address = address
        self.identity = identity
        self.frame = frame
        self.shownBy = shownBy
        self.ownAddressTypeFrame = ownAddressTypeFrame
    }

    /// An address as a type flag and value name it (CONNECT_IND's TxAdd/RxAdd, HCI address type 0 or 1).
    public init(value: UInt64, isRandom: Bool, frame: Int, shownBy: String) {
        self.init(
            kind: isRandom ? LEAddressKind(random: value) : .public, address: BDAddress(value).description, frame: frame,
            shownBy: shownBy)
    }

    /// `resolvable private 4A:…:01 (identity C0:…, LE Enhanced Connection Complete at 12)`.
    public var description: String {
        var text = kind.rawValue + (address.map { " " + $0 } ?? "")
        var basis = identity.map { ["identity \($0)"] } ?? []
        basis.append("\(shownBy) at \(frame)")
        if let own = ownAddressTypeFrame { basis.append("own address type at \(own)") }
        text += " (" + basis.joined(separator: ", ") + ")"
        return text
    }
}
