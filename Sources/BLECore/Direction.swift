/// Which way a packet went.
///
/// For HCI: `tx` is host → controller (commands, outgoing ACL), `rx` controller → host.
/// For link-layer (air) captures: `tx` is central → peripheral, `rx` peripheral → central.
public enum Direction: UInt8, Hashable, Sendable, CaseIterable, CustomStringConvertible {
    case unknown = 0
    case tx = 1
    case rx = 2

    public var description: String {
        switch self {
        case .unknown: "?"
        case .tx: "tx"
        case .rx: "rx"
        }
    }

    /// The arrow shown in timelines: `→` for tx, `←` for rx.
    public var arrow: String {
        switch self {
        case .unknown: "·"
        case .tx: "→"
        case .rx: "←"
        }
    }

    public var reversed: Direction {
        switch self {
        case .unknown: .unknown
        case .tx: .rx
        case .rx: .tx
        }
    }
}
