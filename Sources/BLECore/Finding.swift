/// Something noteworthy or wrong in the input, with where it was seen.
///
/// Bad input becomes data plus a finding; decoding goes on at the next frame.
public struct Finding: Hashable, Sendable, CustomStringConvertible {
    public enum Severity: String, Hashable, Sendable, Comparable, CaseIterable {
        case info, warning, error
        private var rank: Int { self == .info ? 0 : self == .warning ? 1 : 2 }
        public static func < (a: Self, b: Self) -> Bool { a.rank < b.rank }
    }

    public var severity: Severity
    public var kind: FindingKind
    /// 1-based frame number (Wireshark's numbering), when the finding belongs to a record.
    public var frame: Int?
    /// Byte offset in the file (or in the record, as the message says), when known.
    public var offset: Int64?

    public init(_ severity: Severity, _ kind: FindingKind, frame: Int? = nil, offset: Int64? = nil) {
        self.severity = severity
        self.kind = kind
        self.frame = frame
        self.offset = offset
    }

    public var message: String { kind.message }

    public var description: String {
        var places: [String] = []
        if let frame { places.append("frame \(frame)") }
        if let offset { places.append("offset \(offset)") }
        let location = places.isEmpty ? "" : " (" + places.joined(separator: ", ") + ")"
        return "\(severity.rawValue): \(kind.message)\(location)"
    }
}

/// What a finding is about: a stable machine-readable code and a human message.
///
/// An open struct: each module adds the kinds it reports as static members in an extension,
/// e.g. `.invalidSize(expected: 4, got: 2)`.
public struct FindingKind: Hashable, Sendable {
    /// Stable identifier (`"capture.truncated-file"`), for filtering and JSON.
    public var code: String
    public var message: String

    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    public static func invalidSize(expected: Int, got: Int) -> FindingKind {
        FindingKind(code: "invalid-size", message: "invalid size: expected \(expected) bytes, got \(got)")
    }

    public static func decode(_ error: DecodeError, what: String) -> FindingKind {
        FindingKind(code: "decode-error", message: "\(what): \(error)")
    }
}
