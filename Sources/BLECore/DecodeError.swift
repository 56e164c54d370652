/// Why a parser could not read a value.
///
/// Decoders throw this typed error (`throws(DecodeError)`); callers turn it into a
/// ``Finding`` at the frame boundary, so no error escapes past a record.
public enum DecodeError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The input ended before a field could be read.
    case truncated(needed: Int, available: Int, offset: Int)
    /// A length or size field disagrees with what the protocol allows.
    case invalidSize(expected: Int, got: Int)
    /// A field holds a value the protocol forbids.
    case invalidValue(field: String, value: Int, offset: Int)
    /// Well-formed but not something this decoder handles.
    case unsupported(String)
    /// Free-form description, for cases that fit none of the above.
    case malformed(String)

    public var description: String {
        switch self {
        case let .truncated(needed, available, offset):
            return "truncated: needed \(needed) byte\(needed == 1 ? "" : "s") at offset \(offset), \(available) available"
        case let .invalidSize(expected, got):
            return "invalid size: expected \(expected), got \(got)"
        case let .invalidValue(field, value, offset):
            return "invalid \(field) \(value) at offset \(offset)"
        case let .unsupported(what):
            return "unsupported: \(what)"
        case let .malformed(what):
            return what
        }
    }
}
