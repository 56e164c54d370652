import BLECore
import BLEProtocols
import Testing

let peer = BDAddress(0xC0_11_22_33_44_55)
let connParams = LEConnectionParameters(
    intervalMin: 24, intervalMax: 40, maxLatency: 0, supervisionTimeout: 400,
    minCELength: 0, maxCELength: 0)

let sampleATT: [ATTPDU] = [
    .errorResponse(ATTErrorResponse(requestOpcode: .readByTypeRequest, handle: 0x0010, error: .attributeNotFound)),
    .exchangeMTURequest(clientRxMTU: 517), .exchangeMTUResponse(serverRxMTU: 247),
    .findInformationRequest(ATTHandleRange(start: 1, end: 0xFFFF)),
    .findInformationResponse(
        ATTFindInformationResponse(
            format: 1,
            entries: [
                ATTHandleUUID(handle: 0x0003, uuid: BluetoothUUID(uuid16: 0x2803)),
                ATTHandleUUID(handle: 0x0004, uuid: BluetoothUUID(uuid16: 0x2A00)),
            ])),
    .findInformationResponse(
        ATTFindInformationResponse(
            format: 2,
            entries: [
                ATTHandleUUID(handle: 0x0020, uuid: BluetoothUUID("8EC90001-F315-4F60-9FB8-838830DAEA50")!)
            ])),
    .findByTypeValueRequest(ATTFindByTypeValueRequest(range: ATTHandleRange(start: 1, end: 0xFFFF), type: 0x2800, value: [0x0F, 0x18])),
    .findByTypeValueResponse([ATTHandleRange(start: 0x10, end: 0x15), ATTHandleRange(start: 0x20, end: 0xFFFF)]),
    .readByTypeRequest(ATTTypeRequest(range: ATTHandleRange(start: 1, end: 0xFFFF), type: BluetoothUUID(uuid16: 0x2803))),
    .readByTypeRequest(
        ATTTypeRequest(range: ATTHandleRange(start: 1, end: 0xFFFF), type: BluetoothUUID("E20A39F4-73F5-4BC4-A12F-17D1AD07A961")!)),
    .readByTypeResponse([
        ATTHandleValue(handle: 2, value: [0x02, 0x03, 0x00, 0x00, 0x2A]),
        ATTHandleValue(handle: 4, value: [0x02, 0x05, 0x00, 0x01, 0x2A]),
    ]),
    .readRequest(handle: 0x002A), .readResponse(value: [0x64]), .readResponse(value: []),
    .readBlobRequest(handle: 0x002A, offset: 22), .readBlobResponse(value: Array(0..<22)),
    .readMultipleRequest(handles: [3, 5, 7]), .readMultipleResponse(values: [1, 2, 3, 4]),
    .readByGroupTypeRequest(ATTTypeRequest(range: ATTHandleRange(start: 1, end: 0xFFFF), type: BluetoothUUID(uuid16: 0x2800))),
    .readByGroupTypeResponse([ATTGroupValue(start: 1, end: 5, value: [0x00, 0x18]), ATTGroupValue(start: 6, end: 9, value: [0x01, 0x18])]),
    .writeRequest(handle: 0x0011, value: [0x01, 0x00]), .writeResponse,
    .prepareWriteRequest(handle: 0x0030, offset: 18, value: Array(repeating: 0xAB, count: 18)),
    .prepareWriteResponse(handle: 0x0030, offset: 18, value: Array(repeating: 0xAB, count: 18)),
    .executeWriteRequest(flags: 1), .executeWriteRequest(flags: 0), .executeWriteResponse,
    .handleValueNotification(handle: 0x0025, value: Array("EOM".utf8)),
    .handleValueIndication(handle: 0x0003, value: [0x01, 0x00, 0xFF, 0xFF]), .handleValueConfirmation,
    .readMultipleVariableRequest(handles: [0x10, 0x12]),
    .readMultipleVariableResponse([ATTLengthValue(value: [1, 2]), ATTLengthValue(value: [])]),
    .multipleHandleValueNotification([ATTHandleValue(handle: 0x10, value: [1]), ATTHandleValue(handle: 0x12, value: [2, 3])]),
    .writeCommand(handle: 0x0040, value: Array(0..<20)),
    .signedWriteCommand(handle: 0x0040, value: [9, 9], signature: Array(1...12)),
    .unknown(ATTOpcode(0x7F), [1, 2, 3]),
]

