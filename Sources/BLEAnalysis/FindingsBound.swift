import BLECore

/// Keeps the analyzer's findings flat on damaged or hostile captures: beyond ``keptPerCode`` findings of one kind only
/// a count and the first frame are kept, and each `limit.*` bound is reported once. ``compact(_:)`` runs when the list
/// passes ``threshold``; ``omissions()`` says at the end what was left out.
struct FindingsBound {
    /// At most this many findings of each kind are kept.
    var keptPerCode = 1000
    /// The list's length past which it is compacted next.
    private(set) var threshold = 20_000
    private var keptByCode: [String: Int] = [:]
    /// Findings before this index are kept already: the next compaction only looks at the ones after.
    private var compactedPrefix = 0
    private var suppressed: [String: (count: Int, firstFrame: Int?)] = [:]
    private var limitsNoted = Set<String>()

    /// True the first time a `limit.*` bound is hit.
    mutating func firstTime(_ limit: FindingKind) -> Bool { limitsNoted.insert(limit.code.id).inserted }

    mutating func compact(_ findings: inout [Finding]) {
        var kept = Array(findings[0..<compactedPrefix])
        var perCode = keptByCode
        for f in findings[compactedPrefix...] {
            let n = perCode[f.kind.code.id, default: 0]
            if n < keptPerCode {
                kept.append(f)
                perCode[f.kind.code.id] = n + 1
            } else {
                suppressed[f.kind.code.id, default: (0, f.frame)].count += 1
            }
        }
        keptByCode = perCode
        findings = kept
        compactedPrefix = findings.count
        threshold = findings.count + 10_000
    }

    /// One `limit.findings` note per kind that had findings left out, by code.
    func omissions() -> [Finding] {
        suppressed.sorted { $0.key < $1.key }.map { code, s in
            Finding(
                .info,
                FindingKind(
                    .limitFindings,
                    message: "\(s.count) more \(code) findings not listed (the first \(keptPerCode) are)"), frame: s.firstFrame)
        }
    }
}
