import BLECore

/// A TI OAD external control opcode (BLE5-Stack `OAD_EXT_CTRL_*`), written to 0xFFC5 and echoed
/// as the first byte of its notifications.
public struct TIOADControlOpcode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let getBlockSize = TIOADControlOpcode(rawValue: 0x01)
    public static let imageCount = TIOADControlOpcode(rawValue: 0x02)
    public static let startOAD = TIOADControlOpcode(rawValue: 0x03)
    public static let enableImage = TIOADControlOpcode(rawValue: 0x04)
    public static let cancelOAD = TIOADControlOpcode(rawValue: 0x05)
    public static let disableBlockNotifications = TIOADControlOpcode(rawValue: 0x06)
    public static let getSoftwareVersion = TIOADControlOpcode(rawValue: 0x07)
    public static let getImageStatus = TIOADControlOpcode(rawValue: 0x08)
    public static let getProfileVersion = TIOADControlOpcode(rawValue: 0x09)
    public static let getDeviceType = TIOADControlOpcode(rawValue: 0x10)
    public static let getImageInfo = TIOADControlOpcode(rawValue: 0x11)
    /// Notification: `12 status-of-the-previous-block blockNumber(u32 LE)`, the next block the target wants.
    public static let blockRequest = TIOADControlOpcode(rawValue: 0x12)
    public static let eraseBonds = TIOADControlOpcode(rawValue: 0x13)
    public static let names = OTACodeTable<TIOADControlOpcode>(
        [
            .getBlockSize: "Get block size", .imageCount: "Image count", .startOAD: "Start OAD", .enableImage: "Enable image",
            .cancelOAD: "Cancel OAD", .disableBlockNotifications: "Disable block notifications",
            .getSoftwareVersion: "Get software version", .getImageStatus: "Get image status",
            .getProfileVersion: "Get profile version", .getDeviceType: "Get device type", .getImageInfo: "Get image info",
            .blockRequest: "Block request", .eraseBonds: "Erase bonds",
        ],
        unknown: { "control \(hex($0.rawValue))" })
    public var description: String { Self.names[self] }
}

/// A TI OAD status (`OAD_SUCCESS` … `OAD_IMG_ID_TIMEOUT`).
public struct TIOADStatus: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public static let success = TIOADStatus(rawValue: 0)
    public static let downloadComplete = TIOADStatus(rawValue: 14)
    public static let names = OTACodeTable<TIOADStatus>(
        [
            .success: "Success", .init(rawValue: 1): "CRC error", .init(rawValue: 2): "Flash error",
            .init(rawValue: 3): "Buffer overflow (block number not the one requested)", .init(rawValue: 4): "Already started",
            .init(rawValue: 5): "Not started", .init(rawValue: 6): "Download not complete", .init(rawValue: 7): "No resources",
            .init(rawValue: 8): "Image too big", .init(rawValue: 9): "Incompatible image", .init(rawValue: 10): "Invalid file",
            .init(rawValue: 11): "Incompatible file", .init(rawValue: 12): "Authorization failed",
            .init(rawValue: 13): "Control command not supported", .downloadComplete: "Download complete",
            .init(rawValue: 15): "CCCD not enabled", .init(rawValue: 16): "Image identify timeout",
        ],
        unknown: { "Status(\(hex($0.rawValue)))" })
    public var description: String { Self.names[self] }
}

/// TI OAD, enhanced (BLE5-Stack, CC13xx/CC26xx; service F000FFC0-0451-4000-B000-000000000000):
/// the image header's identify payload on 0xFFC1 (answered by a status), Get block size and Start
/// OAD on the external control point 0xFFC5, then the target asks for each block
/// (`12 status block`) and the distributor writes `block(u32 LE) data` to 0xFFC2; `12 0E`
/// (download complete), then Enable image (`04` → `04 00`).
///
/// A block the target asks for again (a failed write) is a resend request, matched to the block
/// written after it; the image is rebuilt by block number.
public struct TIOAD: OTAProfile {
    public static let protocolName = OTAProtocol.tiOAD
    public static let imageIdentify = BluetoothUUID("F000FFC1-0451-4000-B000-000000000000")!
    public static let imageBlock = BluetoothUUID("F000FFC2-0451-4000-B000-000000000000")!
    public static let externalControl = BluetoothUUID("F000FFC5-0451-4000-B000-000000000000")!
    /// The Image Identify characteristic.
    public static let identify = OTAEndpoint(rawValue: "identify")
    public static let endpoints: [BluetoothUUID: OTAEndpoint] = [
        imageIdentify: identify, imageBlock: .packet,
        externalControl: .control,
    ]

    var blocks: [Int: [UInt8]] = [:]
    var requested: [Int: Int] = [:]
    var highestRequested = -1
    var complete = false
    var enabled = false
    var cancelled = false

    public init() {}

