import BLECodecs
import BLECore

/// A vendor update protocol described by codec specs with OTA roles (SPEC_FORMAT.md, "Roles"):
/// `ota-start` (+ `total-count` packets, `total-size` bytes), `ota-data` (+ `sequence`),
/// `resend-request`, `message-terminator`, `ota-result`.
///
/// Every value with such roles on one connection and service joins one session, whichever spec
/// (or part of a spec) decoded it: the commands on a control characteristic and the image packets
/// on a data characteristic are one update. The image is rebuilt by packet index (the last copy of
/// a resent packet); each resend request is matched to the packet sent again after it.
public struct VendorOTA: OTAProfile {
    public static let protocolName = OTAProtocol.vendor
    /// Vendor sessions are found by roles, not by characteristic.
    public static let endpoints: [BluetoothUUID: OTAEndpoint] = [:]

    var chunks: [Int: [UInt8]] = [:]
    /// Resend requests not answered yet: packet index → position in ``OTASession/resends``.
    var requested: [Int: Int] = [:]
    var resultSeen = false

    public init() {}

    /// Whether a decoded value belongs to a vendor update (with or without an open session).
    static func claims(_ roles: [Role: RoleValue], sessionOpen: Bool) -> Bool {
        roles[.otaStart] != nil || roles[.otaData] != nil || roles[.resendRequest] != nil || roles[.otaResult] != nil
            || (roles[.messageTerminator] != nil && sessionOpen)
    }

    public static func admission(_ v: OTAValue, open: VendorOTA?) -> OTAAdmission {
        guard let d = v.event.decoded else { return .ignore }
        if d.roles[.otaStart] != nil, let open, open.sentAnything || open.resultSeen { return .restart("a new update") }
        return .join
    }

    var sentAnything: Bool { !chunks.isEmpty }

    public mutating func feed(_ v: OTAValue, _ o: inout OTASessionBuilder) {
        let e = v.event
        guard let d = e.decoded else { return }
        let r = d.roles
        o.session.retransmissionUnit = "index"
        if o.session.codec == nil {
            o.session.codec = d.codec
        } else if let codecs = o.session.codec, !codecs.split(separator: "+").contains(Substring(d.codec)) {
            o.session.codec = codecs + "+" + d.codec
        }
        if r[.otaStart] != nil {
            o.account(e, d.message)
            o.beginPhase("start", e)
            if let n = r[.totalCount]?.intValue { o.session.expectedPackets = Int(clamping: n) }
            if let n = r[.totalSize]?.intValue { o.session.expectedSize = Int(clamping: n) }
        }
        if let data = r[.otaData]?.bytesValue {
            let index = r[.sequence]?.intValue.map { Int(clamping: $0) } ?? (chunks.keys.max() ?? -1) + 1
            o.account(e, "\(d.message) \(index)")
            guard (0...OTASessionBuilder.maximumIndex).contains(index) else {
                o.session.findings.append(Finding(.warning, .otaError("packet index \(index) out of range: ignored"), frame: e.frame))
                return
            }
            o.beginPhase("transfer", e)
            if let old = chunks[index] {
                o.session.retransmittedPackets.append(index)
                o.session.retransmittedBytes += data.count
                if old != data {
                    o.session.findings.append(Finding(.warning, .otaNote("packet \(index) resent with different bytes"), frame: e.frame))
                }
            } else if let n = o.session.expectedPackets, index >= n {
                o.session.findings.append(Finding(.warning, .otaNote("packet \(index) beyond the announced \(n)"), frame: e.frame))
            }
            if let i = requested.removeValue(forKey: index) { o.session.resends[i].resentFrame = e.frame }
            chunks[index] = data
            o.countPacket(e, bytes: data.count)
        }
        if let index = r[.resendRequest]?.intValue {
            let i = Int(clamping: index)
            o.account(e, "\(d.message) \(i)")
            o.session.resendRequests.append(i)
            o.session.resends.append(OTAResend(index: i, requestFrame: e.frame))
            requested[i] = o.session.resends.count - 1
        }
        if r[.messageTerminator] != nil && r[.otaData] == nil {
            o.account(e, d.message)
            o.beginPhase("finish", e)
        }
        if let code = r[.otaResult]?.intValue {
            o.account(e, d.message)
            resultSeen = true
            let name =
                d.fields.first(where: {
                    if case let .named(v, n) = $0.value { return v == code && n != nil } else { return false }
                }).flatMap { field -> String? in if case let .named(_, n) = field.value { n } else { nil } } ?? "result \(code)"
            switch d.otaSuccess {
            case true?: o.session.result = .success
            case false?: o.session.result = .failure(code: Int(clamping: code), name: name)
            case nil: o.session.result = code == 0 ? .success : .failure(code: Int(clamping: code), name: name)
            }
            if case .failure = o.session.result {
                o.session.findings.append(Finding(.error, .otaError("update failed: \(name)"), frame: e.frame))
            }
            if !requested.isEmpty {
                o.session.findings.append(
                    Finding(.warning, .otaNote("resend requested but never sent: \(indexList(requested.keys.sorted()))"), frame: e.frame))
            }
            o.ended = "result"
        }
    }

    public func finish(_ o: inout OTASessionBuilder, why: String, frame: Int) {
        if !resultSeen { o.cut(why, frame: frame) }
        // Rebuild the image from the packets by index (the last copy of a resent one).
        guard let maxIndex = chunks.keys.max() else { return }
        var image: [UInt8] = []
        var missing: [Int] = []
        let upper = max(maxIndex + 1, min(o.session.expectedPackets ?? 0, OTASessionBuilder.maximumIndex + 1))
        for i in 0..<upper {
            if let c = chunks[i] { image += c } else { missing.append(i) }
        }
        if !missing.isEmpty {
            o.session.findings.append(Finding(.warning, .otaMissingPackets(missing), frame: o.session.endFrame))
            if case .success = o.session.result {
                o.session.result = .incomplete("packets missing but the device reported success")
            }
        }
        o.session.image = image
    }
}