let sampleSMP: [SMPPDU] = [
    .pairingRequest(
        SMPPairingParameters(
            ioCapability: .noInputNoOutput, authReq: [.bonding, .secureConnections],
            initiatorKeyDistribution: [.encKey, .idKey], responderKeyDistribution: [.encKey, .idKey])),
    .pairingResponse(
        SMPPairingParameters(
            ioCapability: .displayYesNo, oobDataFlag: 1, authReq: [.bonding, .mitm, .secureConnections, .keypress, .ct2],
            maxEncryptionKeySize: 7, initiatorKeyDistribution: [], responderKeyDistribution: [.encKey, .idKey, .signKey, .linkKey])),
    .pairingConfirm(Array(0..<16)), .pairingRandom(Array(16..<32)), .pairingFailed(.confirmValueFailed),
    .encryptionInformation(longTermKey: Array(repeating: 0x42, count: 16)),
    .centralIdentification(ediv: 0x1234, rand: 0x0102_0304_0506_0708),
    .identityInformation(irk: Array(0..<16)), .identityAddressInformation(addressType: 1, address: peer),
    .signingInformation(csrk: Array(0..<16)), .securityRequest([.bonding, .mitm]),
    .pairingPublicKey(x: Array(0..<32), y: Array(32..<64)), .pairingDHKeyCheck(Array(0..<16)),
    .pairingKeypressNotification(SMPKeypressType(rawValue: 1)), .unknown(SMPCode(0x20), [1]),
]

let sampleSignals: [L2CAPSignal] = [
    L2CAPSignal(identifier: 1, command: .commandReject(reason: 0, data: [])),
    L2CAPSignal(identifier: 2, command: .commandReject(reason: 2, data: [0x40, 0x00, 0x41, 0x00])),
    L2CAPSignal(identifier: 3, command: .disconnectionRequest(destinationCID: 0x40, sourceCID: 0x41)),
    L2CAPSignal(identifier: 3, command: .disconnectionResponse(destinationCID: 0x40, sourceCID: 0x41)),
    L2CAPSignal(identifier: 4, command: .connectionParameterUpdateRequest(intervalMin: 6, intervalMax: 12, latency: 0, timeout: 500)),
    L2CAPSignal(identifier: 4, command: .connectionParameterUpdateResponse(result: 1)),
    L2CAPSignal(
        identifier: 5, command: .leCreditBasedConnectionRequest(spsm: 0x80, sourceCID: 0x40, mtu: 512, mps: 247, initialCredits: 10)),
    L2CAPSignal(
        identifier: 5, command: .leCreditBasedConnectionResponse(destinationCID: 0x41, mtu: 512, mps: 247, initialCredits: 10, result: 0)),
    L2CAPSignal(identifier: 6, command: .flowControlCreditIndication(cid: 0x40, credits: 5)),
    L2CAPSignal(
        identifier: 7, command: .creditBasedConnectionRequest(spsm: 0x27, mtu: 64, mps: 64, initialCredits: 3, sourceCIDs: [0x40, 0x41])),
    L2CAPSignal(
        identifier: 7,
        command: .creditBasedConnectionResponse(mtu: 64, mps: 64, initialCredits: 3, result: 0, destinationCIDs: [0x50, 0x51])),
    L2CAPSignal(identifier: 8, command: .creditBasedReconfigureRequest(mtu: 100, mps: 100, destinationCIDs: [0x50])),
    L2CAPSignal(identifier: 8, command: .creditBasedReconfigureResponse(result: 0)),
    L2CAPSignal(identifier: 9, command: .other(.echoRequest, [1, 2])),
    L2CAPSignal(identifier: 10, command: .connectionRequest(psm: 0x001F, sourceCID: 0x0040)),
    L2CAPSignal(identifier: 10, command: .connectionResponse(destinationCID: 0x0041, sourceCID: 0x0040, result: 0, status: 0)),
    L2CAPSignal(identifier: 11, command: .configureRequest(destinationCID: 0x0041, flags: 0, options: [0x01, 0x02, 0xA0, 0x02])),
    L2CAPSignal(identifier: 11, command: .configureResponse(sourceCID: 0x0040, flags: 0, result: 0, options: [])),
]

