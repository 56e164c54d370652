import BLECore

/// What a pcapng file says of where it was written, from the blocks ahead of its first packet: the first Section
/// Header Block's `shb_hardware` (option 2), `shb_os` (3) and `shb_userappl` (4), and each Interface Description
/// Block's `if_name` (2) and `if_description` (3) (pcapng, IETF draft-ietf-opsawg-pcapng, 4.1 and 4.2). Microsoft's
/// BTVS, read through Wireshark's dumpcap, leaves `shb_os` "64-bit Windows 11 (25H2), build 26200" and an interface
/// named "TCP@127.0.0.1:24400" (its TCP server on the local host).
public struct PcapngSection: Hashable, Sendable {
    public var hardware: String?
    public var os: String?
    public var application: String?
    public var interfaceNames: [String] = []
    public var interfaceDescriptions: [String] = []

    public init() {}

    /// The options of the blocks at the head of `bytes` (a pcapng file's first bytes); blocks cut short or unreadable end
    /// the reading, what was read is kept.
    public init(head bytes: UnsafeRawBufferPointer) {
        var input = ByteReader(bytes)
        var bigEndian = false
        while input.remaining >= 12 {
            var peek = input
            guard let type = try? peek.readInteger(UInt32.self, bigEndian: bigEndian) else { return }
            if type == Pcapng.sectionHeader {
                // The section's byte order, from its magic after the block length.
                guard (try? peek.skip(4)) != nil, let magic = try? peek.readInteger(UInt32.self, bigEndian: false) else { return }
                bigEndian = magic != Pcapng.byteOrderMagic
            }
            guard (try? input.skip(4)) != nil, let length = try? input.readInteger(UInt32.self, bigEndian: bigEndian), length >= 12,
                length % 4 == 0, Int(length) - 8 <= input.remaining, var body = try? input.slice(Int(length) - 12),
                (try? input.skip(4)) != nil  // the block's trailing length
            else { return }
            switch type {
            case Pcapng.sectionHeader:
                guard (try? body.skip(16)) != nil else { return }  // magic, version, section length
                for (code, text) in Self.options(&body, bigEndian: bigEndian) {
                    if code == 2 { hardware = hardware ?? text }
                    if code == 3 { os = os ?? text }
                    if code == 4 { application = application ?? text }
                }
            case Pcapng.interfaceDescription:
                guard (try? body.skip(8)) != nil else { return }  // link type, reserved, snap length
                for (code, text) in Self.options(&body, bigEndian: bigEndian) {
                    if code == 2 { interfaceNames.append(text) }
                    if code == 3 { interfaceDescriptions.append(text) }
                }
            case 2, 3, 6:
                return  // the first packet: what follows is the capture, not its header
            default:
                break
            }
        }
    }

    /// Each option of a block's option list as text (UTF-8, NUL padding dropped), to `body`'s end or opt_endofopt.
    static func options(_ body: inout ByteReader, bigEndian: Bool) -> [(UInt16, String)] {
        var all: [(UInt16, String)] = []
        while body.remaining >= 4 {
            guard let code = try? body.readInteger(UInt16.self, bigEndian: bigEndian),
                let size = try? body.readInteger(UInt16.self, bigEndian: bigEndian), code != 0,
                let value = try? body.readArray(Int(size))
            else { break }
            _ = try? body.skip((4 - Int(size) % 4) % 4)
            let text = String(decoding: value.prefix { $0 != 0 }, as: UTF8.self)
            if !text.isEmpty { all.append((code, text)) }
        }
        return all
    }
}

extension PcapngReader {
    /// The section's header options and interface names, from the bytes ahead of the first packet (what `open` reads).
    func readSectionAhead() -> PcapngSection {
        PcapngSection(head: UnsafeRawBufferPointer(start: source.cursor, count: min(source.available, 1 << 16)))
    }
}
