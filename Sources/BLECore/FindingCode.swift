/// How much something matters, by what the user lost (one scale for the decoder's findings and the diagnosis):
///
/// - `critical`: an operation the user or the app asked for failed (a link lost mid-transfer, an update or a pairing
///   that failed);
/// - `error`: something failed silently, or will fail;
/// - `warning`: something the capture shows was degraded;
/// - `info`: context, or what the capture cannot tell.
///
/// The decoder's findings use the lower three; a code's declared severity is the most any of its findings can claim.
public enum Severity: String, Hashable, Sendable, Comparable, CaseIterable {
    case info, warning, error, critical

    var rank: Int {
        switch self {
        case .info: 0
        case .warning: 1
        case .error: 2
        case .critical: 3
        }
    }
    public static func < (a: Self, b: Self) -> Bool { a.rank < b.rank }
}

/// Where in the stack a finding's evidence lives.
public enum FindingLayer: String, Hashable, Sendable, CaseIterable {
    /// The file and the capturer: records, drops, gaps, cuts, clocks.
    case capture
    /// HCI commands and events, the controller's health.
    case hci
    /// The LE link: its link layer (air captures), establishment, parameters, its end.
    case link
    case l2cap
    case att
    case gatt
    /// Pairing, keys and encryption (SMP, LL and BR/EDR security).
    case security
    /// Isochronous channels and LE Audio.
    case audio
    /// BR/EDR links (paging, LMP outcomes seen through HCI).
    case classic
    /// Advertising and scanning.
    case advertising
    /// What rides on GATT: attribute values, chunked transfers, firmware updates.
    case application
    /// blescope's own bounds (too many connections, findings, held bytes).
    case limits
}

/// A code's declared facts the engine reads (instead of lists of rule ids kept beside it).
public struct FindingTraits: OptionSet, Hashable, Sendable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    /// Its verdict rests on the link's setup (parameters, pairing, subscriptions, MTU exchange): lowered when the
    /// connection started before the capture.
    public static let restsOnSetup = FindingTraits(rawValue: 1 << 0)
    /// It claims that something did not happen (no response, nothing notified, no data): asked of the capture's
    /// observability first; "the capture cannot tell" when it could not have shown it.
    public static let claimsAbsence = FindingTraits(rawValue: 1 << 1)
    /// It reads attribute values or sizes: lowered when the capturer cut the payloads.
    public static let readsPayloads = FindingTraits(rawValue: 1 << 2)
    /// It describes the capture itself (what it lacks), not the devices: never qualified by the capture's caveats.
    public static let describesCapture = FindingTraits(rawValue: 1 << 3)
    /// It names a weakness or a departure from the specification (a key anyone can recover, a short or debug key, a
    /// forbidden field), not a failure: nothing in the capture was lost to it. A diagnosis whose findings above info
    /// are all weaknesses says "nothing failed" first (``DiagnosisResult/tally``), so a calm log that paired the
    /// legacy way is not read as a broken one.
    public static let weakness = FindingTraits(rawValue: 1 << 4)
}

/// What makes two occurrences of a code one line when the diagnosis folds repeats.
public enum FindingFold: String, Hashable, Sendable {
    /// Every occurrence is its own line.
    case never
    /// Every occurrence in the capture is one line.
    case capture
    /// One line per device (the peer as the capture names it).
    case device
    /// One line per value the finding names (a status, an opcode, a stream), as its ``Diagnosis`` says.
    case value
}

/// What a code means for someone who has not met the case, and what to do about it.
public struct FindingExplanation: Hashable, Sendable {
    /// What happened, in plain words, and why it matters.
    public var meaning: String
    /// What to look at or change next (empty when there is nothing to do).
    public var advice: String
    public init(meaning: String, advice: String = "") {
        self.meaning = meaning
        self.advice = advice
    }
}

/// One registered finding code, declared once (as Wireshark registers its expert infos with `ei_register_info`):
/// its stable id, layer, default severity, headline, explanation, fold and traits. Decoders and rules name a code
/// by its symbol (`FindingCode.l2capFrameTooLong`, `FindingCode.supervisionTimeout`), never by its string; the
/// string is what every output prints (JSON `code` / `rule`, CSV, text), documented in docs/output-formats.md.
///
/// A class so that a finding carries one reference, not the declaration; two codes are the same when their ids are.
public final class FindingCode: Hashable, Sendable, CustomStringConvertible {
    /// Stable identifier (`ll.malformed`, `DC-01`), for filtering, JSON and CSV.
    public let id: String
    public let layer: FindingLayer
    /// The severity it reports at, and the most any of its findings can claim (a finding may say less when its
    /// evidence is weaker, never more).
    public let severity: Severity
    /// What it is, in a few words (`L2CAP PDU longer than its length`, `Link lost: supervision timeout`).
    public let title: String
    public let explanation: FindingExplanation
    public let fold: FindingFold
    public let traits: FindingTraits

    public init(
        _ id: String, layer: FindingLayer, severity: Severity, title: String, explain: FindingExplanation,
        fold: FindingFold = .capture, traits: FindingTraits = []
    ) {
        self.id = id
        self.layer = layer
        self.severity = severity
        self.title = title
        self.explanation = explain
        self.fold = fold
        self.traits = traits
    }

    /// A code whose explanation is one sentence of meaning.
    public convenience init(
        _ id: String, layer: FindingLayer, severity: Severity, title: String, meaning: String, fold: FindingFold = .capture,
        traits: FindingTraits = []
    ) {
        self.init(id, layer: layer, severity: severity, title: title, explain: .init(meaning: meaning), fold: fold, traits: traits)
    }

    public func has(_ trait: FindingTraits) -> Bool { traits.contains(trait) }

    public static func == (a: FindingCode, b: FindingCode) -> Bool { a === b || a.id == b.id }
    public func hash(into hasher: inout Hasher) { hasher.combine(id) }
    public var description: String { id }
}
