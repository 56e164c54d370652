import BLEAnalysis
import BLECore
import BLEProtocols

/// One kind of expectation as the file writes it: its key (`ota`), the keys of its mapping (snake_case, each checked
/// with ``Swift/Decoder/rejectUnknownKeys(_:kind:)``), and the ``Expectation`` it stands for. Adding a kind: a type
/// here, a row in ``ExpectationKinds/all``, a case of ``Expectation`` and its verdict in ``CheckFacts/evaluate``.
protocol ExpectationKind: Decodable, Sendable {
    static var kind: String { get }
    /// What its value looks like, for messages: `{request, max_ms}`.
    static var shape: String { get }
    /// The expectation when the kind is written with no value (`- no_disconnection:`); nil when it needs one.
    static var bare: Expectation? { get }
    var expectation: Expectation { get }
}

enum ExpectationKinds {
    static let all: [any ExpectationKind.Type] = [
        OTAKind.self, TransferKind.self, NoATTErrorKind.self, NoDisconnectionKind.self, LatencyKind.self, LinkQualityKind.self,
        NoFindingsKind.self, AbsentKind.self, PresentKind.self, BaselineKind.self, SecurityKind.self,
    ]
    /// `ota, transfer, …`, for messages.
    static var names: String { all.map { $0.kind }.joined(separator: ", ") }
}

/// `ota: {protocol: nordic-secure-dfu, min_rate: 20kB/s, image: app.bin}`.
struct OTAKind: ExpectationKind {
    static let kind = "ota"
    static let shape = "{protocol, min_rate, image}"
    static let bare: Expectation? = .ota(protocolName: nil, minRateBitsPerSecond: nil, rateText: nil, imagePath: nil)
    var expectation: Expectation

    enum CodingKeys: String, CodingKey, CaseIterable { case `protocol`, minRate = "min_rate", image }

    /// The protocols the OTA tracker follows, and `vendor` (a YAML codec with `ota-*` roles).
    static var protocols: [String] { OTATracker.profiles.map { $0.protocolName.rawValue } + [OTAProtocol.vendor.rawValue] }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self, kind: Self.kind)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let name = try c.decodeIfPresent(String.self, forKey: .protocol)
        if let name, !Self.protocols.contains(name) {
            throw ExpectationProblem(
                path: c.codingPath + [CodingKeys.protocol],
                message: "unknown protocol '\(name)' (\(Self.protocols.joined(separator: ", ")))")
        }
        let rate = try c.decodeIfPresent(RateValue.self, forKey: .minRate)
        expectation = .ota(
            protocolName: name, minRateBitsPerSecond: rate?.bitsPerSecond, rateText: rate?.text,
            imagePath: try c.decodeIfPresent(String.self, forKey: .image))
    }
}

/// `transfer: {uuid: 08590F7E-…, handle: 0x0012}`.
struct TransferKind: ExpectationKind {
    static let kind = "transfer"
    static let shape = "{uuid, handle}"
    static let bare: Expectation? = .transfer(uuid: nil, handle: nil)
    var expectation: Expectation

    enum CodingKeys: String, CodingKey, CaseIterable { case uuid, handle }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self, kind: Self.kind)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        var uuid: BluetoothUUID? = nil
        if let text = try c.decodeIfPresent(String.self, forKey: .uuid) {
            guard let u = BluetoothUUID(text) else {
                throw ExpectationProblem(path: c.codingPath + [CodingKeys.uuid], message: "'\(text)' is not a UUID (2A19 or 128-bit)")
            }
            uuid = u
        }
        expectation = .transfer(uuid: uuid, handle: try c.decodeIfPresent(HandleValue.self, forKey: .handle)?.value)
    }
}

/// `no_att_error: {handle: 0x0012, except: [Attribute Not Found]}`.
struct NoATTErrorKind: ExpectationKind {
    static let kind = "no_att_error"
    static let shape = "{handle, except}"
    static let bare: Expectation? = .noATTError(handle: nil, except: [])
    var expectation: Expectation

    enum CodingKeys: String, CodingKey, CaseIterable { case handle, except }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self, kind: Self.kind)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        let except = try c.decodeIfPresent([ATTErrorName].self, forKey: .except) ?? []
        expectation = .noATTError(handle: try c.decodeIfPresent(HandleValue.self, forKey: .handle)?.value, except: except.map(\.name))
    }
}

