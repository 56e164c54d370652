import BLEAnalysis
import BLECodecs
import BLECore
import BLEProtocols

extension FindingCode {
    static let errorResponse = FindingCode(
        "GATT-08", layer: .att, severity: .error,
        title: "ATT request refused",
        explain: .init(
            meaning: "The peer answered a request with an ATT error (the finding names the request, the handle and the error).",
            advice: "Read the error code: a wrong handle, a value of the wrong length, or an operation the attribute does not allow."),
        fold: .value, traits: [.readsPayloads])
}

/// GATT-08: every other ATT Error Response, decoded (request, handle, code). Quiet on the normal end of a discovery
/// (0x0A Attribute Not Found to Read By Type, Read By Group Type, Find Information, Find By Type Value; 0x10 Unsupported
/// Group Type to Read By Group Type); the codes the
/// security, subscription and cache rules explain are theirs. Reads refused with Read Not Permitted are only info
/// (apps read every characteristic).
struct GATT08ErrorResponse: DiagnosisRule {
    static let code = FindingCode.errorResponse
    static let group = RuleGroup.gatt
    static let evidence = "ATT Error Response (request opcode, handle, error), except the end of discovery and codes other rules explain"
    static let anchor = "none"
    static let discovery: Set<ATTOpcode> = [.readByTypeRequest, .readByGroupTypeRequest, .findInformationRequest, .findByTypeValueRequest]
    /// Codes SEC-05, SEC-06 and GATT-06 explain when the peer refuses (this side refusing the peer stays here). 0x01
    /// Invalid Handle is GATT-06's only where it reads a stale cache (no discovery, or after Service Changed): on a
    /// database discovered in this connection it is a plain refusal, named here.
    static let explained: Set<ATTErrorCode> = [
        .insufficientAuthentication, .insufficientAuthorization, .insufficientEncryption, .encryptionKeySizeTooShort, .databaseOutOfSync,
    ]

    /// The normal end of a discovery: 0x0A Attribute Not Found to a discovery request, and 0x10 Unsupported Group
    /// Type to a Read By Group Type Request for a type the server does not group (Core Spec Vol 3, Part F, 3.4.4.9 and
    /// 3.4.4.10: the server answers so, and the client goes on; a client asking for «Secondary Service» meets it).
    static func isDiscoveryEnd(_ request: ATTOpcode, _ error: ATTErrorCode) -> Bool {
        (error == .attributeNotFound && discovery.contains(request))
            || (error == .unsupportedGroupType && request == .readByGroupTypeRequest)
    }

    /// `Unlikely Error (0x0e`, `Unknown (0xf7`, `Application Error (0x80`: the code named once (an unassigned or
    /// application code's name already carries it).
    static func codeText(_ error: ATTErrorCode) -> String {
        let code = hex(error.rawValue)
        guard let name = error.name, !name.contains(code) else {
            return "\(error.isApplicationError ? "Application Error" : "Unknown") (\(code)"
        }
        return "\(name) (\(code)"
    }

