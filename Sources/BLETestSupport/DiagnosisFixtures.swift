import BLECapture
import BLECore
import BLEProtocols

/// The HCI exchanges the diagnosis rules read, each built from typed values by the packet's own encoder: a command
/// comes with the Command Status or Complete a controller gives it (two records), an event is one record.
extension CaptureBuilder {
    /// LE Create Connection to `peer` (initiator filter policy 0), or through the filter accept list when `peer` is nil
    /// (policy 1), and its Command Status (two records). The interval range is `interval` alone unless `intervalMax` is
    /// given.
    public func createConnection(
        to peer: BDAddress?, status: HCIStatus = .success, interval: UInt16 = 24, intervalMax: UInt16? = nil, timeout: UInt16 = 400
    ) -> CaptureBuilder {
        let create = LECreateConnection(
            scanInterval: 0x60, scanWindow: 0x30, initiatorFilterPolicy: peer == nil ? 1 : 0, peerAddressType: .random,
            peerAddress: peer ?? BDAddress(0), ownAddressType: .public,
            connection: LEConnectionParameters(
                intervalMin: interval, intervalMax: intervalMax ?? interval, maxLatency: 0, supervisionTimeout: timeout))
        return command(HCIBuild.command(.leCreateConnection(create)))
            .event(HCIBuild.commandStatus(.leCreateConnection, status: status))
    }

    /// LE Extended Create Connection (v1) to `peer` on the 1M PHY, and its Command Status (two records).
    public func extendedCreateConnection(to peer: BDAddress, status: HCIStatus = .success) -> CaptureBuilder {
        let phy = LEExtendedCreateConnection.PHYParameters(
            scanInterval: 0x60, scanWindow: 0x30,
            connection: LEConnectionParameters(intervalMin: 24, intervalMax: 24, maxLatency: 0, supervisionTimeout: 400))
        let create = LEExtendedCreateConnection(
            initiatorFilterPolicy: 0, ownAddressType: .public, peerAddressType: .random, peerAddress: peer, initiatingPHYs: 0x01,
            phys: [phy])
        return command(HCIBuild.command(.leExtendedCreateConnection(create)))
            .event(HCIBuild.commandStatus(.leExtendedCreateConnection, status: status))
    }

    /// LE Create Connection Cancel and its Command Complete (two records).
    public func createConnectionCancel(status: HCIStatus = .success) -> CaptureBuilder {
        command(HCIBuild.command(.leCreateConnectionCancel))
            .event(HCIBuild.commandComplete(.leCreateConnectionCancel, returnParameters: [status.rawValue]))
    }

    /// LE Connection Complete with an error status (no connection opens): 0x02 after a cancel, 0x3E…
    public func connectionFailed(_ status: HCIStatus, peer: BDAddress = BDAddress(0xC0_11_22_33_44_55)) -> CaptureBuilder {
        event(HCIBuild.leConnectionComplete(handle: 0, peer: peer, status: status))
    }

    /// LE Connection Complete with explicit parameters and role (interval 1.25 ms, timeout 10 ms units).
    public func connect(
        handle: UInt16, peer: BDAddress = BDAddress(0xC0_11_22_33_44_55), role: HCIRole, interval: UInt16 = 24, latency: UInt16 = 0,
        timeout: UInt16 = 400
    ) -> CaptureBuilder {
        event(
            HCIBuild.leConnectionComplete(handle: handle, role: role, peer: peer, interval: interval, latency: latency, timeout: timeout))
    }

    /// HCI Disconnect from the host and its Command Status (two records).
    public func disconnectCommand(handle: UInt16, reason: HCIStatus = .remoteUserTerminatedConnection) -> CaptureBuilder {
        command(HCIBuild.command(.disconnect(HCIDisconnect(handle: handle, reason: reason))))
            .event(HCIBuild.commandStatus(.disconnect))
    }

    /// HCI Reset and its Command Complete (two records).
    public func reset() -> CaptureBuilder {
        command(HCIBuild.command(.reset)).event(HCIBuild.commandComplete(.reset))
    }

    /// A command and the Command Status refusing it (two records).
    public func commandRefusedByStatus(_ opcode: HCICommand, parameters: [UInt8] = [], status: HCIStatus) -> CaptureBuilder {
        command(HCIBuild.command(opcode, parameters: parameters)).event(HCIBuild.commandStatus(opcode, status: status))
    }