    public static func admission(_ v: OTAValue, open: TIOAD?) -> OTAAdmission {
        if v.endpoint == identify && v.isSent {
            if let open, !open.blocks.isEmpty || open.enabled { return .restart("a new update") }
            return .join
        }
        return open == nil ? .ignore : .join
    }

    public mutating func feed(_ v: OTAValue, _ o: inout OTASessionBuilder) {
        let e = v.event
        o.session.retransmissionUnit = "index"
        switch (v.endpoint, v.isSent) {
        case (Self.identify, true):
            o.account(e, "Image identify")
            o.beginPhase("identify", e)
            // imgIdentifyPld_t: imgID[8], bimVer, metaVer, imgCpStat, crcStat, imgType, imgNo, len u32, softVer[4]
            if let len = v.le32(14) { o.session.expectedSize = len }
        case (Self.identify, false):
            o.account(e, "identify response")
            if let s = v.first.map(TIOADStatus.init(rawValue:)), s != .success {
                o.fail(code: Int(s.rawValue), name: s.description, finding: "image identify rejected: \(s)", frame: e.frame)
            } else {
                o.lastResponseOK = true
            }
        case (.packet, _):
            guard v.isSent, let index = v.le32(0) else { return }
            let data = Array(v.bytes[4...])
            o.account(e, "block \(index)")
            guard index <= OTASessionBuilder.maximumIndex else {
                o.session.findings.append(Finding(.warning, .otaError("block number \(index) out of range: ignored"), frame: e.frame))
                return
            }
            o.beginPhase("transfer", e)
            if let old = blocks[index] {
                o.session.retransmittedPackets.append(index)
                o.session.retransmittedBytes += data.count
                if old != data {
                    o.session.findings.append(Finding(.warning, .otaNote("block \(index) resent with different bytes"), frame: e.frame))
                }
            }
            if let i = requested.removeValue(forKey: index) { o.session.resends[i].resentFrame = e.frame }
            blocks[index] = data
            o.countPacket(e, bytes: data.count)
        case (_, true):
            let op = v.first.map(TIOADControlOpcode.init(rawValue:))
            o.account(e, op?.description ?? "control")
            switch op {
            case .startOAD?: o.beginPhase("transfer", e)
            case .enableImage?: o.beginPhase("enable", e)
            case .cancelOAD?: cancelled = true
            default: break
            }
        case (_, false):
            control(v, &o)
        }
    }

    /// External control notifications: block requests and command responses.
    mutating func control(_ v: OTAValue, _ o: inout OTASessionBuilder) {
        let e = v.event
        guard let first = v.first else { return }
        let op = TIOADControlOpcode(rawValue: first)
        if op == .blockRequest, v.count >= 6, let block = v.le32(2) {
            let status = TIOADStatus(rawValue: v[1])
            o.account(e, "block request \(block)")
            if status == .downloadComplete {
                complete = true
                o.lastResponseOK = true
                return
            }
            if status != .success {
                o.session.findings.append(
                    Finding(.warning, .otaNote("block write failed (\(status)), block \(block) requested"), frame: e.frame))
            }
            if block <= highestRequested || blocks[block] != nil {
                // Asked again: the target lost or rejected it.
                o.session.resendRequests.append(block)
                o.session.resends.append(OTAResend(index: block, requestFrame: e.frame))
                requested[block] = o.session.resends.count - 1
            }
            highestRequested = max(highestRequested, block)
            return
        }
        o.account(e, "response to \(op)")
        guard v.count >= 2 else { return }
        switch op {
        case .getBlockSize:
            o.lastResponseOK = true
        case .enableImage, .startOAD:
            let status = TIOADStatus(rawValue: v[1])
            if status == .success {
                o.lastResponseOK = true
                if op == .enableImage { enabled = true }
            } else {
                o.fail(code: Int(status.rawValue), name: status.description, finding: "\(op) failed: \(status)", frame: e.frame)
            }
        default:
            break
        }
    }

    public func finish(_ o: inout OTASessionBuilder, why: String, frame: Int) {
        if let failure = o.standingFailure {
            o.session.result = failure
        } else if cancelled {
            o.session.result = .aborted("Cancel OAD (0x05)")
        } else if complete && enabled {
            o.session.result = .success
        } else {
            o.cut(why, frame: frame)
        }
        if !requested.isEmpty {
            o.session.findings.append(
                Finding(
                    .warning, .otaNote("block requested again but never sent: \(indexList(requested.keys.sorted()))"),
                    frame: o.session.endFrame))
        }
        guard let maxIndex = blocks.keys.max() else { return }
        var image: [UInt8] = []
        var missing: [Int] = []
        for i in 0...maxIndex {
            if let b = blocks[i] { image += b } else { missing.append(i) }
        }
        if !missing.isEmpty {
            o.session.findings.append(Finding(.warning, .otaMissingPackets(missing), frame: o.session.endFrame))
            if case .success = o.session.result { o.session.result = .incomplete("blocks missing but the target enabled the image") }
        }
        o.session.image = image
    }
}
