import BLECore

/// The sizes an nRF5 SDK Secure DFU init packet announces (protobuf `dfu-cc.proto`, as nrfutil writes it).
///
/// ```
/// Packet        { 1: Command command | 2: SignedCommand signed_command }
/// SignedCommand { 1: Command command, 2: signature_type, 3: signature }
/// Command       { 1: op_code, 2: InitCommand init }
/// InitCommand   { 1: fw_version, 2: hw_version, 3: sd_req, 4: type, 5: sd_size, 6: bl_size, 7: app_size, 8: hash … }
/// ```
/// Nil when the bytes are not such a packet (vendor init packets differ).
public struct DFUInitPacketInfo: Hashable, Sendable {
    public var softDeviceSize: Int
    public var bootloaderSize: Int
    public var applicationSize: Int
    /// InitCommand `type`: 0 application, 1 SoftDevice, 2 bootloader, 3 SoftDevice + bootloader (nrfutil numbering).
    public var firmwareType: Int?

    public var totalSize: Int { softDeviceSize + bootloaderSize + applicationSize }

    public init?(_ bytes: [UInt8]) {
        guard let packet = Self.fields(bytes[...]) else { return nil }
        var command: ArraySlice<UInt8>?
        if let c = packet[1]?.bytes {
            command = c
        } else if let signed = packet[2]?.bytes, let s = Self.fields(signed), let c = s[1]?.bytes {
            command = c
        }
        guard let command, let cmd = Self.fields(command), let initBytes = cmd[2]?.bytes,
            let initCommand = Self.fields(initBytes)
        else { return nil }
        softDeviceSize = initCommand[5]?.varint ?? 0
        bootloaderSize = initCommand[6]?.varint ?? 0
        applicationSize = initCommand[7]?.varint ?? 0
        firmwareType = initCommand[4]?.varint
        guard totalSize > 0 else { return nil }
    }

    enum Field {
        case varint(Int), bytes(ArraySlice<UInt8>)
        var varint: Int? { if case let .varint(v) = self { v } else { nil } }
        var bytes: ArraySlice<UInt8>? { if case let .bytes(b) = self { b } else { nil } }
    }

    /// Top-level fields of a protobuf message (last value wins); nil on anything malformed.
    static func fields(_ data: ArraySlice<UInt8>) -> [Int: Field]? {
        var out: [Int: Field] = [:]
        var i = data.startIndex
        func varint() -> Int? {
            var v = 0, shift = 0
            while i < data.endIndex, shift < 63 {
                let b = data[i]; i += 1
                v |= Int(b & 0x7F) << shift
                if b & 0x80 == 0 { return v }
                shift += 7
            }
            return nil
        }
        while i < data.endIndex {
            guard let tag = varint(), tag >> 3 > 0 else { return nil }
            switch tag & 7 {
            case 0: guard let v = varint() else { return nil }; out[tag >> 3] = .varint(v)
            case 2:
                guard let n = varint(), n <= data.endIndex - i else { return nil }
                out[tag >> 3] = .bytes(data[i..<(i + n)]); i += n
            case 5: guard data.endIndex - i >= 4 else { return nil }; i += 4
            case 1: guard data.endIndex - i >= 8 else { return nil }; i += 8
            default: return nil
            }
        }
        return out
    }
}
