/// Something noteworthy or wrong in the input, with where it was seen.
///
/// Bad input becomes data plus a finding; decoding goes on at the next frame.
public struct Finding: Hashable, Sendable, CustomStringConvertible {
    /// The one severity scale (``BLECore/Severity``); the decoder's findings use info, warning and error.
    public typealias Severity = BLECore.Severity

    public var severity: Severity
    public var kind: FindingKind
    /// 1-based frame number (Wireshark's numbering), when the finding belongs to a record.
    public var frame: Int?
    /// Byte offset in the file (or in the record, as the message says), when known.
    public var offset: Int64?

    /// `severity`: this finding's, at most its code's (``FindingCode/severity``: a finding may say less, never more).
    public init(_ severity: Severity, _ kind: FindingKind, frame: Int? = nil, offset: Int64? = nil) {
        assert(severity <= kind.code.severity, "\(kind.code.id) is declared at most \(kind.code.severity), reported \(severity)")
        self.severity = min(severity, kind.code.severity)
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

/// What a finding is about: its registered code (``FindingCode``, declared once with its layer, severity and
/// explanation) and this occurrence's message.
///
/// Each module adds the kinds it reports as static members in an extension, e.g. `.invalidSize(expected: 4, got: 2)`,
/// each naming its code by symbol: `FindingKind(.l2capFrameTooLong, message: …)`.
public struct FindingKind: Hashable, Sendable {
    /// The registered code; `code.id` (`"capture.truncated-file"`) is what outputs print.
    public var code: FindingCode
    public var message: String

    public init(_ code: FindingCode, message: String) {
        self.code = code
        self.message = message
    }

    public static func invalidSize(expected: Int, got: Int) -> FindingKind {
        FindingKind(.invalidSize, message: "invalid size: expected \(expected) bytes, got \(got)")
    }

    public static func decode(_ error: DecodeError, what: String) -> FindingKind {
        FindingKind(.decodeError, message: "\(what): \(error)")
    }
}
