import BLECapture
import BLECore
import BLEProtocols

/// Follows isochronous channels through an HCI log: CIGs and CISes, BIGs and BIG syncs, their data paths, and each
/// stream's ISO data, from the commands the host sent and the events the controller answered with (Core Spec Vol 4,
/// Part E, 7.7.65.25–30, 7.8.97–7.8.110). One per analyzer; its records and the pass's end in `ISOTracker+Records.swift`.
///
/// Streams are keyed by (controller, handle); a handle reused after its stream ended opens a new one. Data on a handle
/// no event established (a capture that starts mid-stream) is still counted, as a stream without parameters.
struct ISOTracker {
    struct Key: Hashable {
        var controller: UInt16
        var handle: UInt16
    }

    /// Bound on the streams kept (a hostile capture could establish one per record).
    static let maxStreams = 4096

    var streams: [ISOStream] = []
    var events: [ISOLifecycleEvent] = []
    var findings: [Finding] = []
    var open: [Key: Int] = [:]
    /// What the host asked: CIG parameters by (controller, CIG), the CIS IDs' handles once the controller answered.
    var cigRequests: [UInt32: LESetCIGParameters] = [:]
    var pendingCIG: [UInt16: LESetCIGParameters] = [:]
    var cisConfig: [Key: (cig: UInt8, cis: CIGParametersCIS, group: LESetCIGParameters)] = [:]
    var cisACL: [Key: UInt16] = [:]
    var peripheralCIS: Set<Key> = []
    var pendingCreateCIS: [UInt16: [CreateCISPair]] = [:]
    /// The frame of the LE Create CIS or LE CIS Request that asked for each CIS handle.
    var cisRequestFrame: [Key: Int] = [:]
    var bigRequests: [UInt32: LECreateBIG] = [:]
    var bigSyncRequests: [UInt32: LEBIGCreateSync] = [:]
    var bigInfo: [UInt32: LEBIGInfoAdvertisingReport] = [:]
    var bigHandles: [UInt32: [UInt16]] = [:]
    var pendingDataPath: [UInt16: LESetupISODataPath] = [:]
    var pendingRemoveDataPath: [UInt16: LERemoveISODataPath] = [:]
    var data = ISOData()
    /// Each stream direction's health, once the pass finished (``finish(findings:frame:)``).
    var health: [ISOStreamHealth] = []
    /// Whether the `iso.cut-by-capturer` finding was made (once per capture).
    var cutNoted = false

    /// Every (controller, handle) a CIS or BIS was established on.
    var isoHandles: Set<Key> = []

    /// True when (controller, handle) is or was an ISO stream: its Number Of Completed Packets are not ACL's (late
    /// completions after the stream ended included).
    @inline(__always)
    func isStream(controller: UInt16, handle: UInt16) -> Bool {
        !isoHandles.isEmpty && isoHandles.contains(Key(controller: controller, handle: handle))
    }

    static func key(_ controller: UInt16, _ id: UInt16) -> UInt32 { UInt32(controller) << 16 | UInt32(id) }

    // MARK: commands

    /// A command the host sent; only the isochronous ones are looked at.
    mutating func command(_ packet: HCICommandPacket, controller: UInt16, frame: Int, timestamp: Timestamp) {
        guard case .declared(let d) = packet.decoded else { return }
        if let p = d.as(LESetCIGParameters.self) {
            pendingCIG[controller] = p
        } else if let p = d.as(LECreateCIS.self) {
            pendingCreateCIS[controller] = p.pairs
            for pair in p.pairs {
                let key = Key(controller: controller, handle: pair.cisHandle & 0x0FFF)
                (cisACL[key], cisRequestFrame[key]) = (pair.aclHandle & 0x0FFF, frame)
            }
        } else if let p = d.as(LECreateBIG.self) {
            bigRequests[Self.key(controller, UInt16(p.bigHandle))] = p
        } else if let p = d.as(LEBIGCreateSync.self) {
            bigSyncRequests[Self.key(controller, UInt16(p.bigHandle))] = p
        } else if let p = d.as(LESetupISODataPath.self) {
            pendingDataPath[controller] = p
        } else if let p = d.as(LERemoveISODataPath.self) {
            pendingRemoveDataPath[controller] = p
        } else if let p = d.as(LERemoveCIG.self) {
            note(.cigRemoved, frame: frame, timestamp: timestamp, controller: controller, cig: p.cigID)
        } else if let p = d.as(LEBIGTerminateSync.self) {
            endBIG(controller: controller, big: p.bigHandle, kind: .bigSyncTerminated, reason: .success, frame: frame, timestamp: timestamp)
        } else if let p = d.as(LERejectCISRequest.self) {
            note(.cisRejected, frame: frame, timestamp: timestamp, controller: controller, handle: p.handle & 0x0FFF, status: p.reason)
        }
    }

