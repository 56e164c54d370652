import BLEAnalysis
import BLECore

/// A link's security record (``LinkSecurity``) as JSON, the `security` object of each connection in `report --format
/// json` (`schemas/security.schema.json#/$defs/linkSecurity`): every pairing with its association model and keys, every
/// encryption session with its key size in force and where that size comes from (`observed`, `inferred`, or null: not
/// in the log).
public enum SecurityJSON {
    public static func write(_ c: Connection, to w: inout JSONWriter) {
        let r = c.machine.securityRecord
        w.beginObject("security")
        w.beginArray("pairings")
        for p in r.pairings { pairing(p, to: &w) }
        w.endArray()
        w.beginArray("sessions")
        for s in r.sessions { session(s, isLE: c.isLE, to: &w) }
        w.endArray()
        if let b = r.bond {
            w.beginObject("bond")
            w.field("connection", b.connection)
            w.field("pairing_frame", b.pairing.frame)
            w.endObject()
        } else {
            w.fieldNull("bond")
        }
        w.beginArray("stored_key_answers")
        for a in r.storedKeyAnswers {
            w.beginObject()
            w.field("frame", a.frame)
            w.field("found", a.found)
            w.endObject()
        }
        w.endArray()
        w.beginObject("addresses")
        address(r.addresses[.local], "local", to: &w)
        address(r.addresses[.peer], "peer", to: &w)
        w.endObject()
        for (kind, key) in [
            (HostSecuritySetting.Kind.secureConnectionsHost, "secure_connections_host"), (.simplePairingMode, "simple_pairing_mode"),
            (.authenticationEnable, "authentication_enable"),
        ] {
            if let setting = r.hostSettings[kind] {
                w.beginObject(key)
                w.field("on", setting.on)
                w.field("frame", setting.frame)
                w.field("shown_by", setting.shownBy)
                w.endObject()
            } else {
                w.fieldNull(key)
            }
        }
        if let a = r.authenticationStart {
            w.beginObject("authentication_start")
            w.field("by", a.byThisSide ? "this side" : "peer")
            w.field("frame", a.frame)
            w.field("shown_by", a.shownBy)
            w.endObject()
        } else {
            w.fieldNull("authentication_start")
        }
        w.endObject()
    }

    /// `"privacy"`: this side's resolvable private addresses (LE Set Random Address) and each peer identity seen behind
    /// more than one (`schemas/security.schema.json#/$defs/privacy`).
    public static func privacy(_ r: AddressRotation, to w: inout JSONWriter) {
        w.beginObject("privacy")
        w.beginArray("own_rpas")
        for a in r.own {
            w.beginObject()
            w.field("controller", Int(a.controller))
            w.field("frame", a.frame)
            w.field("time", a.timestamp)
            w.field("address", a.address)
            w.endObject()
        }
        w.endArray()
        w.field("own_rpas_omitted", r.ownOmitted)
        w.field("own_median_interval_s", r.ownMedianIntervalSeconds, decimals: 1)
        w.beginArray("peers")
        for p in r.peers {
            w.beginObject()
            w.field("identity", p.identity)
            w.beginArray("addresses")
            for a in p.addresses {
                w.beginObject()
                w.field("connection", a.connection)
                w.field("address", a.address)
                w.field("frame", a.frame)
                w.endObject()
            }
            w.endArray()
            w.endObject()
        }
        w.endArray()
        w.endObject()
    }

    /// A side's address on the link (``SeenAddress``), or null: not in the log.
    static func address(_ a: SeenAddress?, _ key: String, to w: inout JSONWriter) {
        guard let a else { return w.fieldNull(key) }
        w.beginObject(key)
        w.field("kind", a.kind.rawValue)
        w.field("address", a.address)
        w.field("identity", a.identity)
        w.field("frame", a.frame)
        w.field("shown_by", a.shownBy)
        w.field("own_address_type_frame", a.ownAddressTypeFrame)
        w.endObject()
    }

