import BLECore

enum BLECoreHex {
    static func bytes(_ text: some StringProtocol) -> [UInt8]? { BLECore.bytes(fromHex: text) }
}
