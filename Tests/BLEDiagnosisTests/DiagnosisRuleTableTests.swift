import BLEAnalysis
import BLETestSupport
import Foundation
import Testing

@testable import BLEDiagnosis

/// The rule table against the catalogue (`shared/diagnosis-rules.md` §3, which the repository does not hold: its 52 ids
/// and severities are listed here) and against the sources: one file per rule, in its group's folder, named after its
/// type.
@Suite struct DiagnosisRuleTableTests {
    /// The catalogue's 52 rules with their severity letter (C critical, E error, W warning, I info; GATT-08 is "E/I":
    /// an error that reports lower for reads refused, as a rule may).
    static let catalogue: [(id: String, severity: String)] = [
        ("CQ-01", "I"), ("CQ-02", "W"), ("CQ-03", "W"), ("CQ-04", "W"), ("CQ-05", "W"),
        ("CE-01", "C"), ("CE-02", "C"), ("CE-03", "E"), ("CE-04", "E"), ("CE-05", "W"),
        ("DC-01", "C"), ("DC-02", "E"), ("DC-03", "W"), ("DC-04", "C"), ("DC-05", "C"), ("DC-06", "E"), ("DC-07", "C"),
        ("DC-08", "E"), ("DC-09", "W"),
        ("SEC-01", "C"), ("SEC-02", "C"), ("SEC-03", "C"), ("SEC-04", "E"), ("SEC-05", "E"), ("SEC-06", "E"), ("SEC-07", "W"),
        ("GATT-01", "C"), ("GATT-02", "W"), ("GATT-03", "E"), ("GATT-04", "E"), ("GATT-05", "W"), ("GATT-06", "E"),
        ("GATT-07", "W"), ("GATT-08", "E"),
        ("TP-01", "E"), ("TP-02", "E"), ("TP-03", "W"), ("TP-04", "I"), ("TP-05", "E"),
        ("LP-01", "W"), ("LP-02", "W"), ("LP-03", "I"), ("LP-04", "E"), ("LP-05", "W"), ("LP-06", "W"),
        ("HH-01", "C"), ("HH-02", "C"), ("HH-03", "E"), ("HH-04", "W"), ("HH-05", "E"), ("HH-06", "W"), ("HH-07", "I"),
    ]

    /// The LE Audio rules after the catalogue's (issue 28, "as diagnosis rules": setup failures and a stream that stops
    /// or loses its broadcast sync are errors; a refusal, loss and a choppy report are warnings).
    static let leAudio: [(id: String, severity: String)] = [
        ("LA-01", "E"), ("LA-02", "W"), ("LA-03", "W"), ("LA-04", "E"), ("LA-05", "E"), ("LA-06", "W"),
    ]

    /// The BR/EDR rules (issue 35 point 2): a pairing, a bond or encryption lost are errors; pages and connections that
    /// fail are warnings; a role switch or sniff refused is a warning only when a link loss follows (info otherwise).
    /// Then BR/EDR audio (issue 46), by what the user lost: a call without audio (BR-09) is critical; an A2DP setup
    /// refused with no stream after it (BR-08) and a hands-free connection that never came up (BR-10) fail silently:
    /// errors; a stall, a narrowband fallback, a renegotiation loop degrade the audio: warnings. A profile's channel
    /// refused with none to its PSM after it (BR-13) leaves the profile down: an error.
    static let classic: [(id: String, severity: String)] = [
        ("BR-01", "W"), ("BR-02", "W"), ("BR-03", "E"), ("BR-04", "E"), ("BR-05", "E"), ("BR-06", "W"),
        ("BR-07", "W"), ("BR-08", "E"), ("BR-09", "C"), ("BR-10", "E"), ("BR-11", "W"), ("BR-12", "W"), ("BR-13", "E"),
    ]

    /// The air-capture rules after them: an air link that ended with no terminate in the capture (an error when the capture
    /// shows the peripheral out of the link; lower when it cannot tell).
    static let air: [(id: String, severity: String)] = [("DC-10", "E")]

    /// The per-link security rules after SEC-07 (issue 45): a key under 7 bytes, a downgrade, a debug key, a key for
    /// several peers, encryption before the DHKey checks, a key size out of range and a public key off the curve are errors (each rule reports
    /// lower where the risk is less: a 7–15-byte key is a warning); an all-zero IRK (no privacy) is info; the rest are warnings.
    static let securityRecord: [(id: String, severity: String)] = [
        ("SEC-08", "E"), ("SEC-09", "E"), ("SEC-10", "W"), ("SEC-11", "E"), ("SEC-12", "W"), ("SEC-13", "W"), ("SEC-14", "E"),
        ("SEC-15", "W"), ("SEC-16", "W"), ("SEC-17", "E"), ("SEC-18", "E"), ("SEC-19", "E"), ("SEC-20", "I"), ("SEC-21", "E"),
        ("SEC-22", "W"),
    ]

    /// The link-layer compliance rules last (issue 45 point 3; air captures).
    static let linkLayer: [(id: String, severity: String)] = [
        ("LL-01", "W"), ("LL-02", "E"), ("LL-03", "W"), ("LL-04", "E"), ("LL-05", "E"), ("LL-06", "E"),
    ]

