import BLEAnalysis
import BLECore
import BLEProtocols

/// Link differences of one pair of connections: the parameters granted (interval, latency, timeout), PHY, data
/// length, ATT_MTU and encryption as the fleet's connections table states them (``FleetColumns/connections``: the
/// same cells, so a figure reads the same in `export --tables` and here), with the frame of each fact's source; then
/// what was asked (parameter update requests with who asked, MTU exchanges, pairing) and how many attempts each took.
enum DiffLink {
    /// A link figure compared: its column in the connections table, its title, and the fact it rests on.
    struct Field {
        /// The difference's `kind`.
        var kind: String
        var column: String
        var title: String
        var frame: @Sendable (Connection) -> Int?
        /// The fact's source word when it is not observed (`inferred`, `assumed`), said beside the value.
        var source: @Sendable (Connection) -> FactSource
        /// A larger value in B is worse (`true`), better (`false`), or neither (nil): decides the impact.
        var largerIsWorse: Bool?
        var majorWhenWorse = false
    }

    static let fields: [Field] = [
        Field(
            kind: "interval", column: "interval_ms", title: "interval (ms)", frame: { $0.link.parameters.source.frame },
            source: { $0.link.parameters.source },
            largerIsWorse: true),
        Field(
            kind: "latency", column: "latency", title: "peripheral latency", frame: { $0.link.parameters.source.frame },
            source: { $0.link.parameters.source }, largerIsWorse: nil),
        Field(
            kind: "timeout", column: "timeout_ms", title: "supervision timeout (ms)", frame: { $0.link.parameters.source.frame },
            source: { $0.link.parameters.source }, largerIsWorse: nil),
        Field(
            kind: "phy-tx", column: "phy_tx", title: "PHY tx", frame: { $0.link.phy.source.frame }, source: { $0.link.phy.source },
            largerIsWorse: nil),
        Field(
            kind: "phy-rx", column: "phy_rx", title: "PHY rx", frame: { $0.link.phy.source.frame }, source: { $0.link.phy.source },
            largerIsWorse: nil),
        Field(
            kind: "data-length", column: "max_tx_octets", title: "data length (tx octets)", frame: { $0.link.dataLength.source.frame },
            source: { $0.link.dataLength.source }, largerIsWorse: false),
        Field(
            kind: "mtu", column: "mtu", title: "ATT_MTU", frame: { $0.link.mtu.source.frame }, source: { $0.link.mtu.source },
            largerIsWorse: false,
            majorWhenWorse: true),
        Field(
            kind: "encrypted", column: "encrypted", title: "encrypted", frame: { $0.link.encryption.source.frame },
            source: { $0.link.encryption.source },
            largerIsWorse: false, majorWhenWorse: true),
    ]

    /// The cell of `column` of the connections table for `c`, as text (`7.50`, `2M`, `true`).
    static func cell(_ column: String, _ c: Connection) -> String? {
        guard let col = FleetColumns.connections.columns.first(where: { $0.key == column }) else { return nil }
        let text = col.value(ConnectionRow(id: "", connection: c)).csv
        return text.isEmpty ? nil : text
    }

    static func compare(_ a: Connection, _ b: Connection, evidenceA: [EvidenceEvent], evidenceB: [EvidenceEvent]) -> [Difference] {
        var out: [Difference] = []
        let pair = "#\(a.number)↔#\(b.number)"
        for f in fields {
            let va = cell(f.column, a), vb = cell(f.column, b)
            guard va != vb else { continue }
            out.append(
                Difference(
                    .link, f.kind, impact: isAssumed(f.source(a)) || isAssumed(f.source(b)) ? .info : impact(f, va, vb),
                    subject: "\(pair) \(f.title)",
                    a: va.map { $0 + sourceNote(f.source(a)) }, b: vb.map { $0 + sourceNote(f.source(b)) },
                    frames: (f.frame(a), f.frame(b)), connections: (a.number, b.number), magnitude: relative(va, vb)))
        }
        let ra = requests(evidenceA.filter { $0.connection == a.number }, on: a)
        let rb = requests(evidenceB.filter { $0.connection == b.number }, on: b)
        for key in Set(ra.keys).union(rb.keys).sorted() {
            let xa = ra[key], xb = rb[key]
            guard xa?.value != xb?.value else { continue }
            out.append(
                Difference(
                    .link, key, impact: securityImpact(key, xa?.value, xb?.value) ?? (majorKeys.contains(key) ? .major : .minor),
                    subject: "\(pair) \(titles[key] ?? key)",
                    a: xa?.value, b: xb?.value, frames: (xa?.frame, xb?.frame), connections: (a.number, b.number), magnitude: 1))
        }
        return out
    }

    /// A default the capture never showed (a log that starts mid-connection): a difference of it says little.
    static func isAssumed(_ s: FactSource) -> Bool { s == .assumed }

    static func sourceNote(_ s: FactSource) -> String {
        if case .observed = s { return "" }
        return " (\(s.kind))"
    }

    static func impact(_ f: Field, _ a: String?, _ b: String?) -> DiffImpact {
        guard let worse = f.largerIsWorse, let x = a.flatMap(number), let y = b.flatMap(number) else { return .minor }
        let bWorse = worse ? y > x : y < x
        return bWorse && f.majorWhenWorse ? .major : .minor
    }

    /// `12.5`, and `true`/`false` as 1/0.
    static func number(_ s: String) -> Double? { s == "true" ? 1 : s == "false" ? 0 : Double(s) }

