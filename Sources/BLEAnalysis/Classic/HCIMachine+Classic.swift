import BLECapture
import BLECore
import BLEProtocols

/// What the HCI machine holds for BR/EDR links between their events: the role a page implies until the link opens,
/// names asked before the link, supervision timeouts written and not yet answered.
struct ClassicHCIState {
    /// By (controller, peer address): the role this side will have, with the frame and why (paged, accepted, switched).
    var pendingRoles: [String: (role: Connection.Role, source: FactSource)] = [:]
    /// A Role Change before the link's Connection Complete, beside a held page: the switch follows the page's fact, so
    /// who paged whom is not lost when the accepting side becomes central (Accept Connection Request, role 0x00).
    var pendingSwitches: [String: (role: Connection.Role, frame: Int)] = [:]
    /// Names from Remote Name Request Complete for peers with no open link yet.
    var names: [String: (name: String, frame: Int)] = [:]
    /// Classes of Device from Connection Request or inquiry answers for peers with no open link yet.
    var classes: [String: (cod: UInt32, frame: Int)] = [:]
    /// Write Link Supervision Timeout sent, by (controller << 16 | handle): the value, until its Command Complete.
    var pendingTimeouts: [UInt32: UInt16] = [:]
    /// This side's security settings per controller (``HostSecuritySetting``), and the Writes awaiting their Command
    /// Complete.
    var hostSettings: [UInt16: [HostSecuritySetting.Kind: HostSecuritySetting]] = [:]
    var hostSettingWrites: [UInt16: [HostSecuritySetting.Kind: HostSecuritySetting]] = [:]

    /// By (controller, peer address): the user step the controller asked this side about (User Confirmation or
    /// Passkey Request), until the host answers it.
    var pendingUserSteps: [String: (frame: Int, timestamp: Timestamp)] = [:]

    static func key(_ controller: UInt16, _ address: String) -> String { "\(controller)/\(address)" }
    /// Bound on the held entries (a hostile log could page a new address per record).
    static let maxHeld = 4096
}

/// The BR/EDR events that state a link's facts (role, mode, subrating, supervision timeout, packet types, the remote's
/// version, features and name) and the SCO/eSCO links beside the ACL (Core Spec Vol 4, Part E, 7.1, 7.2, 7.7).
extension HCIMachine {
    /// A BR/EDR command the link facts or the synchronous links follow; the others pass.
    func classicCommand(_ packet: HCICommandPacket, _ record: CaptureRecord) {
        noteHostSecurityWrite(packet, record)
        guard case .declared(let d) = packet.decoded else { return }
        let controller = record.controllerIndex, frame = record.frame
        switch d.value {
        case let c as CreateConnection:
            holdRole(
                .central, controller: controller, address: c.address.description, source: .inferred(.paging(frame: frame, accepted: false)))
        case let a as AcceptConnectionRequest:
            // Remaining peripheral is the role now; becoming central comes with a Role Change. The peer's page shows
            // first at its Connection Request event, held already: that frame stays the fact's (where the page came in).
            let held = classic.pendingRoles[ClassicHCIState.key(controller, a.address.description)]?.source
            if case .inferred(.paging(_, accepted: true))? = held { break }
            holdRole(
                .peripheral, controller: controller, address: a.address.description,
                source: .inferred(.paging(frame: frame, accepted: true)))
        case let w as WriteLinkSupervisionTimeout:
            if classic.pendingTimeouts.count < ClassicHCIState.maxHeld {
                classic.pendingTimeouts[UInt32(controller) << 16 | UInt32(w.handle & 0x0FFF)] = w.timeout
            }
        case let s as SetupSynchronousConnection:
            requestSynchronous(
                SetupSynchronousConnection.name, coding: VoiceSetting.airCoding(s.voiceSetting), packetTypes: s.packetType,
                handle: s.handle,
                address: nil, record)
        case let s as EnhancedSetupSynchronousConnection:
            requestSynchronous(
                EnhancedSetupSynchronousConnection.name, coding: s.settings.transmitCoding.description, packetTypes: s.settings.packetType,
                handle: s.handle, address: nil, record)
        case let a as AcceptSynchronousConnectionRequest:
            requestSynchronous(
                AcceptSynchronousConnectionRequest.name, coding: VoiceSetting.airCoding(a.voiceSetting), packetTypes: a.packetType,
                handle: nil, address: a.address.description, record)
        case let a as EnhancedAcceptSynchronousConnectionRequest:
            requestSynchronous(
                EnhancedAcceptSynchronousConnectionRequest.name, coding: a.settings.transmitCoding.description,
                packetTypes: a.settings.packetType, handle: nil, address: a.address.description, record)
        default:
            break
        }
    }

