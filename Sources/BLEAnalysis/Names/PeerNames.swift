import BLECore
import BLEProtocols

/// Where a peer's name was read.
public enum PeerNameSource: String, Hashable, Sendable, CaseIterable {
    /// Remote Name Request Complete (Core Spec Vol 4, Part E, 7.7.7): the name the remote's LMP gave.
    case remoteNameRequest = "remote-name-request"
    /// The Local Name element of an Extended Inquiry Result (7.7.38; Core Spec Vol 3, Part C, 8).
    case extendedInquiryResult = "extended-inquiry-result"
    /// The Local Name element of LE advertising or scan response data (an HCI advertising report, or the PDU on the air;
    /// Core Spec Supplement, Part A, 1.2).
    case advertising
    /// A read of the peer's Device Name characteristic (0x2A00, Core Spec Vol 3, Part C, 12.1).
    case gattDeviceName = "gatt-device-name"

    /// `Remote Name Request`, as the story's provenance says it.
    public var description: String {
        switch self {
        case .remoteNameRequest: "Remote Name Request"
        case .extendedInquiryResult: "Extended Inquiry Result"
        case .advertising: "advertising data"
        case .gattDeviceName: "GATT Device Name"
        }
    }
}

/// A peer's name as the capture gave it, with the frame and the source.
public struct PeerName: Hashable, Sendable {
    /// The name as sent, up to its first NUL, UTF-8 decoded (an invalid sequence inside it becomes U+FFFD).
    public var text: String
    public var source: PeerNameSource
    public var frame: Int
    /// The device said the name is shortened (the Shortened Local Name element, AD type 0x08).
    public var shortened: Bool
    /// The bytes stop short of the name: an element that runs past its data, or the last character cut mid-sequence.
    public var cut: Bool

    public init(text: String, source: PeerNameSource, frame: Int, shortened: Bool = false, cut: Bool = false) {
        self.text = text
        self.source = source
        self.frame = frame
        self.shortened = shortened
        self.cut = cut
    }

    /// A name that is not whole loses to a whole one.
    var isWhole: Bool { !shortened && !cut }

    /// The most of a name a line shows.
    public static let shownLength = 32

    /// The name safe to print: without the spaces around it (`"EKD01-BF "` in a real capture), control and format
    /// characters (a bidi override, an escape) as `\u{1B}`, and `…` where the name is not whole or longer than
    /// ``shownLength``.
    public var shown: String {
        var core = Substring(text)
        while core.first?.isWhitespace == true { core.removeFirst() }
        while core.last?.isWhitespace == true { core.removeLast() }
        var out = ""
        var count = 0
        for scalar in core.unicodeScalars {
            if count == Self.shownLength { return out + "…" }
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .privateUse, .surrogate, .unassigned:
                out += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default:
                out.unicodeScalars.append(scalar)
            }
            count += 1
        }
        return isWhole ? out : out + "…"
    }

    /// The name from `bytes` (up to the first NUL; HCI pads names with NULs, Core Spec Vol 4, Part E, 7.3.11); nil
    /// when nothing but NULs and spaces. A multi-byte character the bytes end inside is dropped and the name marked cut.
    public init?(
        bytes: some Collection<UInt8>, source: PeerNameSource, frame: Int, shortened: Bool = false, cut: Bool = false
    ) {
        var utf8 = Array(bytes.prefix { $0 != 0 })
        var cutShort = cut
        // A lead byte whose sequence the bytes do not finish (UTF-8: 110xxxxx needs 1 more, 1110xxxx 2, 11110xxx 3).
        var i = utf8.count - 1
        while i >= 0, i >= utf8.count - 4, utf8[i] & 0xC0 == 0x80 { i -= 1 }
        if i >= 0 {
            let lead = utf8[i]
            let need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1
            if need > 1, utf8.count - i < need {
                utf8.removeSubrange(i...)
                cutShort = true
            }
        }
        let text = String(decoding: utf8, as: UTF8.self)
        guard text.contains(where: { !$0.isWhitespace }) else { return nil }
        self.init(text: text, source: source, frame: frame, shortened: shortened, cut: cutShort)
    }
}