    /// |b − a| / a, for ordering figures by how much they moved.
    static func relative(_ a: String?, _ b: String?) -> Double {
        guard let x = a.flatMap(number), let y = b.flatMap(number), x != 0 else { return 1 }
        return abs(y - x) / abs(x)
    }

    static let titles = [
        "parameter-requests": "parameter requests (who asked: what)",
        "pairing": "pairing (who asked: how)",
        "pairing-failed": "pairing failed",
        "encryption-attempts": "encryption (attempts: result)",
        "mtu-exchange": "ATT_MTU exchange (who asked: client MTU, server MTU)",
        "pairing-method": "pairing method (association model, bonding; IO capabilities)",
        "encryption": "encryption (on or off, algorithm)",
        "key-size": "encryption key size in force",
    ]

    /// The side that sent a PDU by its role on the link (`central`, `peripheral`) where the capture says it: the local
    /// controller's role on an HCI log, the central as `local` on an air capture; else `local` or `peer`.
    static func side(_ s: EvidenceEvent.Sender, on c: Connection) -> String {
        let localRole: Connection.Role? = c.role ?? (c.centralAddress != nil ? .central : nil)
        guard let localRole else { return s.rawValue }
        let other: Connection.Role = localRole == .central ? .peripheral : .central
        return (s == .local ? localRole : other).rawValue
    }

    /// `central asked 527, peripheral answered 247`; `request not seen, peripheral answered 247` when the capture
    /// holds the response only (Core Spec Vol 3, Part F, 3.4.2: the client asks with its Client Rx MTU).
    static func mtuExchangeText(requester: EvidenceEvent.Sender, client: Int?, server: Int, on c: Connection) -> String {
        let answerer = side(requester == .local ? .peer : .local, on: c)
        let ask = client.map { "\(side(requester, on: c)) asked \($0)" } ?? "request not seen"
        return "\(ask), \(answerer) answered \(server)"
    }

    /// What was asked on one connection, as comparable text with the frame of the first ask.
    static func requests(_ events: [EvidenceEvent], on c: Connection) -> [String: (value: String, frame: Int)] {
        var asks: [String: [(String, Int)]] = [:]
        for e in events {
            switch e.kind {
            case .parameterUpdateRequest(let sender, _, let r):
                asks["parameter-requests", default: []].append(("\(sender.rawValue): \(r.description)", e.frame))
            case .remoteParameterRequest(_, let r):
                asks["parameter-requests", default: []].append(("peer (LL): \(r.description)", e.frame))
            case .pairingRequest(let sender, let authReq):
                asks["pairing", default: []].append(("\(sender.rawValue) asked: \(authReq.description)", e.frame))
            case .pairingResponse(let sender, let authReq):
                asks["pairing", default: []].append(("\(sender.rawValue) answered: \(authReq.description)", e.frame))
            case .pairingFailed(let sender, let reason):
                asks["pairing-failed", default: []].append(("\(sender.rawValue): \(reason)", e.frame))
            case .encryptionChange(_, let status, let enabled):
                let result = status.rawValue == 0 ? (enabled ? "on" : "off") : "\(status)"
                asks["encryption-attempts", default: []].append((result, e.frame))
            case .mtuExchange(let requester, let client, let server, _, let requestFrame):
                let text = mtuExchangeText(requester: requester, client: client, server: server, on: c)
                asks["mtu-exchange", default: []].append((text, requestFrame ?? e.frame))
            default: continue
            }
        }
        if let methods = pairingMethods(events, on: c) { asks["pairing-method"] = methods }
        var out = asks.mapValues { list in
            let texts = list.map(\.0)
            let value = (texts.count > 1 ? "\(texts.count)× " : "") + Array(Set(texts)).sorted().prefix(3).joined(separator: "; ")
            return (value: value, frame: list[0].1)
        }
        for (key, ask) in securityAsks(on: c) where out[key] == nil { out[key] = ask }
        return out
    }

    /// Each pairing's association model (Core Spec Vol 3, Part H, 2.3.5.1) from its Pairing Request and Response,
    /// `LE Secure Connections, Numeric Comparison, bonding (central KeyboardDisplay MITM, peripheral DisplayYesNo)`,
    /// at the request's frame; a request without its response, or a response without its request, says so.
    static func pairingMethods(_ events: [EvidenceEvent], on c: Connection) -> [(String, Int)]? {
        var out: [(String, Int)] = []
        var request: (sender: EvidenceEvent.Sender, parameters: SMPPairingParameters, frame: Int)?
        func features(_ s: EvidenceEvent.Sender, _ p: SMPPairingParameters) -> String {
            "\(side(s, on: c)) \(p.ioCapability)" + (p.authReq.contains(.mitm) ? " MITM" : "") + (p.oobDataFlag == 1 ? " OOB" : "")
        }
        for e in events {
            guard case .pairingFeatures(let sender, let response, let p) = e.kind else { continue }
            guard response else {
                if let r = request { out.append(("response not seen (\(features(r.sender, r.parameters)))", r.frame)) }
                request = (sender, p, e.frame)
                continue
            }
            guard let r = request else {
                out.append(("request not seen (\(features(sender, p)))", e.frame))
                continue
            }
            let model = SMPAssociationModel(initiator: r.parameters, responder: p).map(\.description) ?? "method unknown"
            out.append(("\(model) (\(features(r.sender, r.parameters)), \(features(sender, p)))", r.frame))
            request = nil
        }
        if let r = request { out.append(("response not seen (\(features(r.sender, r.parameters)))", r.frame)) }
        return out.isEmpty ? nil : out
    }
}