    /// A Command Complete's return parameters.
    mutating func commandComplete(
        _ opcode: HCICommand, returns: HCIReturnParameters, controller: UInt16, frame: Int, timestamp: Timestamp
    ) {
        let status = returns.status ?? .success
        switch opcode.rawValue {
        case LESetCIGParameters.command.rawValue, LESetCIGParametersTest.command.rawValue:
            guard let asked = pendingCIG.removeValue(forKey: controller), status.rawValue == 0,
                case .declared(let d) = returns,
                let r = d.as(LESetCIGParametersReturn.self) ?? d.as(LESetCIGParametersTestReturn.self)?.base
            else { return }
            cigRequests[Self.key(controller, UInt16(asked.cigID))] = asked
            for (cis, handle) in zip(asked.cis, r.handles) {
                cisConfig[Key(controller: controller, handle: handle & 0x0FFF)] = (asked.cigID, cis, asked)
            }
            note(.cigConfigured, frame: frame, timestamp: timestamp, controller: controller, cig: asked.cigID)
        case LESetupISODataPath.command.rawValue:
            guard let p = pendingDataPath.removeValue(forKey: controller) else { return }
            addDataPath(p, status: status, controller: controller, frame: frame, timestamp: timestamp)
        case LERemoveISODataPath.command.rawValue:
            guard let p = pendingRemoveDataPath.removeValue(forKey: controller), status.rawValue == 0,
                let i = open[Key(controller: controller, handle: p.handle & 0x0FFF)]
            else { return }
            for j in streams[i].dataPaths.indices where streams[i].dataPaths[j].removedFrame == nil {
                let bit: UInt8 = streams[i].dataPaths[j].direction == .tx ? 1 : 2
                if p.directions & bit != 0 { streams[i].dataPaths[j].removedFrame = frame }
            }
            note(.dataPathRemoved, frame: frame, timestamp: timestamp, controller: controller, handle: p.handle & 0x0FFF)
        default:
            break
        }
    }

    /// A Command Status: the asynchronous ISO commands that failed at once.
    mutating func commandStatus(_ opcode: HCICommand, status: HCIStatus, controller: UInt16, frame: Int, timestamp: Timestamp) {
        guard status.rawValue != 0 else { return }
        switch opcode.rawValue {
        case LECreateCIS.command.rawValue:
            for pair in pendingCreateCIS.removeValue(forKey: controller) ?? [] {
                note(
                    .cisFailed, frame: frame, timestamp: timestamp, controller: controller, handle: pair.cisHandle & 0x0FFF, status: status)
            }
        case LECreateBIG.command.rawValue:
            note(.bigFailed, frame: frame, timestamp: timestamp, controller: controller, status: status)
        case LEBIGCreateSync.command.rawValue:
            note(.bigSyncFailed, frame: frame, timestamp: timestamp, controller: controller, status: status)
        default:
            break
        }
    }

    private mutating func addDataPath(_ p: LESetupISODataPath, status: HCIStatus, controller: UInt16, frame: Int, timestamp: Timestamp) {
        let handle = p.handle & 0x0FFF
        guard status.rawValue == 0 else {
            note(.dataPathFailed, frame: frame, timestamp: timestamp, controller: controller, handle: handle, status: status)
            return
        }
        if let i = open[Key(controller: controller, handle: handle)] {
            streams[i].dataPaths.append(
                ISODataPath(
                    direction: p.direction == 0 ? .tx : .rx, dataPathID: p.dataPathID, codec: p.codecID,
                    controllerDelayMicroseconds: p.controllerDelay, codecConfiguration: p.codecConfiguration, frame: frame))
        }
        note(.dataPathSetup, frame: frame, timestamp: timestamp, controller: controller, handle: handle)
    }

    mutating func note(
        _ kind: ISOLifecycleEvent.Kind, frame: Int, timestamp: Timestamp, controller: UInt16, handle: UInt16? = nil,
        cig: UInt8? = nil, big: UInt8? = nil, status: HCIStatus = .success
    ) {
        guard events.count < Self.maxStreams * 8 else { return }
        events.append(
            ISOLifecycleEvent(
                kind: kind, frame: frame, timestamp: timestamp, controller: controller, handle: handle, cigID: cig, bigHandle: big,
                status: status))
    }
}