/// `no_disconnection: {reason: 0x08}` (or `Connection Timeout`).
struct NoDisconnectionKind: ExpectationKind {
    static let kind = "no_disconnection"
    static let shape = "{reason}"
    static let bare: Expectation? = .noDisconnection(reason: nil)
    var expectation: Expectation

    enum CodingKeys: String, CodingKey, CaseIterable { case reason }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self, kind: Self.kind)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        expectation = .noDisconnection(reason: try c.decodeIfPresent(ReasonValue.self, forKey: .reason)?.name)
    }
}

/// `latency: {request: Write Request, handle: 0x0012, max_ms: 100}`.
struct LatencyKind: ExpectationKind {
    static let kind = "latency"
    static let shape = "{request, max_ms, handle}"
    static let bare: Expectation? = nil
    var expectation: Expectation

    enum CodingKeys: String, CodingKey, CaseIterable { case request, handle, maxMilliseconds = "max_ms" }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self, kind: Self.kind)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        guard let request = try c.decodeIfPresent(String.self, forKey: .request) else {
            throw decoder.problem("needs 'request' (e.g. Write Request)")
        }
        guard let ms = try c.decodeIfPresent(Double.self, forKey: .maxMilliseconds) else {
            throw decoder.problem("needs 'max_ms' (a positive number)")
        }
        guard ms > 0, ms.isFinite else {
            throw ExpectationProblem(
                path: c.codingPath + [CodingKeys.maxMilliseconds],
                message: "must be positive (got \(ms.rounded() == ms ? String(Int(ms)) : String(ms)))")
        }
        expectation = .latency(
            request: request, handle: try c.decodeIfPresent(HandleValue.self, forKey: .handle)?.value, maxMicroseconds: Int64(ms * 1000))
    }
}

/// `link_quality: {min_rssi: -80, max_retransmissions_per_report: 50, allow_approaching_lsto: true}`.
struct LinkQualityKind: ExpectationKind {
    static let kind = "link_quality"
    static let shape = "{min_rssi, max_retransmissions_per_report, allow_approaching_lsto}"
    static let bare: Expectation? = .linkQuality(minRSSI: nil, maxRetransmissionsPerReport: nil, allowApproachingLSTO: false)
    var expectation: Expectation

    enum CodingKeys: String, CodingKey, CaseIterable {
        case minRSSI = "min_rssi", maxRetransmissions = "max_retransmissions_per_report", allowApproachingLSTO = "allow_approaching_lsto"
    }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self, kind: Self.kind)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        expectation = .linkQuality(
            minRSSI: try c.decodeIfPresent(Int.self, forKey: .minRSSI),
            maxRetransmissionsPerReport: try c.decodeIfPresent(Int.self, forKey: .maxRetransmissions),
            allowApproachingLSTO: try c.decodeIfPresent(Bool.self, forKey: .allowApproachingLSTO) ?? false)
    }
}

/// `no_findings: {min_severity: error}`: no diagnosis finding at that severity or above (`error` when not given).
struct NoFindingsKind: ExpectationKind {
    static let kind = "no_findings"
    static let shape = "{min_severity}"
    static let bare: Expectation? = .noFindings(minSeverity: .error)
    var expectation: Expectation

    enum CodingKeys: String, CodingKey, CaseIterable { case minSeverity = "min_severity" }

    init(from decoder: any Decoder) throws {
        try decoder.rejectUnknownKeys(CodingKeys.self, kind: Self.kind)
        let c = try decoder.container(keyedBy: CodingKeys.self)
        var severity = DiagnosisSeverity.error
        if let text = try c.decodeIfPresent(String.self, forKey: .minSeverity) {
            guard let s = DiagnosisSeverity(rawValue: text) else {
                let known = DiagnosisSeverity.allCases.map(\.rawValue).joined(separator: ", ")
                throw ExpectationProblem(path: c.codingPath + [CodingKeys.minSeverity], message: "unknown severity '\(text)' (\(known))")
            }
            severity = s
        }
        expectation = .noFindings(minSeverity: severity)
    }
}

/// `absent: [DC-01, CE-02]`: none of these rules fires.
struct AbsentKind: ExpectationKind {
    static let kind = "absent"
    static let shape = "a list of rule ids ([DC-01, CE-02])"
    static let bare: Expectation? = nil
    var expectation: Expectation

    init(from decoder: any Decoder) throws {
        expectation = .absent(rules: try RuleIDs(from: decoder).ids)
    }
}

