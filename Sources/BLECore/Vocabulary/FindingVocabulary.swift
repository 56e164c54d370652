/// Every finding code the decoder and the analysis report, one list per layer (each declared once in this folder,
/// one file per layer, the list beside its declarations). The diagnosis rules' codes are declared in each rule's file
/// and registered by its row in `DiagnosisRules.all`; `FindingVocabulary.all` in BLEAnalysis holds both.
///
/// Adding a decoder finding: one `static let` in its layer's file here and one entry in that file's list; the
/// decoder names it by symbol (`FindingKind(.l2capFrameTooLong, message: …)`). `VocabularyTests` checks that every
/// code declared is listed, and that ids are unique.
public enum FindingVocabulary {
    /// The decoder's and the analysis's codes (not the diagnosis rules'), layer by layer.
    public static let decoder: [FindingCode] = core + capture + hci + linkLayer + l2cap + att + audio + application + limits
}
