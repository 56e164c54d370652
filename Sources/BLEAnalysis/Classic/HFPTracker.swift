import BLECore
import BLEProtocols

/// Follows the Hands-Free Profile's AT lines on one RFCOMM DLC (HFP 1.9, 4.2, 4.11, 4.34): the service level connection
/// (BRSF, BAC, CIND, CMER, CHLD, BIND) up or failed and why, the codec negotiation (+BCS / AT+BCS, then the eSCO link),
/// indicators, call events and volume. Lines are split out of the DLC's data per direction (a line may span frames).
struct HFPTracker {
    private(set) var session: HFPSession
    /// The text of a line not yet ended, per direction (true: from the peer).
    private var partial: [Bool: [UInt8]] = [:]
    /// The command waiting for its final result, per sender (true: the peer sent it): name and frame.
    private var waiting: [Bool: (name: String, text: String, frame: Int)] = [:]
    /// The commands each sender sent, in order, still without a final result: a final result answers the oldest (a
    /// hands-free unit may send the next command first: the Sony headphones' AT+XAPL at 4744, AT+VGS at 4745, OK at
    /// 4746 and 4763).
    private var queued: [Bool: [(text: String, frame: Int)]] = [:]
    /// The SLC's steps seen answered OK, in order (`+BRSF`, `+BAC`, `+CIND=?`, `+CIND?`, `+CMER`, `+CHLD=?`, `+BIND…`).
    private var slcSteps: [String] = []
    /// The time of the frame being read (a codec selection keeps it).
    private var now = Timestamp(microseconds: 0)
    static let maxLine = 512
    static let maxEvents = 4096

    init(dlci: UInt8) { session = HFPSession(dlci: dlci, thisSideIsGateway: false) }

    /// The lines that one data frame completed, each with what it did (for the timeline).
    mutating func feed(_ data: [UInt8], fromPeer: Bool, frame: Int, timestamp: Timestamp) -> [HFPATLine] {
        var held = partial[fromPeer, default: []]
        var out: [HFPATLine] = []
        for b in data {
            if b == 0x0D || b == 0x0A {
                if !held.isEmpty, let line = HFPATLine(line: String(decoding: held, as: UTF8.self)) {
                    now = timestamp
                    apply(line, fromPeer: fromPeer, frame: frame)
                    out.append(line)
                }
                held.removeAll(keepingCapacity: true)
            } else if held.count < Self.maxLine {
                held.append(b)
            }
        }
        partial[fromPeer] = held
        return out
    }

    /// Whether `data` looks like AT traffic (a DLC SDP did not name): `AT` commands or `\r\n+`/`OK` results.
    static func looksLikeAT(_ data: [UInt8]) -> Bool {
        let s = String(decoding: data.prefix(8), as: UTF8.self).uppercased()
        // ATD dials a number (`ATD5551234;`, `ATD>1;`); an ELM327's `ATDP` is not one.
        let dial = s.hasPrefix("ATD") && s.dropFirst(3).first.map { $0.isNumber || $0 == ">" || $0 == "+" } == true
        return s.hasPrefix("AT+") || s.hasPrefix("ATA\r") || dial || s.hasPrefix("\r\n+") || s.hasPrefix("\r\nOK")
    }

    private mutating func apply(_ line: HFPATLine, fromPeer: Bool, frame: Int) {
        session.lines += 1
        if line.isCommand {
            // The hands-free unit sends the commands: a command from the peer makes this side the gateway.
            session.thisSideIsGateway = fromPeer
            if queued[fromPeer, default: []].count < Self.maxEvents { queued[fromPeer, default: []].append((line.text, frame)) }
            waiting[fromPeer] = (line.name + (line.kind == .test ? "=?" : line.kind == .read ? "?" : ""), line.text, frame)
            command(line, frame: frame)
        } else if line.kind == .final {
            final(line, fromPeer: fromPeer, frame: frame)
        } else {
            result(line, frame: frame)
        }
    }

    private mutating func command(_ line: HFPATLine, frame: Int) {
        switch line.name {
        case "+BRSF": session.handsFreeFeatures = line.numbers.first
        case "+BAC":
            session.availableCodecs = line.numbers
            session.availableCodecsFrame = frame
        case "+BCS":
            if let codec = line.numbers.first,
                let i = session.codecSelections.lastIndex(where: { $0.codec == codec && $0.confirmedFrame == nil })
            {
                session.codecSelections[i].confirmedFrame = frame
            }
        case "+VGS": session.speakerGain = line.numbers.first; session.speakerGainFrame = frame
        case "+VGM": session.microphoneGain = line.numbers.first
        case "A": callEvent(frame, "answered (ATA)")
        case "+CHUP": callEvent(frame, "hung up (AT+CHUP)")
        case "D": callEvent(frame, "dialled (ATD)")
        case "+BLDN": callEvent(frame, "redial (AT+BLDN)")
        default: break
        }
    }