    /// The Command Status of a synchronous setup: a refusal is the attempt's end.
    func classicCommandStatus(_ opcode: HCICommand, status: HCIStatus, _ record: CaptureRecord) {
        switch opcode {
        case SetupSynchronousConnection.opcode, EnhancedSetupSynchronousConnection.opcode, AcceptSynchronousConnectionRequest.opcode,
            EnhancedAcceptSynchronousConnectionRequest.opcode:
            synchronous.commandStatus(status, controller: record.controllerIndex, frame: record.frame, timestamp: record.timestamp)
        default:
            break
        }
    }

    /// The Command Complete of Write Link Supervision Timeout (7.3.42): the timeout written is the link's from here.
    func classicCommandComplete(_ cc: CommandComplete, _ record: CaptureRecord) {
        noteHostSecurityAnswer(cc, record)
        guard cc.opcode == WriteLinkSupervisionTimeout.opcode, cc.returnParameters.count >= 3 else { return }
        let handle = (UInt16(cc.returnParameters[1]) | UInt16(cc.returnParameters[2]) << 8) & 0x0FFF
        let key = UInt32(record.controllerIndex) << 16 | UInt32(handle)
        guard let timeout = classic.pendingTimeouts.removeValue(forKey: key), cc.status == .success else { return }
        classicFact(.supervisionTimeout(timeout), handle: handle, record, shownBy: WriteLinkSupervisionTimeout.name)
    }

    /// A BR/EDR event the link facts follow; returns its timeline note, nil when it is not one of them.
    func classicEvent(_ value: any HCIParameterSet, _ record: CaptureRecord) -> HCIEventNote? {
        switch value {
        case let r as RoleChange:
            roleChanged(r, record)
            return HCIEventNote(status: r.status.description)
        case let m as ModeChange:
            if m.status == .success {
                classicFact(.mode(LinkMode(mode: m.mode, interval: m.interval)), handle: m.handle, record, shownBy: ModeChange.name)
            }
            return HCIEventNote(status: m.status.description, handle: m.handle & 0x0FFF)
        case let s as SniffSubrating:
            if s.status == .success {
                let v = SniffSubratingValues(
                    maxTxLatency: s.maxTxLatency, maxRxLatency: s.maxRxLatency, minRemoteTimeout: s.minRemoteTimeout,
                    minLocalTimeout: s.minLocalTimeout)
                classicFact(.subrating(v), handle: s.handle, record, shownBy: SniffSubrating.name)
            }
            return HCIEventNote(status: s.status.description, handle: s.handle & 0x0FFF)
        case let t as LinkSupervisionTimeoutChanged:
            classicFact(.supervisionTimeout(t.timeout), handle: t.handle, record, shownBy: LinkSupervisionTimeoutChanged.name)
            return HCIEventNote(handle: t.handle & 0x0FFF)
        case let p as ConnectionPacketTypeChanged:
            if p.status == .success {
                classicFact(
                    .packetTypes(p.packetType), handle: p.handle, record, shownBy: ConnectionPacketTypeChanged.name, beforeComplete: true)
            }
            return HCIEventNote(status: p.status.description, handle: p.handle & 0x0FFF)
        case let m as MaxSlotsChange:
            classicFact(.maxSlots(m.maxSlots), handle: m.handle, record, shownBy: MaxSlotsChange.name, beforeComplete: true)
            return HCIEventNote(handle: m.handle & 0x0FFF)
        case let f as ReadRemoteSupportedFeaturesComplete:
            if f.status == .success {
                classicFact(.remoteFeatures(f.features), handle: f.handle, record, shownBy: ReadRemoteSupportedFeaturesComplete.name)
            }
            return HCIEventNote(status: f.status.description, handle: f.handle & 0x0FFF)
        case let v as ReadRemoteVersionInformationComplete:
            // LE links ask it too: a fact of BR/EDR links only here (``ClassicLinkFacts``), never a transport clue.
            if v.status == .success {
                let version = RemoteVersion(version: v.version, company: v.companyIdentifier, subversion: v.subversion)
                classicFact(.remoteVersion(version), handle: v.handle, record, shownBy: nil)
            }
            return HCIEventNote(status: v.status.description, handle: v.handle & 0x0FFF)
        case let n as RemoteNameRequestComplete:
            if n.status == .success {
                remoteNamed(n, record)
                named(n, record)
            }
            return HCIEventNote(status: n.status.description)
        case let c as SynchronousConnectionComplete:
            synchronousCompleted(
                status: c.status, handle: c.handle, address: c.address.description, linkType: c.linkType,
                timing: (c.transmissionInterval, c.retransmissionWindow, c.rxPacketLength, c.txPacketLength), airMode: c.airMode, record)
            return HCIEventNote(status: c.status.description, handle: c.status == .success ? c.handle & 0x0FFF : nil)
        case let c as SynchronousConnectionChanged:
            synchronous.changed(c, controller: record.controllerIndex, frame: record.frame)
            return HCIEventNote(status: c.status.description, handle: c.handle & 0x0FFF)
        case let r as ConnectionRequest where r.linkType == SynchronousLinkType.acl:
            classOfDevice(r.classOfDevice, address: r.address.description, record)
            holdRole(
                .peripheral, controller: record.controllerIndex, address: r.address.description,
                source: .inferred(.paging(frame: record.frame, accepted: true)))
            return HCIEventNote()
        default:
            return nil
        }
    }

