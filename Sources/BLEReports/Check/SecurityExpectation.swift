import BLEAnalysis
import BLECore

/// `security: {min_key_size: 16, methods: [Numeric Comparison, Passkey Entry], no_debug_keys: true, no_legacy_pairing:
/// true}`: how every link of the capture must be secured (docs/ci-checks.md, docs/security.md). Each field is checked
/// against every link's security record (``LinkSecurity``); a key size or a pairing method the log does not show fails
/// the check, saying so ("not in the log"), rather than passing unseen.
public struct SecurityExpectation: Hashable, Sendable {
    /// Every encrypted session's key size in force at least this (7–16).
    public var minKeySize: Int?
    /// Every pairing's association model among these (`Just Works`, `Numeric Comparison`, `Passkey Entry`, `OOB`, `PIN`).
    public var methods: [String]?
    public var noDebugKeys: Bool
    /// No LE legacy pairing and no BR/EDR PIN pairing.
    public var noLegacyPairing: Bool

    public var title: String {
        var parts: [String] = []
        if let k = minKeySize { parts.append("key size ≥ \(k)") }
        if let m = methods { parts.append("pairing by \(m.joined(separator: " or "))") }
        if noDebugKeys { parts.append("no debug keys") }
        if noLegacyPairing { parts.append("no legacy pairing") }
        return "security: " + (parts.isEmpty ? "(nothing asked)" : parts.joined(separator: ", "))
    }
}

/// The expectation file's `security` kind.
struct SecurityKind: ExpectationKind {
    static let kind = "security"
    static let shape = "{min_key_size, methods, no_debug_keys, no_legacy_pairing}"
    static let bare: Expectation? = nil
    var expectation: Expectation

    enum CodingKeys: String, CodingKey, CaseIterable {
        case minKeySize = "min_key_size", methods, noDebugKeys = "no_debug_keys", noLegacyPairing = "no_legacy_pairing"
    }

    static let models = ["Just Works", "Numeric Comparison", "Passkey Entry", "OOB", "PIN"]

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self, kind: Self.kind)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let size = try c.decodeIfPresent(Int.self, forKey: .minKeySize)
        if let size, !(7...16).contains(size) {
            throw ExpectationProblem(path: c.codingPath + [CodingKeys.minKeySize], message: "\(size) is not a key size (7–16 bytes)")
        }
        var methods: [String]? = nil
        if let names = try c.decodeIfPresent([String].self, forKey: .methods) {
            methods = try names.map { name in
                guard let m = Self.models.first(where: { $0.lowercased() == name.lowercased() }) else {
                    throw ExpectationProblem(
                        path: c.codingPath + [CodingKeys.methods],
                        message: "unknown method '\(name)' (\(Self.models.joined(separator: ", ")))")
                }
                return m
            }
        }
        expectation = .security(
            SecurityExpectation(
                minKeySize: size, methods: methods, noDebugKeys: try c.decodeIfPresent(Bool.self, forKey: .noDebugKeys) ?? false,
                noLegacyPairing: try c.decodeIfPresent(Bool.self, forKey: .noLegacyPairing) ?? false))
    }
}

extension CheckFacts {
    /// The first link that breaks `s`, or a pass naming what was checked.
    func security(_ e: Expectation, _ s: SecurityExpectation) -> ExpectationResult {
        var checked = 0
        for c in connections {
            let r = c.machine.securityRecord
            for p in r.pairings {
                checked += 1
                if s.noDebugKeys, let f = p.debugKeyFrame {
                    return fail(e, "link #\(c.number) paired with a debug key (frame \(f))", f, c)
                }
                if s.noLegacyPairing, let procedure = p.procedure, procedure == .leLegacy || procedure == .legacyPIN {
                    return fail(e, "link #\(c.number): \(procedure.rawValue) pairing at frame \(p.frame)", p.frame, c)
                }
                if let allowed = s.methods {
                    guard let model = p.model else {
                        return fail(e, "link #\(c.number): the method of the pairing at frame \(p.frame) is not in the log", p.frame, c)
                    }
                    if !allowed.contains(model.rawValue) {
                        return fail(e, "link #\(c.number): \(p.methodText) at frame \(p.frame)", p.frame, c)
                    }
                }
            }
            guard let min = s.minKeySize else { continue }
            for session in r.sessions where session.onFrame != nil {
                checked += 1
                let frame = session.keySizeSource?.frame ?? session.onFrame!
                guard let size = session.keySize else {
                    return fail(
                        e, "link #\(c.number): encrypted at frame \(session.onFrame!), its key size not in the log", session.onFrame!, c)
                }
                if size < min {
                    return fail(e, "link #\(c.number): \(size)-byte key (\(session.keySizeSource?.description ?? ""))", frame, c)
                }
            }
        }
        return ExpectationResult(
            expectation: e, file: "", passed: true,
            detail: checked == 0 ? "no pairing or encryption in the capture" : "\(checked) pairing(s) and session(s) checked", frame: nil)
    }

    private func fail(_ e: Expectation, _ detail: String, _ frame: Int, _ c: Connection) -> ExpectationResult {
        ExpectationResult(expectation: e, file: "", passed: false, detail: detail, frame: frame, connection: c.number)
    }
}