    /// A command and the Command Complete refusing it, its return parameters the status alone (two records).
    public func commandRefusedByComplete(_ opcode: HCICommand, parameters: [UInt8] = [], status: HCIStatus) -> CaptureBuilder {
        command(HCIBuild.command(opcode, parameters: parameters))
            .event(HCIBuild.commandComplete(opcode, returnParameters: [status.rawValue]))
    }

    /// Number Of Completed Packets for one handle.
    public func completed(handle: UInt16, count: UInt16 = 1) -> CaptureBuilder {
        event(HCIBuild.numberOfCompletedPackets(handle: handle, count: count))
    }
}

// MARK: - Security

extension CaptureBuilder {
    /// LE Enable Encryption with a stored key (central) and its Command Status (two records).
    public func enableEncryption(handle: UInt16) -> CaptureBuilder {
        let start = LEEnableEncryption {
            $0.handle = handle
            $0.randomNumber = 0x1122_3344_5566_7788
            $0.encryptedDiversifier = 0xBEEF
            $0.longTermKey = Array(0..<16)
        }
        return command(HCIBuild.command(.declared(start))).event(HCIBuild.commandStatus(.leEnableEncryption))
    }

    /// Encryption Change (v1, event 0x08) or v2 (0x59, with the key size).
    public func encryptionChange(handle: UInt16, status: HCIStatus = .success, enabled: Bool = true, v2: Bool = false) -> CaptureBuilder {
        let change = EncryptionChange {
            $0.status = status
            $0.handle = handle
            $0.encryptionEnabled = enabled ? 1 : 0
        }
        let changeV2 = EncryptionChangeV2 {
            $0.change = change
            $0.keySize = 16
        }
        return event(HCIBuild.event(v2 ? .declared(changeV2) : .declared(change)))
    }

    /// LE Long Term Key Request (LE Meta 0x05): the central asks this side (peripheral) for the key of a stored bond.
    public func longTermKeyRequest(handle: UInt16) -> CaptureBuilder {
        let request = LELongTermKeyRequest {
            $0.handle = handle
            $0.randomNumber = 0x1122_3344_5566_7788
            $0.encryptedDiversifier = 0xBEEF
        }
        return event(HCIBuild.event(.declared(request)))
    }

    /// LE Long Term Key Request Reply (with a key) and its Command Complete (two records).
    public func longTermKeyReply(handle: UInt16) -> CaptureBuilder {
        var p = HCIConnectionHandle(handle: handle).bytes
        p += Array(0..<16)
        return command(HCIBuild.command(.leLongTermKeyRequestReply, parameters: p))
            .event(
                HCIBuild.commandComplete(.leLongTermKeyRequestReply, returnParameters: [0x00] + HCIConnectionHandle(handle: handle).bytes))
    }

    /// LE Long Term Key Request Negative Reply (no key) and its Command Complete (two records).
    public func longTermKeyNegativeReply(handle: UInt16) -> CaptureBuilder {
        let h = HCIConnectionHandle(handle: handle).bytes
        return command(HCIBuild.command(.leLongTermKeyRequestNegativeReply, parameters: h))
            .event(HCIBuild.commandComplete(.leLongTermKeyRequestNegativeReply, returnParameters: [0x00] + h))
    }

    /// An SMP PDU on connection `handle` (this side sends `.tx`).
    public func smp(_ pdu: SMPPDU, handle: UInt16, _ direction: Direction) -> CaptureBuilder {
        l2cap(cid: 0x0006, payload: pdu.bytes, handle: handle, direction)
    }

    /// Authenticated Payload Timeout Expired (event 0x57).
    public func authenticatedPayloadTimeoutExpired(handle: UInt16) -> CaptureBuilder {
        event(HCIBuild.event(.authenticatedPayloadTimeoutExpired, parameters: HCIConnectionHandle(handle: handle).bytes))
    }
}