    /// Connection Complete with link type SCO (7.7.3): a synchronous link, not an ACL one.
    func scoConnectionComplete(_ c: ConnectionComplete, _ record: CaptureRecord) {
        synchronousCompleted(
            status: c.status, handle: c.handle, address: c.address.description, linkType: SynchronousLinkType.sco, timing: nil,
            airMode: nil,
            record)
    }

    /// The role and name held for the peer of a BR/EDR link that just opened.
    func classicLinkOpened(_ link: Int, address: String, _ record: CaptureRecord) {
        let key = ClassicHCIState.key(record.controllerIndex, address)
        if let held = classic.pendingRoles.removeValue(forKey: key) {
            links.feed(.role(held.role), link: link, frame: record.frame, timestamp: record.timestamp, source: held.source)
        }
        if let switched = classic.pendingSwitches.removeValue(forKey: key) {
            links.feed(
                .classic(.roleSwitched(switched.role)), link: link, frame: record.frame, timestamp: record.timestamp,
                source: .observed(frame: switched.frame))
        }
        for setting in (classic.hostSettings[record.controllerIndex] ?? [:]).values {
            links.feed(.security(.hostSetting(setting)), link: link, frame: record.frame, timestamp: record.timestamp)
        }
        if let held = classic.classes.removeValue(forKey: key) {
            links.feed(
                .classic(.classOfDevice(held.cod)), link: link, frame: record.frame, timestamp: record.timestamp,
                source: .observed(frame: held.frame))
        }
        if let named = classic.names.removeValue(forKey: key) {
            links.feed(
                .classic(.remoteName(named.name)), link: link, frame: record.frame, timestamp: record.timestamp,
                source: .observed(frame: named.frame))
        }
    }

    /// A Disconnection Complete for a synchronous link's handle: that link's end (its evidence names the ACL), and true;
    /// false when the handle is no synchronous link's.
    func synchronousDisconnected(_ d: DisconnectionComplete, _ record: CaptureRecord) -> Bool {
        guard
            let l = synchronous.disconnected(
                handle: d.handle, status: d.status, reason: d.reason, controller: record.controllerIndex, frame: record.frame,
                timestamp: record.timestamp)
        else { return false }
        if sink.recordsEvidence {
            sink.evidence(
                .synchronousDisconnected(handle: d.handle & 0x0FFF, status: d.status, reason: d.reason, link: l.number),
                frame: record.frame,
                timestamp: record.timestamp, controller: record.controllerIndex, connection: l.aclConnection)
        }
        return true
    }

    // MARK: helpers

    private func holdRole(_ role: Connection.Role, controller: UInt16, address: String, source: FactSource) {
        guard classic.pendingRoles.count < ClassicHCIState.maxHeld else { return }
        let key = ClassicHCIState.key(controller, address)
        classic.pendingRoles[key] = (role, source)
        classic.pendingSwitches[key] = nil
    }

    /// A BR/EDR fact for the link on `handle` (inferring one for a handle no event opened); `shownBy` names the event
    /// that proves the link BR/EDR when its transport was not known (nil: the event is not BR/EDR's alone).
    /// A BR/EDR fact for the link on `handle`; an event `shownBy` names BR/EDR makes a link that started before the log,
    /// unless it may come `beforeComplete`: controllers send Connection Packet Type Changed and Max Slots Change for an
    /// incoming link a few ms before its Connection Complete (the Sony log: 3 ms before each), which is no link yet.
    private func classicFact(
        _ input: ClassicLinkInput, handle: UInt16, _ record: CaptureRecord, shownBy: String?, beforeComplete: Bool = false
    ) {
        let h = handle & 0x0FFF, controller = record.controllerIndex
        if synchronous.isOpen(controller: controller, handle: h) { return }
        let infer = shownBy != nil && !beforeComplete
        guard let i = links.link(controller: controller, handle: h, frame: record.frame, timestamp: record.timestamp, infer: infer)
        else { return }
        if let shownBy {
            links.feed(
                .transport(.bredr), link: i, frame: record.frame, timestamp: record.timestamp,
                source: .inferred(.transportShownBy(frame: record.frame, what: shownBy)))
        }
        links.feed(.classic(input), link: i, frame: record.frame, timestamp: record.timestamp)
    }