/// `present: [DC-01]`: each of these rules fires (a capture kept to show a failure keeps showing it).
struct PresentKind: ExpectationKind {
    static let kind = "present"
    static let shape = "a list of rule ids ([DC-01])"
    static let bare: Expectation? = nil
    var expectation: Expectation

    init(from decoder: any Decoder) throws {
        expectation = .present(rules: try RuleIDs(from: decoder).ids)
    }
}

// MARK: values

/// A non-empty list of diagnosis rule ids, each one of ``DiagnosisRules/all`` (`blescope diagnose --list-rules`).
struct RuleIDs: Decodable {
    var ids: [String]

    init(from decoder: any Decoder) throws {
        var list = try decoder.unkeyedContainer()
        var ids: [String] = []
        while !list.isAtEnd {
            let id = try list.decode(RuleID.self).id
            if !ids.contains(id) { ids.append(id) }
        }
        guard !ids.isEmpty else { throw decoder.problem("an empty list: name at least one rule (blescope diagnose --list-rules)") }
        self.ids = ids
    }
}

struct RuleID: Decodable {
    var id: String

    init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard DiagnosisRules.rule(text) != nil else {
            let near = DiagnosisRules.all.first { $0.id.lowercased() == text.lowercased() }.map { "did you mean \($0.id)? " } ?? ""
            throw decoder.problem("unknown rule '\(text)' (\(near)blescope diagnose --list-rules lists them)")
        }
        id = text
    }
}

/// An attribute handle: `0x0012`, `18`, or hexadecimal text (`"0012"`).
struct HandleValue: Decodable {
    var value: UInt16

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let n = try? c.decode(Int.self) {
            guard let v = UInt16(exactly: n) else { throw decoder.problem("\(n) is not a handle (0x0000–0xFFFF)") }
            value = v
            return
        }
        let text = try c.decode(String.self)
        let digits = text.lowercased().hasPrefix("0x") ? String(text.dropFirst(2)) : text
        guard let v = UInt16(digits, radix: 16) else { throw decoder.problem("'\(text)' is not a handle (e.g. 0x0012)") }
        value = v
    }
}

/// A rate with its unit: `20kB/s`, `160kbps` (``Expectation/parseRate(_:)``).
struct RateValue: Decodable {
    var text: String
    var bitsPerSecond: Double

    init(from decoder: any Decoder) throws {
        text = try decoder.singleValueContainer().decode(String.self)
        guard let v = Expectation.parseRate(text) else { throw decoder.problem("'\(text)' is not a rate (e.g. 20kB/s or 160kbps)") }
        bitsPerSecond = v
    }
}

/// A disconnection reason: its code (`0x08`, `8`) or its name in the Core Specification (`Connection Timeout`, any
/// case), read as the name the connection table records.
struct ReasonValue: Decodable {
    var name: String

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if let n = try? c.decode(Int.self) {
            guard let code = UInt8(exactly: n) else { throw decoder.problem("\(n) is not an HCI reason code (0x00–0xFF)") }
            name = HCIStatus(rawValue: code).description
            return
        }
        let text = try c.decode(String.self)
        if text.lowercased().hasPrefix("0x"), let code = UInt8(text.dropFirst(2), radix: 16) {
            name = HCIStatus(rawValue: code).description
        } else if let known = (0...255).lazy.compactMap({ HCIStatus(rawValue: UInt8($0)).name }).first(where: {
            $0.caseInsensitiveCompare(text)
        }) {
            name = known
        } else {
            throw decoder.problem("unknown reason '\(text)' (a code such as 0x08, or its name: Connection Timeout)")
        }
    }
}

/// An ATT error by its name in the Core Specification (`Attribute Not Found`, any case) or its code (`0x0A`).
struct ATTErrorName: Decodable {
    var name: String

    init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        if text.lowercased().hasPrefix("0x"), let code = UInt8(text.dropFirst(2), radix: 16) {
            name = ATTErrorCode(rawValue: code).description
        } else if let known = (0...255).lazy.compactMap({ ATTErrorCode(rawValue: UInt8($0)).name }).first(where: {
            $0.caseInsensitiveCompare(text)
        }) {
            name = known
        } else {
            throw decoder.problem("unknown ATT error '\(text)' (a name such as Attribute Not Found, or a code such as 0x0A)")
        }
    }
}
