import BLEAnalysis
import BLECore

/// What `blescope convert --annotate` writes into the pcapng beside the packets: each finding of the diagnosis as a
/// comment on its deciding frame (`DC-01 critical: one sentence`, Wireshark's `frame.comment`), and a summary of the
/// findings as the section's comment.
public struct CaptureAnnotations: Sendable {
    /// Comments by frame number (1-based, Wireshark's), in the order the findings rank.
    public var packetComments: [Int: [String]]
    /// The Section Header Block's comment.
    public var sectionComment: String

    /// No comment at all (a plain conversion to pcapng).
    public static let none = CaptureAnnotations(packetComments: [:], sectionComment: "")

    public init(packetComments: [Int: [String]], sectionComment: String) {
        self.packetComments = packetComments
        self.sectionComment = sectionComment
    }

    /// Annotations of one diagnosis. `story` is a few sentences that tell what happened in the capture, placed first in
    /// the section comment (``sectionComment(file:result:completeness:story:)``); by default the diagnosis's own story.
    public init(_ report: DiagnosisReport, story: [String]? = nil) {
        let story = story ?? report.result.story.sentences.map(\.text)
        var comments: [Int: [String]] = [:]
        for d in report.result.findings {
            for (k, frame) in d.occurrences.enumerated() where frame > 0 {
                comments[frame, default: []].append(Self.comment(d, occurrence: k))
            }
        }
        packetComments = comments
        sectionComment = Self.sectionComment(
            file: report.file, result: report.result, completeness: report.completeness?.headline, story: story)
    }

    /// `RULE severity: sentence` for the first occurrence of a finding; the following ones (folded repeats) carry the
    /// short form and which occurrence they are: `DC-02 warning: ended by the peer … (2 of 5, first at frame 310)`.
    public static func comment(_ d: Diagnosis, occurrence: Int) -> String {
        let head = "\(d.rule) \(d.severity.rawValue): "
        guard occurrence > 0 else { return head + d.message }
        return head + d.headline + " (\(occurrence + 1) of \(d.count), first at frame \(d.frame))"
    }

    /// The section comment: the story's lines first (when there are any), then the tally, what the log cannot show,
    /// and one line per finding with its deciding frame. `story` is the hook for a diagnosis that tells its story: pass
    /// its lines and they head the comment Wireshark shows for the file (Statistics ▸ Capture File Properties).
    public static func sectionComment(file: String, result: DiagnosisResult, completeness: String?, story: [String]) -> String {
        var lines = story
        if !story.isEmpty { lines.append("") }
        let name = file.split(separator: "/").last.map(String.init) ?? file
        let tally = result.tally.isEmpty ? "nothing wrong found" : result.tally
        lines.append("blescope diagnose \(name): \(tally) (\(result.rulesEvaluated) rules)")
        if let completeness { lines.append("Log: \(completeness)") }
        if !result.findings.isEmpty {
            lines.append("Findings (each also a comment on its frame; Wireshark filter: frame.comment):")
        }
        for d in result.findings {
            let at = d.frame > 0 ? "frame \(d.frame)" : "whole capture"
            lines.append("\(at): \(d.rule) \(d.severity.rawValue): \(DiagnosisReport.summaryLine(d))")
        }
        return lines.joined(separator: "\n")
    }
}