let sampleCommands: [HCICommandParameters] = [
    .disconnect(HCIDisconnect(handle: 0x40, reason: .remoteUserTerminatedConnection)),
    .readRemoteVersionInformation(HCIConnectionHandle(handle: 0x40)),
    .leReadRemoteFeatures(HCIConnectionHandle(handle: 0x41)),
    .declared(
        LESetScanParameters {
            $0.scanType = 1
            $0.interval = 0x10
            $0.window = 0x10
            $0.ownAddressType = .random
        }),
    .declared(
        LESetScanEnable {
            $0.enable = 1
            $0.filterDuplicates = 1
        }),
    .leSetExtendedScanParameters(
        LESetExtendedScanParameters(
            ownAddressType: .public, filterPolicy: 0, scanningPHYs: 0x05,
            phys: [
                .init(scanType: 1, interval: 0x60, window: 0x30), .init(scanType: 0, interval: 0x120, window: 0x90),
            ])),
    .declared(LESetExtendedScanEnable { $0.enable = 1 }),
    .declared(
        LESetAdvertisingParameters {
            $0.intervalMin = 0x800
            $0.intervalMax = 0x800
            $0.channelMap = 7
        }),
    .declared(LESetAdvertisingEnable { $0.enable = 1 }),
    .leSetExtendedAdvertisingEnable(
        LESetExtendedAdvertisingEnable(
            enable: true,
            sets: [
                .init(handle: 0, duration: 0, maxExtendedAdvertisingEvents: 0),
                .init(handle: 1, duration: 100, maxExtendedAdvertisingEvents: 5),
            ])),
    .leCreateConnection(
        LECreateConnection(
            scanInterval: 0x60, scanWindow: 0x30, initiatorFilterPolicy: 0, peerAddressType: .random,
            peerAddress: peer, ownAddressType: .public, connection: connParams)),
    .leExtendedCreateConnection(
        LEExtendedCreateConnection(
            initiatorFilterPolicy: 0, ownAddressType: .public, peerAddressType: .random,
            peerAddress: peer, initiatingPHYs: 0x03,
            phys: [
                .init(scanInterval: 0x60, scanWindow: 0x60, connection: connParams),
                .init(scanInterval: 0, scanWindow: 0, connection: connParams),
            ])),
    .leExtendedCreateConnectionV2(
        LEExtendedCreateConnectionV2(
            advertisingHandle: 0xFF, subevent: 0xFF,
            connection: LEExtendedCreateConnection(
                initiatorFilterPolicy: 0, ownAddressType: .random, peerAddressType: .public, peerAddress: peer, initiatingPHYs: 0x04,
                phys: [.init(scanInterval: 0x60, scanWindow: 0x60, connection: connParams)]))),
    .leConnectionUpdate(LEConnectionUpdate(handle: 0x40, connection: connParams)),
    .leRemoteConnectionParameterRequestReply(LERemoteConnectionParameterRequestReply(handle: 0x40, connection: connParams)),
    .leRemoteConnectionParameterRequestNegativeReply(
        LERemoteConnectionParameterRequestNegativeReply(handle: 0x40, reason: .unacceptableConnectionParameters)),
    .declared(
        LESetDataLength {
            $0.handle = 0x40
            $0.txOctets = 251
            $0.txTime = 2120
        }),
    .declared(
        LESetPHY {
            $0.handle = 0x40
            $0.txPHYs = 2
            $0.rxPHYs = 2
        }),
    .declared(
        LEEnableEncryption {
            $0.handle = 0x40
            $0.randomNumber = 0x1122334455667788
            $0.encryptedDiversifier = 0xBEEF
            $0.longTermKey = Array(0..<16)
        }),
]