    static func pairing(_ p: SecurityPairing, to w: inout JSONWriter) {
        w.beginObject()
        w.field("frame", p.frame)
        w.field("response_frame", p.responseFrame)
        w.field("procedure", p.procedure?.rawValue)
        w.field("initiator", p.initiator?.rawValue)
        w.field("model", p.model?.rawValue)
        w.field("model_source", p.modelSource?.kind)
        w.field("mitm_requested", p.mitmRequested)
        w.beginArray("mitm_asked_by")
        for s in p.mitmAskedBy.sorted(by: { $0.rawValue < $1.rawValue }) { w.value(s.rawValue) }
        w.endArray()
        switch p.passkey {
        case .shownBy(let s)?: w.field("passkey_shown_by", s.rawValue)
        case .bothType?: w.field("passkey_shown_by", "neither")
        case nil: w.fieldNull("passkey_shown_by")
        }
        w.field("authenticated", p.authenticated)
        w.field("bonding", p.bonding)
        w.field("key_size", p.keySize)
        w.beginArray("offered_key_sizes")
        for k in p.offeredKeySizes { w.value(k) }
        w.endArray()
        w.beginArray("io_capabilities")
        for io in p.ioCapabilities { w.value(io) }
        w.endArray()
        w.field("curve", p.curve)
        w.field("debug_key_frame", p.debugKeyFrame)
        w.field("link_key_type", p.linkKeyType?.description)
        if let a = p.userAnswer {
            w.beginObject("user_answer")
            w.field("accepted", a.accepted)
            w.field("verb", a.verb)
            w.field("request_frame", a.requestFrame)
            w.field("frame", a.frame)
            w.field("microseconds", a.microseconds)
            w.endObject()
        } else {
            w.fieldNull("user_answer")
        }
        w.field("keys_central", p.distributed[.local]?.description)
        w.field("keys_peripheral", p.distributed[.peer]?.description)
        identity(p.identities[.local], "identity_central", to: &w)
        identity(p.identities[.peer], "identity_peripheral", to: &w)
        switch p.outcome {
        case .unfinished:
            w.field("outcome", "unfinished")
            w.fieldNull("outcome_frame")
            w.fieldNull("failure")
        case .completed(let f):
            w.field("outcome", "completed")
            w.field("outcome_frame", f)
            w.fieldNull("failure")
        case .failed(let f, let by, let reason):
            w.field("outcome", "failed")
            w.field("outcome_frame", f)
            w.field("failure", (by.map { "\($0.rawValue): " } ?? "") + reason)
        }
        w.field("requires_secure_connections", p.requiresSecureConnections)
        w.endObject()
    }

    static func identity(_ id: DistributedIdentity?, _ key: String, to w: inout JSONWriter) {
        guard let id else { return w.fieldNull(key) }
        w.beginObject(key)
        w.field("frame", id.frame)
        w.field("irk_zero", id.irkIsZero)
        w.field("address", id.address)
        w.endObject()
    }

    static func session(_ s: EncryptionSession, isLE: Bool, to w: inout JSONWriter) {
        w.beginObject()
        w.field("start_frame", s.startFrame)
        w.field("ediv", s.ediv)
        w.field("rand", s.rand.map { hex($0, width: 16) })
        switch s.origin {
        case .pairing(let f)?: w.field("key", "pairing at \(f)")
        case .stored?: w.field("key", "stored")
        case nil: w.fieldNull("key")
        }
        w.field("on_frame", s.onFrame)
        w.field("off_frame", s.offFrame)
        w.field("failure", s.failure)
        w.field("algorithm", s.algorithm(isLE: isLE))
        w.field("key_size", s.keySize)
        w.field("key_size_source", s.keySizeSource?.kind)
        w.field("key_size_basis", s.keySizeSource?.description ?? "not in the log")
        w.beginArray("refresh_frames")
        for f in s.refreshFrames { w.value(f) }
        w.endArray()
        w.beginArray("pause_frames")
        for f in s.pauseFrames { w.value(f) }
        w.endArray()
        w.endObject()
    }
}
