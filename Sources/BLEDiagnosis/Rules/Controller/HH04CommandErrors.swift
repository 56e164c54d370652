import BLEAnalysis
import BLECore
import BLEProtocols

extension FindingCode {
    static let commandErrors = FindingCode(
        "HH-04", layer: .hci, severity: .warning,
        title: "Commands refused by the controller",
        explain: .init(
            meaning: "The controller refused HCI commands (the finding groups them by command and status).",
            advice: "Read the status codes: a command not allowed in that state, unknown to the controller, or with bad parameters."),
        fold: .value)
}

/// HH-04: commands the controller refused, grouped by command and status, except those another rule explains (creating
/// connections, PHY, remote features, link-layer procedures) and a cancel with nothing to cancel.
struct HH04CommandErrors: DiagnosisRule {
    static let code = FindingCode.commandErrors
    static let group = RuleGroup.controller
    static let evidence =
        "Command Complete or Command Status with status ≠ 0, by command (0x0C disallowed, 0x01 unknown, 0x12 invalid parameters, 0x07 memory, 0x09 limit, 0x0D, 0x3A busy, 0x11); info for probes, vendor commands, a question about a resolvable address refused 0x0C (7.8.42/43), the platform table's initialisation probes and link tuning, and refusals the controller's state explains (scan parameters while scanning, prescribed; scanning turned off while off, or on while on; a new address for an enabled advertising set, a random address while scanning or advertising; periodic advertising turned off while off; a name request's cancel after it completed; an inquiry, page or name request while the controller pages for an earlier one; a page refused while the device connects to this side; on Android, an enabled set's address rotation); info for a link-policy command (OGF 0x02) naming an LE link, Change Connection Packet Type refused 0x1A, Write Default Link Policy Settings refused, Create Connection refused 0x0B when the link to the peer comes up within 2 s (a page collision), and Disconnect refused when the link ends within 2 s anyway"
    static let anchor = "hcidoc (Classic collisions and connection commands only)"
    /// Whether another rule names this refusal: creating a connection (CE-03), changing the PHY (LP-04), reading the
    /// remote features (CE-05), a parameter or length procedure the peer does not support (LP-05, 0x1A/0x11 only: LE
    /// Connection Update refused with 0x0C Command Disallowed is this rule's), a BR/EDR role switch or sniff request
    /// (BR-06).
    static func explained(_ op: HCICommand, _ status: HCIStatus) -> Bool {
        if CE03CreateRefused.opcodes.contains(op) || op == .leSetPHY || op == .leReadRemoteFeatures { return true }
        if BR06RoleOrSniffRefused.opcodes[op.rawValue] != nil { return true }
        return LP05ProcedureUnsupported.procedures.contains(op)
            && (status == .unsupportedRemoteFeature || status == .unsupportedFeatureOrParameter)
    }

    /// A command the stack sends to learn what the controller supports: the informational parameters (OGF 0x04: a
    /// feature page the controller does not have is refused with 0x12 or 0x30) and the event masks (an event the
    /// controller does not know is refused; it keeps reporting the ones it has). Refused, nothing is lost.
    static func isCapabilityProbe(_ op: HCICommand) -> Bool {
        op.ogf == 0x04 || op == .setEventMask || op == .leSetEventMask || op == .setEventMaskPage2
    }

    /// The row of the log's platform (``PlatformTable``) that lists `op` among the commands its stack sends while it
    /// probes or initialises the controller (BTstack's Write Synchronous Flow Control Enable, Android's LE Get Vendor
    /// Capabilities…): refused, the stack goes on without the feature.
    static func platformProbe(_ op: HCICommand, _ e: Evidence) -> PlatformFact? {
        e.platform?.seen.flatMap { PlatformTable.listing(op, .initialisationProbe, for: $0) }
    }

    /// The row of the log's platform (``PlatformTable``) that lists `op` among the commands its stack tunes a link with
    /// and goes on without (Android's Write Link Supervision Timeout): refused, the controller's value stays in force.
    static func platformTuning(_ op: HCICommand, _ e: Evidence) -> PlatformFact? {
        e.platform?.seen.flatMap { PlatformTable.listing(op, .linkTuning, for: $0) }
    }

