import BLECore
import BLEProtocols

/// What an HCI command or event is as the diagnosis's evidence (``EvidenceEvent/Kind``), and the connection handle it
/// names: a pure translation of typed packets, read from their declared parameter sets and typed cases, never from raw
/// opcode numbers. The analyzer adds the connection number and the frame.
enum HCIEvidence {
    /// A command the host sent, with the handle it names (nil when it names none).
    static func command(_ packet: HCICommandPacket) -> (handle: UInt16?, kind: EvidenceEvent.Kind)? {
        let kind: EvidenceEvent.Kind
        switch packet.opcode {
        case .leCreateConnection:
            guard case .leCreateConnection(let c) = packet.decoded else { return nil }
            kind = .createConnection(command: packet.opcode, peer: c.initiatorFilterPolicy == 0 ? c.peerAddress.description : nil)
        case .leExtendedCreateConnection:
            guard case .leExtendedCreateConnection(let c) = packet.decoded else { return nil }
            kind = .createConnection(command: packet.opcode, peer: c.initiatorFilterPolicy == 0 ? c.peerAddress.description : nil)
        case .leExtendedCreateConnectionV2:
            guard case .leExtendedCreateConnectionV2(let c) = packet.decoded else { return nil }
            let e = c.connection
            kind = .createConnection(command: packet.opcode, peer: e.initiatorFilterPolicy == 0 ? e.peerAddress.description : nil)
        case .leCreateConnectionCancel:
            kind = .createConnectionCancel
        case .leSetScanEnable, .leSetExtendedScanEnable:
            guard case .declared(let d) = packet.decoded else { return nil }
            if let s = d.value as? LESetScanEnable {
                kind = .scanEnableCommand(enabled: s.enable != 0)
            } else if let s = d.value as? LESetExtendedScanEnable {
                kind = .scanEnableCommand(enabled: s.enable != 0)
            } else {
                return nil
            }
        case _ where HCIEvidence.advertisingOpcodes.contains(packet.opcode):
            guard let a = advertisingCommand(packet) else { return nil }
            kind = a
        case .leSetRandomAddress:
            kind = .ownRandomAddressSet
        case .leAddDeviceToFilterAcceptList, .leRemoveDeviceFromFilterAcceptList, .leClearFilterAcceptList:
            // Address_Type, then the device's address (7.8.16, 7.8.17).
            let p = packet.parameters
            let address = p.count >= 7 ? BDAddress(p[1...6].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }).description : nil
            kind = .acceptListEdited(packet.opcode, address: address)
        case .disconnect:
            guard case .disconnect(let d) = packet.decoded else { return nil }
            kind = .disconnectCommand(handle: d.handle & 0x0FFF, reason: d.reason)
        case .readRemoteVersionInformation:
            guard let h = packet.connectionHandle else { return nil }
            kind = .remoteVersionAsked(handle: h)
        case .leEnableEncryption:
            guard let h = packet.connectionHandle else { return nil }
            kind = .encryptionStart(handle: h)
        case .leLongTermKeyRequestReply:
            guard let h = packet.connectionHandle else { return nil }
            kind = .longTermKeyReply(handle: h)
        case .leLongTermKeyRequestNegativeReply:
            guard let h = packet.connectionHandle else { return nil }
            kind = .longTermKeyNegativeReply(handle: h)
        case .leRemoteConnectionParameterRequestNegativeReply:
            guard case .leRemoteConnectionParameterRequestNegativeReply(let r) = packet.decoded else { return nil }
            kind = .remoteParameterNegativeReply(handle: r.handle & 0x0FFF, reason: r.reason)
        case .reset:
            kind = .reset
        case deleteStoredLinkKey:
            // BD_ADDR, then Delete_All_Flag (7.3.10): 1 deletes every key, whatever the address.
            let p = packet.parameters
            guard p.count >= 7 else { return nil }
            let address = BDAddress(p[0...5].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }).description
            kind = .storedLinkKeyDeleted(peer: p[6] == 1 ? nil : address)
        default:
            // Only the declared BR/EDR commands the diagnosis reads are decoded here (one set lookup for the rest).
            guard classicCommandOpcodes.contains(packet.opcode), case .declared(let d) = packet.decoded,
                let classic = classicCommand(d.value)
            else { return nil }
            return classic
        }
        return (packet.connectionHandle, kind)
    }

    /// Delete Stored Link Key (Core Spec Vol 4, Part E, 7.3.10).
    static let deleteStoredLinkKey = HCICommand(rawValue: 0x0C12)

    /// The declared BR/EDR commands ``classicCommand(_:)`` reads.
    static let classicCommands: [any HCIParameterSet.Type] = [
        CreateConnection.self, LinkKeyRequestReply.self, LinkKeyRequestNegativeReply.self, AuthenticationRequested.self,
        RemoteNameRequest.self, RemoteNameRequestCancel.self, WriteScanEnable.self,
    ]
    static let classicCommandOpcodes: Set<HCICommand> = Set(
        classicCommands.compactMap { if case .command(let c) = $0.carrier { c } else { nil } })

    /// The BR/EDR commands the diagnosis reads (Core Spec Vol 4, Part E: Create Connection 7.1.5, Link Key Request
    /// Reply 7.1.10 and Negative Reply 7.1.11, Authentication Requested 7.1.15), with the handle each names.
    static func classicCommand(_ command: any HCIParameterSet) -> (handle: UInt16?, kind: EvidenceEvent.Kind)? {
        switch command {
        case let c as CreateConnection: return (nil, .pageRequested(peer: c.address.description))
        case let r as LinkKeyRequestReply: return (nil, .linkKeyAnswer(peer: r.address.description, found: true))
        case let r as LinkKeyRequestNegativeReply: return (nil, .linkKeyAnswer(peer: r.address.description, found: false))
        case let a as AuthenticationRequested:
            let h = a.handle & 0x0FFF
            return (h, .authenticationRequested(handle: h))
        case let r as RemoteNameRequest: return (nil, .nameRequest(peer: r.address.description, cancel: false))
        case let r as RemoteNameRequestCancel: return (nil, .nameRequest(peer: r.address.description, cancel: true))
        case let w as WriteScanEnable:
            return (nil, .classicScanEnableCommand(inquiry: w.scanEnable & 0x01 != 0, page: w.scanEnable & 0x02 != 0))
        default: return nil
        }
    }

    /// An HCI event, with the handle it names.
    static func event(_ decoded: HCIEventParameters) -> (handle: UInt16?, kind: EvidenceEvent.Kind)? {
        switch decoded {
        case .declared(let d):
            return event(d.value)
        case .bluetoothQualityReport(let report) where report.reportID == .rootInflammation:
            let kind = EvidenceEvent.Kind.rootInflammation(
                errorCode: report.remaining.first ?? 0, vendorErrorCode: report.remaining.dropFirst().first ?? 0)
            return (nil, kind)
        case .bluetoothQualityReport(let report):
            guard let q = report.linkQuality else { return nil }
            let kind = EvidenceEvent.Kind.qualityReport(
                handle: q.handle, report: report.reportID, rssi: Int(q.rssi), snr: Int(q.snr), noRx: Int(q.noRxCount),
                retransmissions: Int(q.retransmissionCount))
            return (q.handle, kind)
        case .raw(let code, let p) where code == .hardwareError:
            return (nil, .hardwareError(code: p.first ?? 0))
        case .raw(let code, let p) where inquiryResults.contains(code):
            let peers = discoveredAddresses(p)
            return peers.isEmpty ? nil : (nil, .devicesDiscovered(peers: peers))
        case .raw(let code, let p) where code == .dataBufferOverflow:
            return (nil, .dataBufferOverflow(linkType: p.first ?? 0))
        case .raw(let code, let p) where code == .authenticatedPayloadTimeoutExpired && p.count >= 2:
            let h = (UInt16(p[0]) | UInt16(p[1]) << 8) & 0x0FFF
            return (h, .authenticatedPayloadTimeout(handle: h))
        default:
            return nil
        }
    }

    static let inquiryResults: Set<HCIEventCode> = [.inquiryResult, .inquiryResultWithRSSI, .extendedInquiryResult]

    /// The addresses an inquiry result lists: Num_Responses, then one 14-byte response each (BD_ADDR first), as BlueZ's
    /// `inquiry_info` / `inquiry_info_with_rssi` and Wireshark read them; an Extended Inquiry Result holds one. A
    /// response cut short is left out.
    static func discoveredAddresses(_ p: [UInt8]) -> [String] {
        guard let count = p.first else { return [] }
        return (0..<Int(count)).compactMap { i in
            let start = 1 + 14 * i
            guard start + 6 <= p.count else { return nil }
            return BDAddress(p[start..<start + 6].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }).description
        }
    }

    /// What a declared link event is as evidence, and the handle it names (nil for a connection that did not open).
    static func event(_ event: any HCIParameterSet) -> (handle: UInt16?, kind: EvidenceEvent.Kind)? {
        switch event {
        case let d as DisconnectionComplete:
            return (d.handle, .disconnectionComplete(handle: d.handle, status: d.status, reason: d.reason))
        case let c as LEConnectionComplete: return connection(c.status, c.handle, c.peerAddress)
        case let c as LEEnhancedConnectionComplete: return connection(c.status, c.handle, c.peerAddress)
        case let v2 as LEEnhancedConnectionCompleteV2:
            return connection(v2.connection.status, v2.connection.handle, v2.connection.peerAddress)
        case let u as LEConnectionUpdateComplete:
            let p =
                u.status == .success ? ConnectionParameters(interval: u.interval, latency: u.latency, timeout: u.supervisionTimeout) : nil
            return (u.handle, .connectionUpdateComplete(handle: u.handle, status: u.status, parameters: p))
        case let p as LEPHYUpdateComplete:
            let phy = p.status == .success ? PHYPair(tx: p.txPHY, rx: p.rxPHY) : nil
            return (p.handle, .phyUpdateComplete(handle: p.handle, status: p.status, phy: phy))
        case let r as LEReadRemoteFeaturesComplete:
            guard r.status != .success else { return nil }
            return (r.handle, .readRemoteFeaturesComplete(handle: r.handle, status: r.status))
        case let v as ReadRemoteVersionInformationComplete:
            return (v.handle & 0x0FFF, .remoteVersionComplete(handle: v.handle & 0x0FFF, status: v.status))
        case let r as LERemoteConnectionParameterRequest:
            let request = ParameterRequest(
                intervalMin: r.intervalMin, intervalMax: r.intervalMax, latency: r.maxLatency, timeout: r.supervisionTimeout)
            return (r.handle, .remoteParameterRequest(handle: r.handle, request: request))
        case let r as LELongTermKeyRequest: return (r.handle, .longTermKeyRequest(handle: r.handle))
        case let e as EncryptionChange: return encryption(e)
        case let e2 as EncryptionChangeV2: return encryption(e2.change)
        default: return classicEvent(event)
        }
    }

    /// The BR/EDR link events the diagnosis reads (``EvidenceEvent/Kind/classicConnectionComplete(handle:status:peer:linkType:)``
    /// and the authentication chain), with the handle each names.
    static func classicEvent(_ event: any HCIParameterSet) -> (handle: UInt16?, kind: EvidenceEvent.Kind)? {
        switch event {
        case let c as ConnectionComplete where c.linkType == SynchronousLinkType.sco:
            // A SCO link: the synchronous links' own evidence (``HCIMachine/scoConnectionComplete(_:_:)``).
            return nil
        case let c as ConnectionComplete:
            let h = c.handle & 0x0FFF
            let kind = EvidenceEvent.Kind.classicConnectionComplete(
                handle: h, status: c.status, peer: c.address.description, linkType: c.linkType)
            return (c.status == .success ? h : nil, kind)
        case let a as AuthenticationComplete:
            return (a.handle & 0x0FFF, .authenticationComplete(handle: a.handle & 0x0FFF, status: a.status))
        case let r as RoleChange: return (nil, .roleChange(peer: r.address.description, status: r.status, role: r.role))
        case let m as ModeChange: return (m.handle & 0x0FFF, .modeChange(handle: m.handle & 0x0FFF, status: m.status, mode: m.mode))
        case let p as PINCodeRequest: return (nil, .pinCodeRequest(peer: p.address.description))
        case let l as LinkKeyRequest: return (nil, .linkKeyRequest(peer: l.address.description))
        case let l as LinkKeyNotification: return (nil, .linkKeyCreated(peer: l.address.description))
        case let i as IOCapabilityRequest: return (nil, .ioCapabilityExchange(peer: i.address.description, sender: .local))
        case let i as IOCapabilityResponse: return (nil, .ioCapabilityExchange(peer: i.address.description, sender: .peer))
        case let s as SimplePairingComplete: return (nil, .simplePairingComplete(peer: s.address.description, status: s.status))
        case let r as RemoteNameRequestComplete: return (nil, .nameRequestComplete(peer: r.address.description))
        case let t as LEAdvertisingSetTerminated: return (nil, .advertisingSetTerminated(set: t.advertisingHandle))
        default: return nil
        }
    }

    static func connection(_ status: HCIStatus, _ handle: UInt16, _ peer: BDAddress) -> (handle: UInt16?, kind: EvidenceEvent.Kind) {
        let opened = status == .success
        return (opened ? handle : nil, .connectionComplete(handle: handle, status: status, peer: opened ? peer.description : nil))
    }

    static func encryption(_ e: EncryptionChange) -> (handle: UInt16?, kind: EvidenceEvent.Kind) {
        (e.handle, .encryptionChange(handle: e.handle, status: e.status, enabled: e.encryptionEnabled != 0))
    }
}