/// One name per peer address, with where it came from: the one owner of the fact. Every source (Remote Name Request,
/// Extended Inquiry Result, LE advertising data on HCI or on the air, a GATT Device Name read) enters through
/// ``observe(_:address:)``; a whole name wins over a shortened or cut one, and otherwise the first name stays (a
/// device's later rename is not guessed at). An address is the address: a resolvable private address that changes is
/// another address, and the name of one is never given to the other.
public struct PeerNames: Hashable, Sendable {
    private var byAddress: [UInt64: PeerName] = [:]
    /// Addresses not kept once ``capacity`` was reached (a scan of a crowded place).
    public private(set) var dropped = 0
    static let capacity = 16384

    public init() {}

    public var isEmpty: Bool { byAddress.isEmpty }
    public var count: Int { byAddress.count }

    /// How many addresses hold a name of this text (an LE device's rotating addresses each hold its own).
    public func addresses(named text: String) -> Int { byAddress.values.reduce(0) { $0 + ($1.text == text ? 1 : 0) } }

    /// The name of the device at `address` (48-bit value).
    public func name(for address: UInt64) -> PeerName? { byAddress[address] }

    /// The name of the device at `address` (`94:DB:56:5F:D3:62`, an address type after it ignored).
    public func name(for address: String?) -> PeerName? {
        guard let address, let value = BDAddress(String(address.prefix(17)))?.value else { return nil }
        return byAddress[value]
    }

    /// Whether a name of this kind would change what is held for `address`: asked before a name is decoded, so a
    /// scan that repeats the same advertisement pays one lookup per report.
    @inline(__always)
    func wants(_ address: UInt64, whole: Bool) -> Bool {
        guard let held = byAddress[address] else { return true }
        return whole && !held.isWhole
    }

    /// The one door in: `name` seen for `address`.
    mutating func observe(_ name: PeerName, address: UInt64) {
        guard wants(address, whole: name.isWhole) else { return }
        if byAddress[address] == nil, byAddress.count >= Self.capacity {
            dropped += 1
            return
        }
        byAddress[address] = name
    }

    /// The Local Name in advertising or EIR data (Core Spec Supplement, Part A, 1.2: AD type 0x09 complete, 0x08
    /// shortened), the complete one first, for `address`. The data is read as length–type–value structures until a
    /// zero length; a name that runs past the data is kept, marked cut.
    mutating func observe(
        advertisingData data: some RandomAccessCollection<UInt8>, address: UInt64, source: PeerNameSource, frame: Int
    ) {
        guard wants(address, whole: true) else { return }
        guard let found = Self.localName(in: data) else { return }
        if let name = PeerName(bytes: found.bytes, source: source, frame: frame, shortened: found.shortened, cut: found.cut) {
            observe(name, address: address)
        }
    }

    /// The complete Local Name of `data`, else the shortened one: its bytes, and whether the structure ran past the data.
    static func localName(in data: some RandomAccessCollection<UInt8>) -> (bytes: [UInt8], shortened: Bool, cut: Bool)? {
        var best: (bytes: [UInt8], shortened: Bool, cut: Bool)? = nil
        var i = data.startIndex
        while i < data.endIndex {
            let length = Int(data[i])
            guard length > 0 else { break }
            let typeIndex = data.index(after: i)
            guard typeIndex < data.endIndex else { break }
            let type = data[typeIndex]
            let start = data.index(after: typeIndex)
            let wanted = data.distance(from: start, to: data.endIndex)
            let end = data.index(start, offsetBy: min(length - 1, wanted))
            if type == 0x09 || type == 0x08 {
                let found = (Array(data[start..<end]), type == 0x08, length - 1 > wanted)
                if type == 0x09 { return found }
                if best == nil { best = found }
            }
            guard length - 1 <= wanted else { break }
            i = end
        }
        return best
    }
}