    /// The answer the spec prescribes for a question about a peer the controller does not hold: LE Read Peer or Local
    /// Resolvable Address for an identity not in the resolving list is answered Unknown Connection Identifier (Core
    /// Spec Vol 4, Part E, 7.8.42 and 7.8.43).
    static func prescribed(_ op: HCICommand, _ status: HCIStatus) -> Bool {
        (op == .leReadPeerResolvableAddress || op == .leReadLocalResolvableAddress) && status == .unknownConnectionIdentifier
    }

    static let prescribedCause =
        "the peer is not in the controller's resolving list: the answer the spec prescribes (Core Spec Vol 4, Part E, 7.8.42)"

    /// The same questions refused otherwise (Command Disallowed while the controller's address resolution is off: the
    /// Ph0wn Nespresso log's Galaxy S7 edge asks at 1937, right after reconnecting, and encrypts from its bond 10 ms
    /// later): a read that changes nothing; refused, the host learns no address and goes on (7.8.42, 7.8.43).
    static func unansweredQuery(_ op: HCICommand, _ status: HCIStatus) -> Bool {
        (op == .leReadPeerResolvableAddress || op == .leReadLocalResolvableAddress) && status == .commandDisallowed
    }

    static let unansweredQueryCause =
        "a question about the resolvable address in use, refused (address resolution off, or no address resolved yet): the host learns no address and goes on; nothing on the link depends on it"

    /// A refusal the spec's own division of the link types explains: a Link Policy command (OGF 0x02: sniff, hold,
    /// role switch, link policy) naming an LE link, which has none of them (Core Spec Vol 4, Part E, 7.2), refused as
    /// the controller must (Android sends Write Link Policy Settings for each new LE handle: the pumpX2 Galaxy S20 FE
    /// log, 171/172, 0x02). Nothing on the LE link depends on it.
    static func linkPolicyOnLE(_ op: HCICommand, _ ev: EvidenceEvent, _ e: Evidence) -> Bool {
        guard op.ogf == 0x02, let n = ev.connection else { return false }
        return e.connections.first { $0.number == n }?.isLE ?? false
    }

    static let linkPolicyOnLECause =
        "a BR/EDR link-policy command sent for an LE link: LE has no sniff, hold or role switch (Core Spec Vol 4, Part E, 7.2), so the controller refuses it and nothing on the link depends on it"

    /// The BR/EDR tunings refused with nothing lost at the moment: the packet types the peer does not support (0x1A:
    /// the link keeps those in force, Vol 4, Part E, 7.1.14; the blueprobe moto g04s log at 772), and the default link
    /// policy for links to come (7.2.12: each link starts with the controller's default, which a host may set per link
    /// with Write Link Policy Settings, 7.2.10; the same log refuses the default at 58 and sets a link's own at 2043).
    static func tuningWithoutLoss(_ op: HCICommand, _ status: HCIStatus) -> String? {
        if op == .changeConnectionPacketType && status == .unsupportedRemoteFeature {
            return "the peer does not support the packet types asked for: the link keeps the ones in force"
        }
        if op == .writeDefaultLinkPolicySettings {
            return
                "new links start with the controller's own default policy; the host can still set each link's (Write Link Policy Settings): only a link left at the default would miss sniff or role switch"
        }
        return nil
    }

    /// The successful BR/EDR Connection Complete within 2 s of a refused Accept Connection Request.
    static func acceptedAnyway(_ ev: EvidenceEvent, _ e: Evidence) -> CitedFrame? {
        let near = e.events.first { x in
            guard case .classicConnectionComplete(_, .success, _, _) = x.kind else { return false }
            let dt = x.timestamp.microseconds(since: ev.timestamp)
            return dt > -2_000_000 && dt < 2_000_000
        }
        return near.map { CitedFrame($0.frame, "Connection Complete: success") }
    }

    /// The link's Disconnection Complete within 2 s after its Disconnect was refused: the link was ending already (the
    /// blueprobe Echo Auto log: Disconnect refused 0x12 at 22345, the Echo's 0x13 at 22346, 0.14 s later).
    static func endedAnyway(_ ev: EvidenceEvent, _ e: Evidence) -> CitedFrame? {
        guard let n = ev.connection else { return nil }
        let end = e.events.first { x in
            guard x.connection == n, x.frame > ev.frame, case .disconnectionComplete(_, .success, _) = x.kind else { return false }
            return x.timestamp.microseconds(since: ev.timestamp) < 2_000_000
        }
        guard let end, case .disconnectionComplete(_, _, let reason) = end.kind else { return nil }
        return CitedFrame(end.frame, "Disconnection Complete, reason \(codeName(reason))")
    }

