import BLEAnalysis
import BLECore

/// What `diff` compares of two links' security records (``LinkSecurity``): whether and how they encrypted, the key
/// sizes in force, and the BR/EDR pairing method (the LE one is `pairing-method`, from the feature exchange). A change
/// of any is major (``DiffLink/majorKeys``), unless a side's key size is not in the log.
extension DiffLink {
    static func securityAsks(on c: Connection) -> [String: (value: String, frame: Int)] {
        var out: [String: (value: String, frame: Int)] = [:]
        let r = c.machine.securityRecord
        let on = r.sessions.filter { $0.onFrame != nil }
        if let first = on.first {
            let algorithms = Set(on.compactMap { $0.algorithm(isLE: c.isLE) }).sorted()
            out["encryption"] = ("on" + (algorithms.isEmpty ? "" : " (\(algorithms.joined(separator: ", ")))"), first.onFrame!)
            let sizes = on.map { s in s.keySize.map { "\($0) bytes" + sourceNote(s.keySizeSource ?? .assumed) } ?? "not in the log" }
            var seen: [String] = []
            for s in sizes where !seen.contains(s) { seen.append(s) }
            out["key-size"] = (seen.joined(separator: "; "), on.first { $0.keySize != nil }?.keySizeSource?.frame ?? first.onFrame!)
        } else if !c.inferred {
            out["encryption"] = ("off", c.startFrame)
        }
        if !c.isLE {
            let methods = r.pairings.compactMap { p -> String? in
                guard let procedure = p.procedure else { return nil }
                return procedure.rawValue + (p.model.map { ", \($0.rawValue)" } ?? "") + (p.linkKeyType.map { ", \($0)" } ?? "")
            }
            if let frame = r.pairings.first?.frame, !methods.isEmpty { out["pairing-method"] = (methods.joined(separator: "; "), frame) }
        }
        return out
    }

    /// Keys whose change is major: how the link was paired and encrypted.
    static let majorKeys: Set<String> = ["pairing", "pairing-method", "key-size", "encryption"]

    /// A key size the log does not show on one side is no change of key size.
    static func securityImpact(_ key: String, _ a: String?, _ b: String?) -> DiffImpact? {
        guard key == "key-size" else { return nil }
        if a == nil || b == nil || a!.contains("not in the log") || b!.contains("not in the log") { return .info }
        return nil
    }
}
