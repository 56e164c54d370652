import BLECore

/// How much a diagnosis matters: the one scale by impact (``BLECore/Severity``), critical when an operation the user
/// or the app asked for failed, error when something failed silently or will, warning when the capture shows it
/// degraded, info for context and for what the capture cannot tell.
public typealias DiagnosisSeverity = Severity

/// How far a diagnosis can be trusted: lowered when what the capture cannot show (a cut payload, a gap, a start
/// after the connection) touches the frames it rests on; the reason says what.
public enum DiagnosisConfidence: Hashable, Sendable {
    case high
    case lowered(reason: String)

    public var isLowered: Bool { if case .lowered = self { true } else { false } }
}

/// A frame a diagnosis cites and what it shows there.
public struct CitedFrame: Hashable, Sendable {
    public var frame: Int
    public var text: String
    public init(_ frame: Int, _ text: String) {
        self.frame = frame
        self.text = text
    }
}

/// A link fact a diagnosis used, with where it came from (see ``FactSource``): a verdict built on an assumed value
/// says so.
public struct UsedFact: Hashable, Sendable {
    /// `supervision timeout`, `ATT_MTU`, `connection interval`…
    public var name: String
    public var value: String
    public var source: FactSource
    public init(_ name: String, _ value: String, _ source: FactSource) {
        self.name = name
        self.value = value
        self.source = source
    }
}

/// One finding of the diagnosis: which rule, how bad, the deciding frame, the frames that support it (the causal
/// chain, earliest first), one sentence naming the device and what happened, and the likely causes.
public struct Diagnosis: Hashable, Sendable {
    /// The rule's registered code (its id, layer, severity, explanation, fold and traits).
    public var code: FindingCode
    /// The rule's id (`DC-01`), as ``DiagnosisRule/id`` and `docs/diagnosis.md` list it.
    public var rule: String { code.id }
    public var severity: DiagnosisSeverity
    /// The frame that decides it (Wireshark's numbering).
    public var frame: Int
    /// What happened, in one sentence, naming the device.
    public var message: String
    /// The same, short and without this occurrence's details, for a line that folds repeats
    /// (`failed to be established (0x3E) to C5:34:1A:…`).
    public var headline: String
    /// The frames that lead to it, each with what it shows (parameters that made a timeout likely, quality reports…).
    public var supporting: [CitedFrame]
    /// Likely causes, most likely first.
    public var causes: [String]
    /// The peer's address, when the capture names it.
    public var device: String?
    /// The connection's number (``Connection/number``), when it belongs to one.
    public var connection: Int?
    /// The link facts the verdict rests on, with their provenance.
    public var facts: [UsedFact]
    public var confidence: DiagnosisConfidence
    /// Folded repeats: the deciding frames of every occurrence (this one's first) when the same rule fired on the same
    /// device several times (``count`` = their number).
    public var occurrences: [Int]
    /// Key that makes occurrences the same for folding (the code's id and what it folds on); empty: never folded.
    public var foldKey: String
    /// This occurrence's own cause and figures, short (`its last data came 15.4 s before, …`): a later occurrence's is
    /// told in the folded finding's message, so each instance keeps its own cause (nil: the first's sentence stands).
    public var instance: String?

    /// `fold`: what this occurrence folds on, as its code's ``FindingCode/fold`` declares (the device as named, the
    /// value, or "" for every occurrence in the capture); nil: never folded.
    public init(
        rule code: FindingCode, severity: DiagnosisSeverity, frame: Int, message: String, headline: String? = nil,
        supporting: [CitedFrame] = [],
        causes: [String] = [], device: String? = nil, connection: Int? = nil, facts: [UsedFact] = [], fold: String? = nil
    ) {
        assert(fold == nil || code.fold != .never, "\(code.id) declares that it never folds")
        self.code = code
        self.severity = severity
        self.frame = frame
        self.message = message
        self.headline = headline ?? message
        self.supporting = supporting
        self.causes = causes
        self.device = device
        self.connection = connection
        self.facts = facts
        self.confidence = .high
        self.occurrences = [frame]
        self.foldKey = fold.map { $0.isEmpty ? code.id : code.id + " " + $0 } ?? ""
    }

    public var count: Int { occurrences.count }

    /// Every frame cited: the deciding frames of every occurrence and the supporting frames, ascending, no repeats.
    public var frames: [Int] { Array(Set(occurrences + supporting.map(\.frame))).sorted() }
}

/// The families of rules, as `docs/diagnosis.md` groups them (one folder each under `Diagnosis/Rules/`).
public enum RuleGroup: String, Hashable, Sendable, CaseIterable {
    case captureQuality = "Capture quality"
    case establishment = "Connection establishment"
    case disconnection = "Disconnection"
    case security = "Security, pairing and encryption"
    case gatt = "ATT and GATT"
    case throughput = "Throughput and flow control"
    case linkParameters = "Link parameters"
    case controller = "Controller and host health"
    case leAudio = "LE Audio"
    case classic = "BR/EDR"
    case linkLayer = "Link-layer compliance"
    /// What the capture as a whole is the scene of (a firmware update, a fuzzing run): ``Scenarios``.
    case scenario = "Scenarios"
}

/// A diagnosis rule: its registered code, the evidence it reads and what it says. One small type per rule, one file
/// each under `Diagnosis/Rules/<group>/` (its code declared at the top of the file:
/// `extension FindingCode { static let supervisionTimeout = FindingCode("DC-01", layer: .link, severity: .critical, …) }`),
/// registered by one row of ``DiagnosisRules/all``.
public protocol DiagnosisRule: Sendable {
    /// Its outcome's code: id, layer, severity, title, explanation, fold and traits, declared once.
    static var code: FindingCode { get }
    static var group: RuleGroup { get }
    /// The evidence it needs (codes, events), for the documentation.
    static var evidence: String { get }
    /// Who else names the case (hcidoc, btmon, Wireshark, Frontline) or `none`.
    static var anchor: String { get }
    /// Its findings on one capture.
    static func evaluate(_ evidence: Evidence) -> [Diagnosis]
}

extension DiagnosisRule {
    /// `DC-01`.
    public static var id: String { code.id }
    /// The severity it reports at (a rule may report lower when the evidence is weaker, never higher: the engine holds
    /// it to this).
    public static var severity: DiagnosisSeverity { code.severity }
    /// What it detects, in a few words (`docs/diagnosis.md`'s title column).
    public static var title: String { code.title }
}
