import BLECore
import BLESecurity

/// Bytes from hex as the spec prints them (most significant octet first), returned in wire order (reversed).
func wire(_ msbFirstHex: String) -> [UInt8] { bytes(fromHex: msbFirstHex)!.reversed() }

/// Bytes from hex in the order written (first octet first): for PDUs as captured.
func raw(_ hex: String) -> [UInt8] { bytes(fromHex: hex)! }

/// A Key128 from the spec's notation (most significant octet first).
func key(_ msbFirstHex: String) -> Key128 { Key128(hex: msbFirstHex)! }