    /// What a refusal's status says of the command.
    static func meaning(_ status: HCIStatus) -> String? {
        switch status {
        case .commandDisallowed: "not allowed in the controller's current state"
        case .unknownCommand: "the controller does not know the command"
        case .invalidCommandParameters: "its parameters are invalid"
        case .memoryCapacityExceeded: "the controller's table is full (filter accept list or resolving list)"
        case .connectionLimitExceeded: "the connection limit is reached"
        case .connectionRejectedLimitedResources, .controllerBusy: "the controller is busy or out of resources"
        case .unsupportedFeatureOrParameter: "unsupported"
        default: nil
        }
    }

    static let crossedCause =
        "the link was ending already: the peer (or the link) closed it at the same moment, so there was nothing left to disconnect"

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        let byState = stateRefusals(e).merging(advertisingRefusals(e)) { scan, _ in scan }.merging(pageRefusals(e)) { state, _ in state }
        return e.events.compactMap { ev in
            guard case .commandFailed(let op, let status, let commandFrame) = ev.kind, !explained(op, status) else { return nil }
            // Cancelling a connection attempt that has just completed: a race every stack has, harmless.
            if op == .leCreateConnectionCancel && status == .commandDisallowed { return nil }
            let meaning = Self.meaning(status)
            // A command the controller does not know or support (a vendor command above all): the stack probing the
            // controller's capabilities, not a fault (issue 35 point 4: severity from impact).
            let probe = Self.platformProbe(op, e)
            // A refusal the controller's state prescribes or explains (scan parameters while scanning…): the answer.
            let state = byState[ev.frame]
            let probing =
                status == .unknownCommand || (op.isVendor && status == .unsupportedFeatureOrParameter) || Self.isCapabilityProbe(op)
                || probe != nil || Self.prescribed(op, status) || Self.unansweredQuery(op, status) || state != nil
            // A vendor command refused otherwise (Android's LE advertising filter, …): a feature the vendor defines; the
            // host goes on without it, and no link state depends on it.
            let vendor = !probing && op.isVendor
            // An Accept Connection Request refused as disallowed while the connection it accepts completes: the host
            // accepted twice (macOS does), the first one did its work.
            let accepted = op == .acceptConnectionRequest && status == .commandDisallowed ? acceptedAnyway(ev, e) : nil
            // A page refused because a link to the peer is being made, which then completes: the two sides paged each
            // other at once (the blueprobe midlog: Create Connection refused 0x0B at 6065, the buds' Connection Request
            // at 6066, the link up at 6070).
            let collision = op == .createConnection && status == .connectionAlreadyExists ? acceptedAnyway(ev, e) : nil
            // A Disconnect refused while the link was ending on its own (the peer leaving at that moment).
            let crossed = op == .disconnect ? endedAnyway(ev, e) : nil
            // An optional tuning of a link the platform goes on without (a declared row, not this capture's words).
            let tuning = probing ? nil : Self.platformTuning(op, e)
            // A refusal the link types or the link's own tuning explain (a link-policy command for an LE link; packet
            // types or a default policy the controller or peer does not take).
            let lossless =
                probing || tuning != nil
                ? nil : (Self.linkPolicyOnLE(op, ev, e) ? Self.linkPolicyOnLECause : Self.tuningWithoutLoss(op, status))
            let causes: [String] =
                if let tuning {
                    ["\(tuning.platform) tunes each link with it and goes on without it when refused (\(tuning.source))"]
                } else if let lossless { [lossless] } else if let probe {
                    ["\(probe.platform) sends it while it initialises the controller and goes on without it (\(probe.source))"]
                } else if Self.prescribed(op, status) {
                    [Self.prescribedCause]
                } else if Self.unansweredQuery(op, status) { [Self.unansweredQueryCause] } else if let state { [state] } else if probing {
                    ["the stack probing the controller's capabilities (harmless)"]
                } else if vendor { ["a vendor feature the controller declined; the host goes on without it"] } else if collision != nil {
                    ["a page collision: the peer was connecting to this side at the same moment, and its link came up"]
                } else if crossed != nil { [Self.crossedCause] } else if accepted != nil {
                    ["the host sent the command twice; the first one did its work"]
                } else { ["a host state-machine bug", "small controller tables"] }
            return Diagnosis(
                rule: Self.code,
                severity: probing || vendor || accepted != nil || collision != nil || crossed != nil || tuning != nil || lossless != nil
                    ? .info : severity,
                frame: ev.frame,
                message:
                    "The controller refused \(op) (\(codeName(status)), frame \(ev.frame))\(meaning.map { ": " + $0 } ?? "")"
                    + (accepted.map { "; the connection it accepts completed at frame \($0.frame)." }
                        ?? collision.map { "; the peer was connecting at the same moment, and the link came up at frame \($0.frame)." }
                        ?? crossed.map { "; the link ended anyway at frame \($0.frame) (\($0.text))." }
                        ?? tuning.map {
                            "; \($0.platform) tunes links with it and goes on without it: the link keeps the value already in force."
                        }
                        ?? "."),
                headline: "\(op) refused (\(hex(status.rawValue)))",
                supporting: (commandFrame.map { [CitedFrame($0, "\(op)")] } ?? []) + ([accepted, collision, crossed].compactMap { $0 }),
                causes: causes,
                fold: "\(op.rawValue) \(status.rawValue)")
        }
    }
}