    static var table: [(id: String, severity: String)] {
        let sec07 = catalogue.firstIndex { $0.id == "SEC-07" }! + 1
        return Array(catalogue[..<sec07]) + securityRecord + Array(catalogue[sec07...]) + leAudio + classic + air + linkLayer + scenarios
    }

    /// The scenarios last (issue 48 scope 6): what the capture as a whole is the scene of, as context.
    static let scenarios: [(id: String, severity: String)] = [("SC-01", "I"), ("SC-02", "I")]

    /// Each group: its folder under `Rules/` and the id prefix of its rules.
    static let groups: [RuleGroup: (folder: String, prefix: String)] = [
        .captureQuality: ("CaptureQuality", "CQ"), .establishment: ("Establishment", "CE"), .disconnection: ("Disconnection", "DC"),
        .security: ("Security", "SEC"), .gatt: ("GATT", "GATT"), .throughput: ("Throughput", "TP"),
        .linkParameters: ("LinkParameters", "LP"), .controller: ("Controller", "HH"), .leAudio: ("LEAudio", "LA"),
        .classic: ("Classic", "BR"), .linkLayer: ("LinkLayer", "LL"), .scenario: ("Scenario", "SC"),
    ]

    /// The rules' module, and BLEAnalysis for the three the engine and the completeness verdict read (CQ-04's wording,
    /// the scenarios SC-01 and SC-02, recognised before the rules run).
    static let rulesDirectories = ["/Sources/BLEDiagnosis/Rules", "/Sources/BLEAnalysis/Diagnosis/Rules"].map {
        TestEnvironment.repositoryRoot + $0
    }

    @Test func theTableHoldsTheCataloguesRulesThenTheLEAudioRulesInOrder() {
        let ids: [String] = DiagnosisRules.all.map { $0.id }
        #expect(Self.catalogue.count == 52)
        #expect(ids == Self.table.map { $0.id })
    }

    @Test func everyRuleReportsAtTheCataloguesSeverity() {
        let letters: [DiagnosisSeverity: String] = [.critical: "C", .error: "E", .warning: "W", .info: "I"]
        let wanted = Dictionary(uniqueKeysWithValues: Self.table.map { ($0.id, $0.severity) })
        for rule in DiagnosisRules.all {
            let (id, severity) = (rule.id, rule.severity)
            #expect(letters[severity] == wanted[id], "\(id) is \(severity)")
        }
    }

    @Test func idsAreUniqueAndWellFormed() throws {
        let ids: [String] = DiagnosisRules.all.map { $0.id }
        #expect(Set(ids).count == ids.count)
        let pattern = try Regex("^[A-Z]+-[0-9][0-9]$")
        for id in ids { #expect(id.wholeMatch(of: pattern) != nil, "\(id)") }
        for rule in DiagnosisRules.all {
            let found = DiagnosisRules.rule(rule.id).map { String(describing: $0) }
            #expect(found == String(describing: rule))
        }
    }

    @Test func everyRuleSaysWhatItFindsOnWhatEvidenceAndWhoElseNamesIt() {
        for rule in DiagnosisRules.all {
            let id = rule.id
            for (field, text) in [("title", rule.title), ("evidence", rule.evidence), ("anchor", rule.anchor)] {
                #expect(!text.trimmingCharacters(in: .whitespaces).isEmpty, "\(id) has no \(field)")
            }
        }
    }

    @Test func everyRuleLivesInItsGroupsFolderInAFileNamedAfterItsType() {
        for rule in DiagnosisRules.all {
            let (type, id, ruleGroup) = (String(describing: rule), rule.id, rule.group)
            let group = Self.groups[ruleGroup]!
            #expect(id.hasPrefix(group.prefix + "-"), "\(id) is in group \(ruleGroup.rawValue)")
            // CQ01StartedMidConnection: the id without its dash, then what it finds.
            #expect(type.hasPrefix(id.replacingOccurrences(of: "-", with: "")), "\(type) for \(id)")
            let paths = Self.rulesDirectories.map { "\($0)/\(group.folder)/\(type).swift" }
            #expect(paths.filter { FileManager.default.fileExists(atPath: $0) }.count == 1, "\(paths) missing")
        }
    }

    @Test func everyFileUnderRulesIsARowOfTheTable() throws {
        let registered = Set(
            DiagnosisRules.all.map { rule -> String in
                let folder = Self.groups[rule.group]!.folder
                return "\(folder)/\(String(describing: rule)).swift"
            })
        var files: [String] = []
        var folders: Set<String> = []
        for directory in Self.rulesDirectories {
            for folder in try FileManager.default.contentsOfDirectory(atPath: directory) {
                folders.insert(folder)
                let names = (try? FileManager.default.contentsOfDirectory(atPath: directory + "/" + folder)) ?? []
                files += names.filter { $0.hasSuffix(".swift") }.map { "\(folder)/\($0)" }
            }
        }
        #expect(files.count == registered.count)
        #expect(Set(files) == registered)
        #expect(Set(Self.groups.values.map(\.folder)) == folders)
    }
}
