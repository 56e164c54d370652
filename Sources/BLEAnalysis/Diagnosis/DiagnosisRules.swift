/// Every diagnosis rule, in the order of their table (`DiagnosisRuleTable.swift` in BLEDiagnosis, where the rules
/// live; its comment says how to add one).
public enum DiagnosisRules {
    public static let all: [any DiagnosisRule.Type] = diagnosisRules()

    /// The rule with this id (`DC-01`).
    public static func rule(_ id: String) -> (any DiagnosisRule.Type)? { all.first { $0.id == id } }
}

/// The rule table, defined in BLEDiagnosis (`DiagnosisRuleTable.swift`) and bound by the linker: BLEAnalysis and
/// BLEReports do not import the module of the rules, so that it compiles beside BLEReports instead of before it
/// (docs/performance.md#build-time). Every program and test bundle that links BLEAnalysis links BLEDiagnosis too.
@_silgen_name("blescope_diagnosisRules")
func diagnosisRules() -> [any DiagnosisRule.Type]