    /// Role Change (7.7.18) names the peer, not the handle: the open BR/EDR link to it, or the one about to open.
    private func roleChanged(_ r: RoleChange, _ record: CaptureRecord) {
        guard r.status == .success else { return }
        let role: Connection.Role = r.role == 0 ? .central : .peripheral
        let address = r.address.description
        if let i = links.link(controller: record.controllerIndex, peer: address) {
            links.feed(.classic(.roleSwitched(role)), link: i, frame: record.frame, timestamp: record.timestamp)
        } else {
            let key = ClassicHCIState.key(record.controllerIndex, address)
            if case .inferred(.paging)? = classic.pendingRoles[key]?.source {
                if classic.pendingSwitches.count < ClassicHCIState.maxHeld { classic.pendingSwitches[key] = (role, record.frame) }
            } else {
                holdRole(role, controller: record.controllerIndex, address: address, source: .observed(frame: record.frame))
            }
        }
    }

    /// A peer's Class of Device to its open link, or held until the link opens (the latest kept).
    func classOfDevice(_ cod: UInt32, address: String, _ record: CaptureRecord) {
        if let i = links.link(controller: record.controllerIndex, peer: address) {
            links.feed(.classic(.classOfDevice(cod)), link: i, frame: record.frame, timestamp: record.timestamp)
        } else if classic.classes.count < ClassicHCIState.maxHeld {
            classic.classes[ClassicHCIState.key(record.controllerIndex, address)] = (cod, record.frame)
        }
    }

    private func remoteNamed(_ n: RemoteNameRequestComplete, _ record: CaptureRecord) {
        let address = n.address.description
        if let i = links.link(controller: record.controllerIndex, peer: address) {
            links.feed(.classic(.remoteName(n.remoteName.text)), link: i, frame: record.frame, timestamp: record.timestamp)
        } else if classic.names.count < ClassicHCIState.maxHeld {
            classic.names[ClassicHCIState.key(record.controllerIndex, address)] = (n.remoteName.text, record.frame)
        }
    }

    private func requestSynchronous(
        _ name: String, coding: String?, packetTypes: UInt16, handle: UInt16?, address: String?, _ record: CaptureRecord
    ) {
        let controller = record.controllerIndex
        var acl: Int? = nil
        var peer = address
        if let h = handle,
            let i = links.link(controller: controller, handle: h & 0x0FFF, frame: record.frame, timestamp: record.timestamp, infer: false)
        {
            acl = links.number(controller: controller, handle: h & 0x0FFF)
            peer = links.peer(link: i)
        } else if let address, let i = links.link(controller: controller, peer: address) {
            acl = links.connectionNumber(link: i)
        }
        synchronous.requested(
            name, coding: coding, packetTypes: packetTypes, acl: acl, peer: peer, controller: controller, frame: record.frame)
    }

    private func synchronousCompleted(
        status: HCIStatus, handle: UInt16, address: String, linkType: UInt8, timing: (UInt8, UInt8, UInt16, UInt16)?, airMode: AirMode?,
        _ record: CaptureRecord
    ) {
        let controller = record.controllerIndex
        let acl = links.link(controller: controller, peer: address).map { links.connectionNumber(link: $0) }
        let number = synchronous.completed(
            status: status, handle: handle, peer: address, linkType: linkType, timing: timing, airMode: airMode, acl: acl,
            controller: controller, frame: record.frame, timestamp: record.timestamp)
        if sink.recordsEvidence, let number {
            sink.evidence(
                .synchronousConnectionComplete(
                    handle: handle & 0x0FFF, status: status, peer: address, linkType: linkType, airMode: airMode,
                    link: number), frame: record.frame, timestamp: record.timestamp, controller: controller,
                connection: acl)
        }
    }
}

extension HCIParameterSet {
    /// The command's opcode, for a declared command.
    static var opcode: HCICommand {
        if case .command(let c) = carrier { return c }
        return HCICommand(0)
    }
}