/// HH-04's refusals the controller's state explains: a command the spec has the controller refuse in the state the log
/// shows it in, or one that asks for the state already in force, is the answer to the host's question, not a host
/// state-machine bug (issue 48).
extension HH04CommandErrors {
    /// Scan parameters refused while scanning is on: "If the Host issues this command when scanning is enabled, the
    /// Controller shall return the error code Command Disallowed" (Core Spec Vol 4, Part E, 7.8.10; 7.8.64 for the
    /// extended command).
    static let scanParameters: [HCICommand: String] = [.leSetScanParameters: "7.8.10", .leSetExtendedScanParameters: "7.8.64"]
    static let scanEnables: Set<HCICommand> = [.leSetScanEnable, .leSetExtendedScanEnable]

    /// The refusals (0x0C Command Disallowed) the controller's state accounts for, by the frame of the refusal, with the
    /// cause to print: scan parameters changed while scanning (prescribed), or scanning turned off while it was off
    /// already (on while on): the state the host asked for holds, nothing is lost. Controllers that refuse such a
    /// redundant command exist (macOS bluetoothd disables twice on a Broadcom HCI 4.2 controller, 68 times in
    /// `pklg-macos-le_hciparse-…-x64.pklg` from frame 111; Zephyr's controller does it under
    /// CONFIG_BT_CTLR_SCAN_ENABLE_STRICT; Linux checks its scan state before disabling for that reason, commit
    /// 6fb00d4e). The scan state is known from an HCI Reset (off) or a scan enable the controller accepted.
    static func stateRefusals(_ e: Evidence) -> [Int: String] {
        let refused = Set(
            e.events.compactMap { ev -> Int? in
                if case .commandFailed(_, _, let frame) = ev.kind { frame } else { nil }
            })
        var scanning: [UInt16: (on: Bool, since: Int)] = [:]  // controller → the scan state known, and its frame
        var asked: [Int: Bool] = [:]  // scan enable command frame → on or off
        var out: [Int: String] = [:]
        for ev in e.events {
            let controller = ev.controller
            switch ev.kind {
            case .scanEnableCommand(let on):
                asked[ev.frame] = on
                if !refused.contains(ev.frame) { scanning[controller] = (on, ev.frame) }
            case .reset:
                scanning[controller] = (false, ev.frame)
            case .commandFailed(let op, .commandDisallowed, let commandFrame):
                guard let state = scanning[controller] else { continue }
                if let section = scanParameters[op], state.on {
                    out[ev.frame] =
                        "scanning was on (frame \(state.since)): the spec has the controller refuse new scan parameters until it stops (Core Spec Vol 4, Part E, \(section)); the parameters in force stay"
                } else if op == .leSetRandomAddress, state.on {
                    out[ev.frame] =
                        "scanning was on (frame \(state.since)): the spec has the controller refuse a new random address while it scans, advertises or initiates (Core Spec Vol 4, Part E, 7.8.4); the address in force stays"
                } else if scanEnables.contains(op), let on = commandFrame.flatMap({ asked[$0] }), on == state.on {
                    out[ev.frame] =
                        "scanning was \(on ? "on" : "off") already (frame \(state.since)): the controller refuses a command that changes nothing, and the state the host asked for holds"
                }
            default:
                continue
            }
        }
        return out
    }
}
