import BLECore

/// An MCUmgr `rc` code (`MGMT_ERR_*`).
public struct McuMgrReturnCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: Int64
    public init(rawValue: Int64) { self.rawValue = rawValue }
    public static let ok = McuMgrReturnCode(rawValue: 0)
    public static let names = OTACodeTable<McuMgrReturnCode>(
        [
            .ok: "EOK", .init(rawValue: 1): "EUNKNOWN", .init(rawValue: 2): "ENOMEM", .init(rawValue: 3): "EINVAL",
            .init(rawValue: 4): "ETIMEOUT", .init(rawValue: 5): "ENOENT", .init(rawValue: 6): "EBADSTATE",
            .init(rawValue: 7): "EMSGSIZE", .init(rawValue: 8): "ENOTSUP", .init(rawValue: 9): "ECORRUPT",
            .init(rawValue: 10): "EBUSY", .init(rawValue: 11): "EACCESSDENIED",
        ],
        unknown: { "rc \($0.rawValue)" })
    public var description: String { Self.names[self] }
}

/// MCUmgr SMP image upload (group 1, command 1), with image state (test or confirm) and reset after it.
///
/// Zephyr "SMP protocol specification", image management group. Each upload request carries
/// `{off, data}` (`len` in the first); the response `{rc, off}` acknowledges; the upload ends
/// when a response's `off` reaches `len`. An image state write (group 1, command 0) `{hash, confirm:
/// false}` marks the image for test ("test" phase), `{confirm: true}` confirms it; a reset (group 0,
/// command 5) reboots the device into it.
///
/// After the reset the phone reconnects and confirms the image running under test: an image state
/// write with `confirm: true` on a connection without an upload opens a session of its own (phase
/// "confirm", success when answered without an error), which ``OTAUpdateStory`` joins to the upload
/// it follows.
public struct McuMgrImageUpload: OTAProfile {
    public static let protocolName = OTAProtocol.mcumgr
    public static let endpoints: [BluetoothUUID: OTAEndpoint] = [TransferOptions.smpCharacteristic: .smp]

    var uploadDone = false
    /// An image state write is waiting for its response (`true`: a confirm).
    var pendingState: Bool?
    var confirmed = false

    public init() {}

    /// An image state write that confirms (`confirm: true`).
    static func isConfirm(_ h: SMPHeader, _ body: CBORValue?) -> Bool {
        kind(h) == .imageState && h.op == 2 && body?["confirm"] == .bool(true)
    }

    /// What an SMP message is to an update.
    enum Kind { case upload, imageState, reset, other }

    static func kind(_ h: SMPHeader) -> Kind {
        if h.group == 1 && h.id == 1 { return .upload }
        if h.group == 1 && h.id == 0 && (h.op == 2 || h.op == 3) { return .imageState }
        if h.group == 0 && h.id == 5 && (h.op == 2 || h.op == 3) { return .reset }
        return .other
    }

    static func parse(_ v: OTAValue) -> (SMPHeader, CBORValue?)? {
        var reader = ByteReader(v.bytes)
        guard let header = try? SMPHeader(parsing: &reader) else { return nil }
        let body = v.count > 8 ? try? CBORValue(bytes: Array(v.bytes[8...])) : nil
        return (header, body)
    }

    public static func admission(_ v: OTAValue, open: McuMgrImageUpload?) -> OTAAdmission {
        guard let parsed = parse(v) else { return .ignore }
        let (header, body) = parsed
        let kind = kind(header)
        let uploadRequest = kind == .upload && header.op == 2
        if open == nil && isConfirm(header, body) { return .join }
        guard kind == .upload || ((kind == .imageState || kind == .reset) && open != nil) else { return .ignore }
        if uploadRequest, body?["off"]?.intValue == 0, open?.uploadDone == true { return .restart("a new upload") }
        if open == nil && !uploadRequest { return .ignore }
        return .join
    }

    public mutating func feed(_ v: OTAValue, _ o: inout OTASessionBuilder) {
        let e = v.event
        guard let parsed = Self.parse(v) else { return }
        let (header, body) = parsed
        switch Self.kind(header) {
        case .imageState: imageState(header, body, e, &o); return
        case .reset:
            if header.op == 2 { o.account(e, "reset"); o.beginPhase("reset", e) } else { o.account(e, "reset response") }
            return
        case .other: return
        case .upload: break
        }
        if header.op == 2 {
            o.account(e, "upload request")
            o.beginPhase("upload", e)
            guard let body, let off = body["off"]?.intValue, let data = body["data"]?.bytesValue else {
                o.session.findings.append(Finding(.warning, .otaError("image upload request without off/data"), frame: e.frame))
                return
            }
            if let len = body["len"]?.intValue { o.session.expectedSize = Int(clamping: len) }
            data.withUnsafeBytes { o.place($0, at: Int(clamping: off), frame: e.frame) }
            o.countPacket(e, bytes: data.count)
        } else if header.op == 3 {
            o.account(e, "upload response")
            let rc = McuMgrReturnCode(rawValue: body?["rc"]?.intValue ?? 0)
            if rc != .ok {
                o.fail(code: Int(clamping: rc.rawValue), name: rc.description, finding: "image upload failed: \(rc)", frame: e.frame)
            } else {
                o.lastResponseOK = true
                if let off = body?["off"]?.intValue, let size = o.session.expectedSize, Int(clamping: off) >= size {
                    uploadDone = true
                }
            }
        }
    }

    /// An image state write (test or confirm) or its response.
    mutating func imageState(_ h: SMPHeader, _ body: CBORValue?, _ e: AttributeValueEvent, _ o: inout OTASessionBuilder) {
        if h.op == 2 {
            let confirm = body?["confirm"] == .bool(true)
            o.account(e, confirm ? "image confirm" : "image test")
            o.beginPhase(confirm ? "confirm" : "test", e)
            pendingState = confirm
            return
        }
        guard let confirm = pendingState else { return }
        pendingState = nil
        o.account(e, "image state response")
        let rc = McuMgrReturnCode(rawValue: body?["rc"]?.intValue ?? 0)
        if rc != .ok {
            o.fail(
                code: Int(clamping: rc.rawValue), name: rc.description,
                finding: "image \(confirm ? "confirm" : "test") failed: \(rc)", frame: e.frame)
        } else {
            o.lastResponseOK = true
            if confirm { confirmed = true }
        }
    }

    public func finish(_ o: inout OTASessionBuilder, why: String, frame: Int) {
        if let failure = o.standingFailure {
            o.session.result = failure
        } else if uploadDone || confirmed {
            o.session.result = .success
        } else {
            o.cut(why, frame: frame)
        }
    }
}