extension SMPPairingParameters {
    /// Pairing parameters of a bonding Just Works exchange (NoInputNoOutput), optionally asking for LE Secure
    /// Connections.
    public static func bonding(secureConnections: Bool = false) -> SMPPairingParameters {
        SMPPairingParameters(
            ioCapability: SMPIOCapability(rawValue: 3), authReq: SMPAuthReq(rawValue: secureConnections ? 0x09 : 0x01),
            initiatorKeyDistribution: SMPKeyDistribution(rawValue: 0x07), responderKeyDistribution: SMPKeyDistribution(rawValue: 0x07))
    }
}

// MARK: - Link parameters and controller health

extension CaptureBuilder {
    /// LE Connection Update Complete (LE Meta 0x03).
    public func connectionUpdateComplete(
        handle: UInt16, status: HCIStatus = .success, interval: UInt16 = 24, latency: UInt16 = 0, timeout: UInt16 = 400
    ) -> CaptureBuilder {
        let update = LEConnectionUpdateComplete {
            $0.status = status
            $0.handle = handle
            $0.interval = interval
            $0.latency = latency
            $0.supervisionTimeout = timeout
        }
        return event(HCIBuild.event(.declared(update)))
    }

    /// LE PHY Update Complete (LE Meta 0x0C).
    public func phyUpdateComplete(handle: UInt16, status: HCIStatus = .success, phy: LEPHY = .le2M) -> CaptureBuilder {
        let update = LEPHYUpdateComplete {
            $0.status = status
            $0.handle = handle
            $0.txPHY = phy
            $0.rxPHY = phy
        }
        return event(HCIBuild.event(.declared(update)))
    }

    /// LE Remote Connection Parameter Request (LE Meta 0x06): the peer's link layer asks for new parameters.
    public func remoteParameterRequest(
        handle: UInt16, intervalMin: UInt16 = 6, intervalMax: UInt16 = 12, latency: UInt16 = 0, timeout: UInt16 = 200
    ) -> CaptureBuilder {
        let request = LERemoteConnectionParameterRequest {
            $0.handle = handle
            $0.intervalMin = intervalMin
            $0.intervalMax = intervalMax
            $0.maxLatency = latency
            $0.supervisionTimeout = timeout
        }
        return event(HCIBuild.event(.declared(request)))
    }

    /// LE Remote Connection Parameter Request Negative Reply and its Command Complete (two records).
    public func remoteParameterNegativeReply(handle: UInt16, reason: HCIStatus = .unacceptableConnectionParameters) -> CaptureBuilder {
        command(
            HCIBuild.command(
                .leRemoteConnectionParameterRequestNegativeReply(
                    LERemoteConnectionParameterRequestNegativeReply(handle: handle, reason: reason)))
        )
        .event(
            HCIBuild.commandComplete(
                .leRemoteConnectionParameterRequestNegativeReply, returnParameters: [0x00] + HCIConnectionHandle(handle: handle).bytes))
    }

    /// LE Read Remote Features, its Command Status, and (unless the status refuses it) LE Read Remote Features Complete
    /// with `complete` (two or three records).
    public func readRemoteFeatures(handle: UInt16, status: HCIStatus = .success, complete: HCIStatus = .success) -> CaptureBuilder {
        let b = command(HCIBuild.command(.leReadRemoteFeatures(HCIConnectionHandle(handle: handle))))
            .event(HCIBuild.commandStatus(.leReadRemoteFeatures, status: status))
        guard status == .success else { return b }
        let features = LEReadRemoteFeaturesComplete {
            $0.status = complete
            $0.handle = handle
            $0.features = complete == .success ? 0x01 : 0
        }
        return b.event(HCIBuild.event(.declared(features)))
    }

    /// An L2CAP LE signalling command (CID 0x0005) on connection `handle`.
    public func leSignal(_ command: L2CAPSignalCommand, identifier: UInt8, handle: UInt16, _ direction: Direction) -> CaptureBuilder {
        signal(command, identifier: identifier, handle: handle, direction, cid: 0x0005)
    }

    /// Hardware Error (event 0x10) with its code.
    public func hardwareError(code: UInt8) -> CaptureBuilder { event(HCIBuild.event(.hardwareError, parameters: [code])) }

    /// Data Buffer Overflow (event 0x1A): link type 0x01 ACL.
    public func dataBufferOverflow(linkType: UInt8 = 0x01) -> CaptureBuilder {
        event(HCIBuild.event(.dataBufferOverflow, parameters: [linkType]))
    }
}
