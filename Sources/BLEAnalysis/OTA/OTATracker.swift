import BLECodecs
import BLECore

/// Follows firmware updates: each protocol of ``profiles`` (Nordic Secure, legacy and buttonless DFU,
/// MCUmgr SMP image upload, Silicon Labs OTA, TI OAD, Dialog SUOTA, Espressif BLE OTA, Telink OTA,
/// Cypress bootloader) by its characteristics, and vendor protocols by the
/// `ota-start` / `ota-data` / `resend-request` / `ota-result` roles their codec specs give values.
///
/// A value on no OTA characteristic and without OTA roles costs one dictionary lookup. Sessions are
/// per connection (and per service for vendor protocols), so two updates at once on two
/// connections stay apart. A session still open at a disconnection or at the end of the capture
/// ends `incomplete` with a finding.
public struct OTATracker: AttributeValueObserver {
    /// The update protocols followed by characteristic. Adding one: a type conforming to
    /// ``OTAProfile`` in its own file, and one line here.
    public static let profiles: [any OTAProfile.Type] = [
        NordicSecureDFU.self,
        NordicLegacyDFU.self,
        McuMgrImageUpload.self,
        SiliconLabsOTA.self,
        NordicButtonlessDFU.self,
        TIOAD.self,
        DialogSUOTA.self,
        EspressifBLEOTA.self,
        TelinkOTA.self,
        CypressBootloader.self,
    ]

    /// Gaps between two events of a session longer than this are reported as stalls (µs).
    public var stallThreshold: Int64
    /// Finished sessions, sorted by start frame after ``finish(frame:timestamp:)``.
    public private(set) var sessions: [OTASession] = []

    public init(stallThreshold: Int64 = 200_000) {
        self.stallThreshold = stallThreshold
    }

    /// What `uuid` is to an update protocol (nil: no protocol uses it).
    public static func endpoint(of uuid: BluetoothUUID) -> OTAEndpoint? { endpoints[uuid]?.1 }

    /// Characteristic → (profile, endpoint), from every profile's ``OTAProfile/endpoints``.
    static let endpoints: [BluetoothUUID: (any OTAProfile.Type, OTAEndpoint)] = {
        var map: [BluetoothUUID: (any OTAProfile.Type, OTAEndpoint)] = [:]
        for p in profiles { for (uuid, endpoint) in p.endpoints { map[uuid] = (p, endpoint) } }
        return map
    }()

    struct Key: Hashable {
        var connectionNumber: Int
        var proto: OTAProtocol
        /// Vendor sessions: the service of the values (nil when unknown).
        var service: BluetoothUUID?
    }

    struct Open {
        var builder: OTASessionBuilder
        var profile: any OTAProfile
    }

    var open: [Key: Open] = [:]
    /// SMP reassembly per (connection number, direction), by the transfer tracker's reassembler.
    var smp: [SMPKey: SMPReassembler] = [:]
    struct SMPKey: Hashable { var connectionNumber: Int; var direction: Direction }

    // MARK: Observer

    public mutating func observe(_ event: AttributeValueEvent, value: RawSpan) {
        value.withUnsafeBytes { observe(event, bytes: $0) }
    }

    /// `bytes`: the value, borrowed for the call; the pointer goes no further than the profiles (``OTAValue``).
    mutating func observe(_ event: AttributeValueEvent, bytes: UnsafeRawBufferPointer) {
        if let decoded = event.decoded, !decoded.roles.isEmpty {
            let key = Key(connectionNumber: event.connectionNumber, proto: .vendor, service: event.service)
            if VendorOTA.claims(decoded.roles, sessionOpen: open[key] != nil) {
                deliver(VendorOTA.self, key, OTAValue(event: event, endpoint: .roles, bytes: bytes))
                return
            }
        }
        guard let uuid = event.characteristic, let hit = Self.endpoints[uuid] else { return }
        let (profile, endpoint) = hit
        let key = Key(connectionNumber: event.connectionNumber, proto: profile.protocolName)
        if endpoint == .smp {
            let smpKey = SMPKey(connectionNumber: event.connectionNumber, direction: event.direction)
            // A value that cannot open a message is dropped (the transfer tracker names it).
            let messages =
                (try? smp[smpKey, default: SMPReassembler()].feed(
                    bytes, frame: event.frame,
                    time: event.timestamp)) ?? []
            for m in messages {
                m.bytes.withUnsafeBytes { deliver(profile, key, OTAValue(event: event, endpoint: endpoint, bytes: $0)) }
            }
            return
        }
        deliver(profile, key, OTAValue(event: event, endpoint: endpoint, bytes: bytes))
    }

    public mutating func connectionEnded(connectionNumber: Int, frame: Int, timestamp: Timestamp, reason: String) {
        for key in open.keys where key.connectionNumber == connectionNumber {
            close(key, why: "disconnection (\(reason))", frame: frame)
        }
        for key in smp.keys where key.connectionNumber == connectionNumber { smp[key] = nil }
    }

    public mutating func finish(frame: Int, timestamp: Timestamp) {
        for key in open.keys { close(key, why: "the end of the capture", frame: frame) }
        sessions.sort { ($0.startFrame, $0.connectionNumber) < ($1.startFrame, $1.connectionNumber) }
    }

    // MARK: Sessions

    /// Hands a value to the session `P` has open under `key`, opening or restarting it as the profile says.
    mutating func deliver<P: OTAProfile>(_ type: P.Type, _ key: Key, _ value: OTAValue) {
        let current = open[key]?.profile as? P
        switch P.admission(value, open: current) {
        case .ignore: return
        case .join: break
        case let .restart(why): close(key, why: why, frame: value.event.frame)
        }
        let e = value.event
        var o =
            open.removeValue(forKey: key)
            ?? Open(
                builder: OTASessionBuilder(
                    OTASession(
                        protocolName: P.protocolName, connection: e.connection,
                        connectionNumber: e.connectionNumber, frame: e.frame, time: e.timestamp),
                    frame: e.frame, time: e.timestamp, stallThreshold: stallThreshold),
                profile: P())
        var profile = o.profile as? P ?? P()
        profile.feed(value, &o.builder)
        o.profile = profile
        if let why = o.builder.ended {
            finalize(&o, why: why, frame: e.frame)
            sessions.append(o.builder.session)
        } else {
            open[key] = o
        }
    }

    mutating func close(_ key: Key, why: String, frame: Int) {
        guard var o = open.removeValue(forKey: key) else { return }
        finalize(&o, why: why, frame: frame)
        sessions.append(o.builder.session)
    }

    func finalize(_ o: inout Open, why: String, frame: Int) {
        o.profile.finish(&o.builder, why: why, frame: frame)
        let s = o.builder.session
        if let expected = s.expectedSize, s.imageOffset + s.image.count != expected {
            o.builder.session.findings.append(
                Finding(
                    .warning, .otaNote("image has \(s.image.count) bytes, \(expected) announced"),
                    frame: s.endFrame))
        }
    }
}