    private mutating func result(_ line: HFPATLine, frame: Int) {
        switch line.name {
        case "+BRSF": (session.gatewayFeatures, session.gatewayFeaturesFrame) = (line.numbers.first, frame)
        case "+CIND":
            // The test answer names the indicators: ("service",(0,1)),("call",(0,1)),…
            if line.arguments.hasPrefix("(") { session.indicators = Self.indicatorNames(line.arguments) }
        case "+CIEV":
            let n = line.numbers
            if n.count >= 2, session.indicatorChanges.count < Self.maxEvents {
                let name = n[0] >= 1 && n[0] <= session.indicators.count ? session.indicators[n[0] - 1] : "indicator \(n[0])"
                session.indicatorChanges.append(HFPIndicatorChange(frame: frame, name: name, value: n[1], time: now))
            }
        case "+BCS":
            if let codec = line.numbers.first, session.codecSelections.count < Self.maxEvents {
                session.codecSelections.append(HFPCodecSelection(frame: frame, codec: codec, time: now))
            }
        case "+VGS": session.speakerGain = line.numbers.first; session.speakerGainFrame = frame
        case "+VGM": session.microphoneGain = line.numbers.first
        default:
            if line.kind == .unsolicited, line.name == "RING" { callEvent(frame, "ring") }
        }
    }

    /// OK or an error for the command the other side sent: the SLC moves on, or fails there.
    private mutating func final(_ line: HFPATLine, fromPeer: Bool, frame: Int) {
        if !(queued[!fromPeer]?.isEmpty ?? true) { queued[!fromPeer]!.removeFirst() }
        guard let asked = waiting.removeValue(forKey: !fromPeer) else { return }
        if line.name == "OK" {
            if Self.slcCommands.contains(asked.name) {
                slcSteps.append(asked.name)
                if session.slcFrame == nil, session.slcFailure == nil, slcComplete { session.slcFrame = frame }
            }
            return
        }
        var failure = HFPFailure(frame: frame, command: asked.text, why: line.text)
        // A hands-free command for a feature the gateway's +BRSF did not announce: the refusal's likely cause.
        if fromPeer != session.thisSideIsGateway, let ag = session.gatewayFeatures, let at = session.gatewayFeaturesFrame,
            let needed = HFPFeatures.gatewayFeature(neededBy: asked.name.replacing("=?", with: "").replacing("?", with: "")),
            ag >> needed.bit & 1 == 0
        {
            failure.cause = "the AG's +BRSF: \(ag) (\(at)) has no \(needed.name)"
        }
        if session.errors.count < Self.maxEvents { session.errors.append(failure) }
        if session.slcFrame == nil, session.slcFailure == nil, Self.slcCommands.contains(asked.name) { session.slcFailure = failure }
    }

    static let slcCommands: Set<String> = ["+BRSF", "+BAC", "+CIND=?", "+CIND?", "+CMER", "+CHLD=?", "+BIND", "+BIND=?", "+BIND?"]

    /// The SLC is up once CMER is answered and, when both sides offered three-way calling, once AT+CHLD=? is answered
    /// too (HFP 1.9, 4.2.1.3–4.2.1.4). The HF indicators step (AT+BIND) that may follow is not waited for: headsets that
    /// announce the feature and skip it (OPPO Enco Buds3 Pro, corpus) still take calls; a BIND answered ERROR is an error.
    private var slcComplete: Bool {
        guard slcSteps.contains("+CMER") else { return false }
        let hf = session.handsFreeFeatures ?? 0, ag = session.gatewayFeatures ?? 0
        if hf >> 1 & 1 == 1, ag & 1 == 1, !slcSteps.contains("+CHLD=?") { return false }
        return true
    }

    private mutating func callEvent(_ frame: Int, _ what: String) {
        if session.callEvents.count < Self.maxEvents { session.callEvents.append(HFPCallEvent(frame: frame, what: what, time: now)) }
    }

    /// The names of a +CIND test answer, in order: `("service",(0,1)),("call",(0,1))` → [service, call].
    static func indicatorNames(_ text: String) -> [String] {
        var names: [String] = []
        var inQuote = false
        var current = ""
        for ch in text {
            if ch == "\"" {
                if inQuote { names.append(current); current = "" }
                inQuote.toggle()
            } else if inQuote {
                current.append(ch)
            }
        }
        return names
    }

    /// SDP named the channel's service the Headset Profile, not Hands-Free.
    mutating func markHeadsetProfile() { session.headsetProfile = true }

    /// The DLC closed or the link ended: an SLC never completed is a failure, said with its last step.
    mutating func finish(closedAt frame: Int?) -> HFPSession {
        session.unanswered = (queued[false, default: []] + queued[true, default: []]).sorted { $0.frame < $1.frame }.map {
            HFPFailure(frame: $0.frame, command: $0.text, why: "no final result in the log")
        }
        // AT+BRSF is Hands-Free's alone: a channel SDP called Headset that exchanged it ran HFP (the zabbits log's
        // channel 2: SLC up at 550).
        if session.handsFreeFeatures != nil || session.gatewayFeatures != nil { session.headsetProfile = false }
        if !session.headsetProfile, session.slcFrame == nil, session.slcFailure == nil, let frame,
            !slcSteps.isEmpty || session.handsFreeFeatures != nil
        {
            let last = slcSteps.last ?? "AT+BRSF"
            session.slcFailure = HFPFailure(frame: frame, command: last, why: "the RFCOMM channel closed before the SLC was up")
        }
        return session
    }
}