    static func evaluate(_ e: Evidence) -> [Diagnosis] {
        var cccdRequests = Set<Int>()
        for ev in e.events { if case .cccdWrite = ev.kind { cccdRequests.insert(ev.frame) } }
        let stale = Set(GATT06StaleHandles.evaluate(e).map(\.frame))
        return e.events.compactMap { ev in
            guard case .attError(let request, let handle, let error, let requestFrame, let sender) = ev.kind,
                !isDiscoveryEnd(request, error), sender == .local || !(explained.contains(error) || stale.contains(ev.frame)),
                !(requestFrame.map(cccdRequests.contains) ?? false)
            else { return nil }
            let c = e.connection(ev.connection)
            let device = sender == .peer ? e.deviceName(c) : "this side"
            let readRefused = error == .readNotPermitted && (request == .readRequest || request == .readBlobRequest)
            let descriptor = sender == .peer && request.isWrite && error == .writeNotPermitted ? readOnlyDescriptor(c, handle) : nil
            let sev: DiagnosisSeverity = readRefused || descriptor != nil ? .info : request.isWrite ? .error : .warning
            let askedForNoHandle = error == .invalidHandle && handle == 0x0000
            return Diagnosis(
                rule: Self.code, severity: sev, frame: ev.frame,
                message: "\(device) refused \(request) on \(hex(handle, width: 4)): \(codeText(error)), frame \(ev.frame))."
                    + (askedForNoHandle ? Self.noHandleZero(asker: sender == .peer ? "this side" : e.deviceName(c)) : "")
                    + (descriptor.map {
                        " The handle is \($0); a server may keep it read-only, so the refusal is allowed: only what the app meant to write there was not kept."
                    } ?? ""),
                headline: "\(request) on \(hex(handle, width: 4)) refused: \(error)",
                supporting: requestFrame.map { [CitedFrame($0, "\(request)")] } ?? [],
                causes: askedForNoHandle
                    ? ["the requesting client's bug: an unset handle or a range starting at 0"]
                    : descriptor != nil ? ["the app writes a descriptor this server keeps read-only"] : causes(error),
                device: c?.peerAddress, connection: c?.number,
                fold: "\(ev.connection ?? 0) \(request.rawValue) \(handle) \(error.rawValue)")
        }
    }

    /// What a refused write hit when discovery (Find Information) showed it to be a descriptor other than a
    /// configuration one, e.g. `a Characteristic User Descriptor (0x2901, as descriptor discovery named it)` (the assigned numbers' name): Characteristic User
    /// Description is writable only where the characteristic's extended properties allow it, and the format, range and
    /// reference descriptors are read-only (Core Vol 3 Part G 3.3.3.2–3.3.3.7; Valid Range, GSS), so the server that
    /// refuses the write keeps to the spec. Only a type discovery named counts (``GATTDatabase/attributeTypes``). The Client and Server Characteristic Configuration descriptors (0x2902,
    /// 0x2903) are not among them: refusing those loses a subscription or a broadcast.
    static func readOnlyDescriptor(_ c: Connection?, _ handle: UInt16) -> String? {
        guard let uuid = c?.gatt.attributeTypes[handle], let short = uuid.uuid16, (0x2900...0x29FF).contains(short),
            short != 0x2902, short != 0x2903
        else { return nil }
        let name = AssignedNumbers.name(for: uuid).map { $0.lowercased().hasSuffix("descriptor") ? $0 : "\($0) descriptor" } ?? "descriptor"
        return
            "a\(name.first.map { "AEIOU".contains($0) } == true ? "n" : "") \(name) (\(hex(short, width: 4)), as descriptor discovery named it)"
    }

    /// Handle 0x0000 is reserved (Core Vol 3 Part F 3.2.2) and a range starting there is invalid (3.4.3.1, 3.4.4.1,
    /// 3.4.4.9): Invalid Handle is the answer the spec prescribes, so the fault is the request's, not the server's.
    static func noHandleZero(asker: String) -> String {
        " The request was \(asker)'s and named handle 0x0000, which no attribute has (Core Vol 3 Part F 3.2.2): Invalid Handle is the answer the spec prescribes."
    }

    static func causes(_ error: ATTErrorCode) -> [String] {
        switch error.rawValue {
        case 0x02, 0x03: ["the characteristic's properties do not allow it (app and peripheral disagree)"]
        case 0x06: ["the server does not support this request"]
        case 0x07, 0x09: ["a long-write offset or queue the server cannot take"]
        case 0x0D: ["the value's length is not what the characteristic takes"]
        case 0x11: ["the server is out of resources"]
        case 0x80...0x9F: ["the peripheral's application refused the value (see its protocol)"]
        default: ["an app/peripheral contract mismatch", "a server exception"]
        }
    }
}

extension ATTOpcode {
    /// A write: request, command, signed, prepare or execute.
    var isWrite: Bool { [.writeRequest, .writeCommand, .signedWriteCommand, .prepareWriteRequest, .executeWriteRequest].contains(self) }
}
