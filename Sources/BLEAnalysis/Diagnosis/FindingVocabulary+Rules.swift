import BLECore

/// What a rule's finding means and what to do about it: its code's explanation. `blescope diagnose --explain RULE`
/// prints it with the rule's table row, and `docs/diagnosis.md` has one section per rule made from it.
public typealias RuleExplanation = FindingExplanation

extension DiagnosisRules {
    /// The explanation of the rule `id`, declared with its code in the rule's file.
    public static func explanation(_ id: String) -> RuleExplanation? { rule(id)?.code.explanation }
}

extension FindingVocabulary {
    /// Every registered code: the decoder's and the analysis's (``decoder``), then the diagnosis rules' (one per row
    /// of ``DiagnosisRules/all``). Ids are unique across both (`VocabularyTests`).
    public static let all: [FindingCode] = decoder + DiagnosisRules.all.map { $0.code }

    /// The code with this id (`ll.malformed`, `DC-01`).
    public static func code(_ id: String) -> FindingCode? { all.first { $0.id == id } }
}
