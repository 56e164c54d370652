import BLECore

extension DiagnosisRules {
    /// The codes of the security and link-layer compliance rules (their groups in ``all``): what the Security: line,
    /// the report's Security section and the `security` fleet table show.
    static let securityCodes: Set<FindingCode> = Set(all.filter { $0.group == .security || $0.group == .linkLayer }.map { $0.code })
}

extension Diagnosis {
    /// A finding of a security or link-layer compliance rule (SEC-, LL-).
    public var isSecurity: Bool { DiagnosisRules.securityCodes.contains(code) }
}
