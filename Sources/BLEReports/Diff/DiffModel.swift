import BLEAnalysis
import BLECore

/// The part of two analyses a difference belongs to, in the order `diff` reads them.
public enum DiffSection: String, CaseIterable, Sendable, Comparable {
    case connections, gatt, link, behaviour, throughput, ota, diagnosis
    case leAudio = "le-audio"
    /// BR/EDR audio: A2DP codec and rate, profile versions, HFP codec, SCO air mode (``DiffAudio``).
    case audio

    public static func < (a: Self, b: Self) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// How much a difference matters, which decides its rank: a `major` one changes what a user sees (a characteristic
/// gone, a new error, a rate drop of a quarter or more, a smaller ATT_MTU), a `minor` one is a change of a figure or of
/// the order of things, `info` is context (a handle that moved, a count of warnings).
public enum DiffImpact: String, Sendable, Comparable, CaseIterable {
    case info, minor, major

    var rank: Int { DiffImpact.allCases.firstIndex(of: self)! }
    public static func < (a: Self, b: Self) -> Bool { a.rank < b.rank }
}

/// One place where the two captures differ: what (`kind`, `subject`), the value on each side, and the frames that
/// show it on each side (nil when that side has none: an attribute that only one side has).
public struct Difference: Sendable, Hashable {
    public var section: DiffSection
    /// What changed, stable for scripts: `characteristic-added`, `properties-changed`, `interval`, `rate`, `rule-new`…
    public var kind: String
    public var impact: DiffImpact
    /// What it is about: `characteristic 2A19 Battery Level in service 180F`, `connection #1 interval`.
    public var subject: String
    /// The value on each side as the outputs print it (nil: absent on that side).
    public var a: String?
    public var b: String?
    public var frameA: Int?
    public var frameB: Int?
    public var connectionA: Int?
    public var connectionB: Int?
    /// Orders differences of the same impact: a larger change first (a relative change for figures).
    public var magnitude: Double
    /// For a figure, (B − A) / A: what `--fail-on rate-drop` reads.
    public var change: Double?

    public init(
        _ section: DiffSection, _ kind: String, impact: DiffImpact, subject: String, a: String?, b: String?,
        frames: (Int?, Int?) = (nil, nil), connections: (Int?, Int?) = (nil, nil), magnitude: Double = 0
    ) {
        self.section = section
        self.kind = kind
        self.impact = impact
        self.subject = subject
        self.a = a
        self.b = b
        (frameA, frameB) = frames
        (connectionA, connectionB) = connections
        self.magnitude = magnitude
    }

    /// `A 0x2A19 read,notify → B read` in words: the subject and both values.
    public var sentence: String {
        switch (a, b) {
        case (nil, let b?): "\(subject): only in B (\(b))"
        case (let a?, nil): "\(subject): only in A (\(a))"
        case (let a?, let b?): "\(subject): \(a) → \(b)"
        case (nil, nil): subject
        }
    }

    /// `A #12, B #40`: the frames on both sides (`-` for a side without one).
    public var framesText: String {
        "A " + (frameA.map { "#\($0)" } ?? "-") + ", B " + (frameB.map { "#\($0)" } ?? "-")
    }
}

/// Two connections taken as the same link in the two captures, and why.
public struct ConnectionPair: Sendable, Hashable {
    public var a: Int
    public var b: Int
    /// The peer both name (identity address, address, or the name/GATT that matched them).
    public var peer: String
    /// `address`, `identity`, `name`, `gatt`, `handles used`, `order`, `chosen`.
    public var matchedBy: String
    /// The peer's name both sides gave, when it matched them (`matchedBy` is `name`).
    public var name: String? = nil

    /// How the pair was matched, as the outputs say it: `address`, `name 'Even G2_L'`, `gatt`.
    public var matchedByText: String { name.map { "\(matchedBy) '\($0)'" } ?? matchedBy }
}

/// The differences between two analysed captures, ranked (most important first).
public struct CaptureDiff: Sendable {
    public var pathA: String
    public var pathB: String
    public var pairs: [ConnectionPair]
    public var differences: [Difference]
    /// What could not be compared, said once each (`B could not be read: …`, `GATT not discovered in B`).
    public var notes: [String]

    public var isEmpty: Bool { differences.isEmpty }

    /// How many differences each section has, in section order (sections without any left out).
    public var countsBySection: [(DiffSection, Int)] {
        DiffSection.allCases.compactMap { s in
            let n = differences.filter { $0.section == s }.count
            return n > 0 ? (s, n) : nil
        }
    }
}

/// What to compare: every connection, or the ones `--peer` and `--connection` choose.
public struct DiffOptions: Sendable {
    /// Only connections to this peer (address or identity address, case-insensitive) on both sides.
    public var peer: String?
    /// Only this connection of A against this one of B (1-based numbers).
    public var connection: (a: Int, b: Int)?
    /// Identity keys (`--irk`): a peer at a resolvable private address one of them resolves is that key's device,
    /// named by its identity address (or `IRK n` when none is given), on both sides.
    public var identityKeys: [IdentityKey]

    public init(peer: String? = nil, connection: (a: Int, b: Int)? = nil, identityKeys: [IdentityKey] = []) {
        self.peer = peer
        self.connection = connection
        self.identityKeys = identityKeys
    }
}

extension Difference {
    /// Ranked order: impact, then section, then magnitude, then the frames.
    static func ranked(_ a: Difference, _ b: Difference) -> Bool {
        if a.impact != b.impact { return a.impact > b.impact }
        if a.section != b.section { return a.section < b.section }
        if a.magnitude != b.magnitude { return a.magnitude > b.magnitude }
        return (a.frameA ?? a.frameB ?? 0, a.subject) < (b.frameA ?? b.frameB ?? 0, b.subject)
    }
}
