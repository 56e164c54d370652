import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let createRefused = FindingCode(
        "CE-03", layer: .link, severity: .error,
        title: "The controller refused to start a connection",
        explain: .init(
            meaning:
                "The controller refused the command that starts a connection (busy with another attempt, bad parameters, or too many links). Refused while an attempt it accepted is still pending, the pending attempt goes on: info, or a warning when the refused one was for another device.",
            advice: "Read the status code: serialize connection attempts and check the parameters the app passes."),
        fold: .value)
}

/// CE-03: the controller refused to start a connection: Command Status ≠ 0 for LE (Extended) Create Connection. The
/// severity follows what was lost: when an attempt the controller accepted was still pending (no LE Connection Complete
/// since its Command Status), 0x0C Command Disallowed is the answer the spec prescribes to a second one (Core Spec Vol 4,
/// Part E, 7.8.12: a Create Connection issued while another is pending in the controller is answered Command
/// Disallowed) and the pending attempt goes on: info
/// when it goes to the same device or through the filter accept list (macOS bluetoothd's background connect), warning
/// when the refused one was for another device (that connection waits for the host to try again). A refusal with
/// nothing pending is an attempt that never started: error.
struct CE03CreateRefused: DiagnosisRule {
    static let code = FindingCode.createRefused
    static let group = RuleGroup.establishment
    static let evidence =
        "Command Status ≠ 0 for LE Create Connection (0x200D) or LE Extended Create Connection (0x2043, 0x2085); 0x0C while an accepted attempt is pending: info (same device or accept list) or warning (another device)"
    static let anchor = "hcidoc (\"Failing command status\", \"Dangling LE connection attempt\")"
    static let opcodes = HCICommand.leConnectionCreates

    /// An attempt the controller accepted (no refusal answers its command) and no LE Connection Complete has ended yet.
    struct Pending {
        var frame: Int
        var peer: String?
    }

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        let refusedCommands = Set(
            e.events.compactMap { ev -> Int? in
                guard case .commandFailed(let op, _, let commandFrame) = ev.kind, opcodes.contains(op) else { return nil }
                return commandFrame
            })
        var pending: [UInt16: Pending] = [:]
        var peers: [Int: String?] = [:]
        var out: [Diagnosis] = []
        for ev in e.events {
            switch ev.kind {
            case .createConnection(_, let peer):
                peers[ev.frame] = peer
                if !refusedCommands.contains(ev.frame) { pending[ev.controller] = Pending(frame: ev.frame, peer: peer) }
            case .connectionComplete:
                pending[ev.controller] = nil
            case .commandFailed(let opcode, let status, let commandFrame) where opcodes.contains(opcode):
                let peer = commandFrame.flatMap { peers[$0] } ?? nil
                let earlier = status == .commandDisallowed ? pending[ev.controller] : nil
                out.append(refusal(ev, opcode, status, commandFrame, peer: peer, pending: earlier))
            default:
                continue
            }
        }
        return out
    }

    static func refusal(
        _ ev: EvidenceEvent, _ opcode: HCICommand, _ status: HCIStatus, _ commandFrame: Int?, peer: String?, pending: Pending?
    ) -> Diagnosis {
        let why: String =
            switch status {
            case .commandDisallowed: "another connection attempt was already pending, or scanning/advertising conflicted"
            case .memoryCapacityExceeded, .connectionLimitExceeded: "the controller is out of connection resources"
            case .invalidCommandParameters: "the parameters are invalid (e.g. the supervision-timeout rule is broken)"
            case .unsupportedFeatureOrParameter: "a PHY it does not support was asked for"
            default: "see the status"
            }
        let to = peer.map { " to \($0)" } ?? ""
        var supporting = commandFrame.map { [CitedFrame($0, "\(opcode)")] } ?? []
        guard let pending else {
            return Diagnosis(
                rule: Self.code, severity: .error, frame: ev.frame,
                message: "The controller refused to start the connection\(to) (\(codeName(status)) at frame \(ev.frame)): \(why).",
                headline: "the controller refused to start a connection (\(hex(status.rawValue)))", supporting: supporting,
                causes: ["a host bug (parallel connection attempts)", "the connection limit reached", "invalid parameters"], device: peer,
                fold: "\(status.rawValue)")
        }
        // Nothing lost when the pending attempt reaches the same device, or either goes through the accept list.
        let same = pending.peer == nil || peer == nil || pending.peer == peer
        let target = pending.peer.map { "to \($0)" } ?? "through the filter accept list"
        supporting.insert(CitedFrame(pending.frame, "the attempt still pending"), at: 0)
        return Diagnosis(
            rule: Self.code, severity: same ? .info : .warning, frame: ev.frame,
            message:
                "The controller refused a second connection attempt\(to) (\(codeName(status)) at frame \(ev.frame)) while the one of frame \(pending.frame) \(target) was pending, as the spec prescribes (Core Spec Vol 4, Part E, 7.8.12); "
                + (same
                    ? "that attempt went on: nothing was lost."
                    : "that attempt went on, and the connection\(to) waits until the host asks again."),
            headline: "a second connection attempt refused while one was pending (\(hex(status.rawValue)))", supporting: supporting,
            causes: same
                ? ["the host asked again while its attempt was pending (macOS bluetoothd's background connect does)"]
                : ["the host did not queue its connection attempts"],
            device: peer, fold: "\(status.rawValue) pending \(same)")
    }
}