let encryptionOn = EncryptionChange {
    $0.handle = 0x40
    $0.encryptionEnabled = 1
}

/// LE Data Length Change to 251 bytes (2120 µs) both ways.
let dataLength251 = LEDataLengthChange {
    $0.handle = 0x40
    $0.maxTxOctets = 251
    $0.maxTxTime = 2120
    $0.maxRxOctets = 251
    $0.maxRxTime = 2120
}

func timing(interval: UInt16, latency: UInt16, timeout: UInt16) -> LEConnectionTimingFields {
    LEConnectionTimingFields {
        $0.interval = interval
        $0.latency = latency
        $0.supervisionTimeout = timeout
    }
}

let sampleEvents: [HCIEventParameters] = [
    .declared(
        DisconnectionComplete {
            $0.handle = 0x40
            $0.reason = .connectionTimeout
        }),
    .declared(encryptionOn),
    .declared(
        EncryptionChangeV2 {
            $0.change = encryptionOn
            $0.keySize = 16
        }),
    .declared(EncryptionKeyRefreshComplete { $0.handle = 0x40 }),
    .declared(
        ReadRemoteVersionInformationComplete {
            $0.handle = 0x40
            $0.version = 0x0C
            $0.companyIdentifier = 0x0059
            $0.subversion = 0x1234
        }),
    .commandComplete(CommandComplete(opcode: .reset, .status(.success))),
    .commandComplete(
        CommandComplete(
            opcode: .leReadBufferSize,
            .leReadBufferSize(LEReadBufferSizeReturn(status: .success, aclDataPacketLength: 251, totalACLDataPackets: 8)))),
    .commandComplete(
        CommandComplete(
            opcode: .leReadBufferSizeV2,
            .leReadBufferSizeV2(
                LEReadBufferSizeV2Return(
                    status: .success, aclDataPacketLength: 251, totalACLDataPackets: 15, isoDataPacketLength: 310, totalISODataPackets: 8)))
    ),
    .commandComplete(
        CommandComplete(
            opcode: .readBufferSize,
            .readBufferSize(
                ReadBufferSizeReturn(
                    status: .success, aclDataPacketLength: 1021, synchronousDataPacketLength: 64, totalACLDataPackets: 8,
                    totalSynchronousDataPackets: 1)))),
    .commandComplete(CommandComplete(numHCICommandPackets: 1, opcode: .nop, returnParameters: [])),
    .commandStatus(CommandStatus(status: .success, opcode: .leCreateConnection)),
    .numberOfCompletedPackets(
        NumberOfCompletedPackets(entries: [.init(handle: 0x40, completedPackets: 3), .init(handle: 0x41, completedPackets: 1)])),
    .declared(
        LEConnectionComplete {
            $0.handle = 0x40
            $0.peerAddressType = .random
            $0.peerAddress = peer
            $0.timing = timing(interval: 24, latency: 0, timeout: 400)
        }),
    .leAdvertisingReport(
        LEAdvertisingReport(reports: [
            .init(eventType: 0, addressType: .random, address: peer, data: [2, 1, 6], rssi: -60),
            .init(eventType: 4, addressType: .public, address: BDAddress(1), data: [], rssi: 127),
        ])),
    .declared(
        LEConnectionUpdateComplete {
            $0.handle = 0x40
            $0.interval = 6
            $0.supervisionTimeout = 500
        }),
    .declared(
        LEReadRemoteFeaturesComplete {
            $0.handle = 0x40
            $0.features = 0x0000_0000_0000_01FF
        }),
    .declared(LELongTermKeyRequest { $0.handle = 0x40 }),
    .declared(
        LERemoteConnectionParameterRequest {
            $0.handle = 0x40
            $0.intervalMin = 6
            $0.intervalMax = 12
            $0.supervisionTimeout = 500
        }),
    .declared(dataLength251),
    .declared(
        LEEnhancedConnectionComplete {
            $0.handle = 0x40
            $0.role = .peripheral
            $0.peerAddressType = .publicIdentity
            $0.peerAddress = peer
            $0.peerResolvablePrivateAddress = BDAddress(0x4A_BB_CC_DD_EE_FF)
            $0.timing = timing(interval: 36, latency: 4, timeout: 600)
        }),
    .declared(
        LEEnhancedConnectionCompleteV2 {
            $0.connection.handle = 0x41
            $0.connection.peerAddressType = .random
            $0.connection.peerAddress = peer
            $0.connection.timing = timing(interval: 24, latency: 0, timeout: 400)
        }),
    .declared(
        LEPHYUpdateComplete {
            $0.handle = 0x40
            $0.txPHY = .le2M
            $0.rxPHY = .le2M
        }),
    .leExtendedAdvertisingReport(
        LEExtendedAdvertisingReport(reports: [
            .init(
                eventType: 0x13, addressType: .random, address: peer, rssi: -70,
                data: [2, 1, 6, 3, 3, 0x0F, 0x18])
        ])),
    .declared(
        LEChannelSelectionAlgorithm {
            $0.handle = 0x40
            $0.algorithm = 1
        }),
    // LE Subrate Change (7.7.65.35), not decoded: status, handle, factor 1, latency 0, continuation 0, timeout 2 s.
    .leMeta(LESubevent(0x23), [0x00, 0x40, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0xC8, 0x00]),
    .raw(HCIEventCode(0x10), [0x01]),
]

@Suite("Encoders and decoders round-trip")
struct RoundTripTests {
    @Test(arguments: sampleATT)
    func att(_ pdu: ATTPDU) throws {
        #expect(try ATTPDU(bytes: pdu.bytes) == pdu)
        #expect(pdu.bytes.first == pdu.opcode.rawValue)
    }

    @Test(arguments: sampleSMP)
    func smp(_ pdu: SMPPDU) throws {
        #expect(try SMPPDU(bytes: pdu.bytes) == pdu)
    }

    @Test(arguments: sampleSignals)
    func signal(_ signal: L2CAPSignal) throws {
        #expect(try L2CAPSignal(bytes: signal.bytes) == signal)
        let frame = L2CAPBasicFrame(cid: .leSignalling, payload: signal.bytes)
        #expect(try L2CAPBasicFrame(bytes: frame.bytes) == frame)
    }

    @Test(arguments: sampleCommands)
    func command(_ parameters: HCICommandParameters) throws {
        let packet = HCICommandPacket(parameters)
        #expect(packet.opcode == parameters.opcode)
        let parsed = try HCICommandPacket(bytes: packet.bytes)
        #expect(parsed == packet)
        #expect(try parsed.decodeParameters() == parameters)
        #expect(parsed.summary.hasPrefix(packet.opcode.name!))
    }

    @Test(arguments: sampleEvents)
    func event(_ parameters: HCIEventParameters) throws {
        let packet = HCIEventPacket(parameters)
        let parsed = try HCIEventPacket(bytes: packet.bytes)
        #expect(try parsed.decodeParameters() == parameters)
        #expect(parsed.subevent == parameters.subevent)
    }

    @Test(arguments: [
        ISOPacket(
            handle: 0x60, packetBoundary: 2, timestamp: 0x01020304, sequenceNumber: 7, sduLength: 40, packetStatus: 0, data: Array(0..<40)),
        ISOPacket(handle: 0x60, packetBoundary: 0, sequenceNumber: 8, sduLength: 100, packetStatus: 1, data: Array(0..<50)),
        ISOPacket(handle: 0x60, packetBoundary: 3, data: Array(0..<50)),
    ])
    func iso(_ packet: ISOPacket) throws {
        #expect(try ISOPacket(bytes: packet.bytes) == packet)
    }

    @Test func scoAndACL() throws {
        let sco = SCOPacket(handle: 0x0101, packetStatus: 2, data: [1, 2, 3])
        #expect(try SCOPacket(bytes: sco.bytes) == sco)
        for pb: UInt8 in 0...3 {
            let acl = ACLPacket(handle: 0x0EFF, packetBoundary: ACLPacketBoundary(rawValue: pb), broadcast: 0, data: [9, 8])
            #expect(try ACLPacket(bytes: acl.bytes) == acl)
        }
    }
}
