import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@Suite("HCI tables, headers and summaries")
struct HCITests {
    @Test func opcodeFields() {
        let op = HCICommand(0x200C)
        #expect(op.ogf == 0x08 && op.ocf == 0x000C)
        #expect(op == .leSetScanEnable)
        #expect(op.description == "LE Set Scan Enable")
        #expect(HCICommand(ogf: 0x03, ocf: 0x0003) == .reset)
        #expect(HCICommand(0xFC53).isVendor)
        #expect(HCICommand(0xFC53).description == "Vendor Command (OCF 0x0053)")
        #expect(HCICommand(0x2087).description == "HCICommand(0x2087)")
        #expect(HCICommand(0x2085).name == "LE Extended Create Connection v2")
        #expect(HCICommand(0x0C84).name == "Set Min Encryption Key Size")
    }

    @Test func commandTableHasNoDuplicates() {
        let rows = HCICommandTable.entries.count
        #expect(rows > 300)
        // Every LE opcode from 0x2001 to 0x207F except the reserved 0x2004 has a name (Core 5.4, 7.8).
        for ocf in UInt16(0x01)...0x7F where ocf != 0x04 {
            #expect(HCICommand(ogf: 0x08, ocf: ocf).name != nil, "LE OCF \(hex(ocf))")
        }
    }

    @Test func eventAndSubeventNames() {
        #expect(HCIEventCode(0x3E).description == "LE Meta")
        #expect(HCIEventCode(0x59).description == "Encryption Change v2")
        #expect(HCIEventCode(0x7A).description == "HCIEventCode(0x7a)")
        for s in UInt8(0x01)...0x29 { #expect(LESubevent(s).name != nil) }
        #expect(LESubevent(0x29).description == "LE Enhanced Connection Complete v2")
        // Core 6.0, 7.7.65.25: LE CIS Established v2 is subevent 0x2A (declared in Declared/ISOEvents.swift).
        #expect(LESubevent(0x2A).description == "LE CIS Established v2")
        #expect(LESubevent(0x7F).description == "LESubevent(0x7f)")
    }

    @Test func statusNames() {
        #expect(HCIStatus(0x13).description == "Remote User Terminated Connection")
        #expect(HCIStatus(0x08).description == "Connection Timeout")
        #expect(HCIStatus(0x3E).description == "Connection Failed to be Established / Synchronization Timeout")
        #expect(HCIStatus(0x45).description == "Packet Too Long")
        #expect(HCIStatus(0x46).description == "HCIStatus(0x46)")
    }

    @Test func connectionCompleteSummary() throws {
        let bytes = HCIBuild.leConnectionComplete(handle: 0x0040, peer: BDAddress("C0:11:22:33:44:55")!)
        let packet = try HCIEventPacket(bytes: bytes)
        #expect(
            packet.summary
                == "LE Connection Complete status=Success handle=0x0040 role=central peer=C0:11:22:33:44:55 (random) interval=30.00 ms latency=0 timeout=4000 ms"
        )
    }

    /// Frame 537 of the treadmill capture; tshark: handle 0x0200, random peer fa:e4:e3:24:20:09, 30 ms, 5 s.
    @Test func enhancedConnectionCompleteFromCapture() throws {
        let packet = try HCIEventPacket(bytes: bytes(fromHex: "3e1f0a0000020001092024e3e4fa00000000000000000000000018000000f40100")!)
        #expect(
            packet.summary
                == "LE Enhanced Connection Complete status=Success handle=0x0200 role=central peer=FA:E4:E3:24:20:09 (random) interval=30.00 ms latency=0 timeout=5000 ms"
        )
    }

    /// Frame 133 of the treadmill capture: one ADV_IND from A4:C1:38:BF:6F:AB, 31 data bytes, RSSI 0xCF = −49 dBm.
    @Test func advertisingReportFromCapture() throws {
        let packet = try HCIEventPacket(
            bytes: bytes(fromHex: "3e2b02010000ab6fbf38c1a41f0d09475648353037325f36464142030388ec02010509ff88ec0002d0174200cf")!)
        guard case let .leAdvertisingReport(report) = try packet.decodeParameters() else { Issue.record("not a report"); return }
        #expect(report.reports.count == 1)
        let r = report.reports[0]
        #expect(r.eventType == 0 && r.eventTypeName == "ADV_IND")
        #expect(r.addressType == .public)
        #expect(r.address.description == "A4:C1:38:BF:6F:AB")
        #expect(r.data.count == 31)
        #expect(r.rssi == -49)
    }

    @Test func commandCompleteReturnParameters() throws {
        let bytes = HCIBuild.commandComplete(.leReadBufferSize, returnParameters: [0x00, 0xFB, 0x00, 0x0F])
        let packet = try HCIEventPacket(bytes: bytes)
        guard case let .commandComplete(cc) = packet.decoded else { Issue.record("not CC"); return }
        #expect(
            cc.decodedReturn
                == .leReadBufferSize(LEReadBufferSizeReturn(status: .success, aclDataPacketLength: 251, totalACLDataPackets: 15)))
        #expect(packet.summary == "Command Complete opcode=LE Read Buffer Size ncmd=1 status=Success aclLength=251 aclPackets=15")
        // Status-only return parameters.
        let reset = try HCIEventPacket(bytes: HCIBuild.commandComplete(.reset))
        #expect(reset.summary == "Command Complete opcode=Reset ncmd=1 status=Success")
    }

    @Test func disconnectionSummary() throws {
        let p = try HCIEventPacket(bytes: HCIBuild.disconnectionComplete(handle: 0x41, reason: .connectionTerminatedMICFailure))
        #expect(p.summary == "Disconnection Complete status=Success handle=0x0041 reason=Connection Terminated due to MIC Failure")
    }

    @Test func aclHeaderFlags() throws {
        // handle 0x040, PB 10 (first flushable), length 27
        let header = try withByteReader([0x40, 0x20, 0x1B, 0x00]) { (r: inout ByteReader) throws(DecodeError) in try ACLHeader(parsing: &r)
        }
        #expect(header.handle == 0x040 && header.packetBoundary == .firstFlushable && header.dataLength == 27 && header.broadcast == 0)
        let cont = try withByteReader([0x40, 0x10, 0x00, 0x00]) { (r: inout ByteReader) throws(DecodeError) in try ACLHeader(parsing: &r) }
        #expect(cont.packetBoundary == .continuation && !cont.packetBoundary.isStart)
    }

    @Test func lengthFieldsAreChecked() {
        // Disconnection Complete declaring 4 parameter bytes but carrying 3.
        #expect(throws: DecodeError.self) { try HCIPacket(kind: .event, bytes: [0x05, 0x04, 0x00, 0x40, 0x00]) }
        // Extra byte after the declared length.
        #expect(throws: DecodeError.invalidSize(expected: 6, got: 7)) {
            try HCIPacket(kind: .event, bytes: [0x05, 0x04, 0x00, 0x40, 0x00, 0x13, 0xAA])
        }
        // ACL declaring 10 bytes, carrying 2.
        #expect(throws: DecodeError.self) { try HCIPacket(kind: .acl, bytes: [0x40, 0x20, 0x0A, 0x00, 1, 2]) }
        // Number Of Completed Packets whose count disagrees with the bytes.
        #expect(throws: DecodeError.self) {
            try HCIEventPacket(code: .numberOfCompletedPackets, parameters: [2, 0x40, 0, 1, 0]).decodeParameters()
        }
        // Typed command parameters too short: kept raw by `decoded`, error from decodeParameters().
        let bad = HCICommandPacket(opcode: .disconnect, parameters: [0x40])
        #expect(throws: DecodeError.self) { try bad.decodeParameters() }
        #expect(bad.decoded == .raw([0x40]))
    }

    @Test func addresses() {
        let a = BDAddress("C0:11:22:33:44:55")!
        #expect(a.bytes == [0x55, 0x44, 0x33, 0x22, 0x11, 0xC0])
        #expect(a.description == "C0:11:22:33:44:55")
    }
}

@Suite("ATT table and classification")
struct ATTTests {
    @Test func classification() {
        #expect(ATTOpcode.readBlobRequest.method == .request && ATTOpcode.readBlobRequest.isRequest)
        #expect(ATTOpcode.readBlobRequest.responseOpcode == .readBlobResponse)
        #expect(ATTOpcode.readMultipleVariableRequest.responseOpcode == .readMultipleVariableResponse)
        #expect(ATTOpcode.executeWriteRequest.responseOpcode == .executeWriteResponse)
        #expect(ATTOpcode.handleValueIndication.responseOpcode == .handleValueConfirmation)
        #expect(ATTOpcode.handleValueConfirmation.requestOpcode == .handleValueIndication)
        #expect(ATTOpcode.writeResponse.requestOpcode == .writeRequest)
        #expect(ATTOpcode.errorResponse.method == .response && ATTOpcode.errorResponse.requestOpcode == nil)
        #expect(ATTOpcode.writeCommand.method == .command && ATTOpcode.signedWriteCommand.method == .command)
        #expect(ATTOpcode.signedWriteCommand.hasAuthenticationSignature && ATTOpcode.writeCommand.isCommandFlagSet)
        #expect(ATTOpcode.handleValueNotification.method == .notification)
        #expect(ATTOpcode.multipleHandleValueNotification.method == .notification)
        #expect(ATTOpcode(0x7F).description == "ATTOpcode(0x7f)")
        #expect(ATTTable.entries.count == 31)
    }

    @Test func errorNames() {
        #expect(ATTErrorCode(0x01).description == "Invalid Handle")
        #expect(ATTErrorCode(0x13).description == "Value Not Allowed")
        #expect(ATTErrorCode(0x80).description == "Application Error (0x80)")
        #expect(ATTErrorCode(0xFD).description == "Client Characteristic Configuration Descriptor Improperly Configured")
        #expect(ATTErrorCode(0x14).description == "Unknown (0x14)")
    }

    @Test func headerFastPath() throws {
        let notify: [UInt8] = [0x1B, 0x2A, 0x00, 0x01, 0x02]
        let h = try withByteReader(notify) { (r: inout ByteReader) throws(DecodeError) in try ATTHeader(parsing: &r) }
        #expect(h == ATTHeader(opcode: .handleValueNotification, handle: 0x002A))
        let err: [UInt8] = [0x01, 0x0A, 0x10, 0x00, 0x0A]
        let e = try withByteReader(err) { (r: inout ByteReader) throws(DecodeError) in try ATTHeader(parsing: &r) }
        #expect(e.handle == 0x0010)
        let mtu = try withByteReader([0x02, 0x00, 0x02]) { (r: inout ByteReader) throws(DecodeError) in try ATTHeader(parsing: &r) }
        #expect(mtu.handle == nil)
        #expect(notify.withUnsafeBytes { ATTHeader.opcode(of: $0) } == .handleValueNotification)
    }

    @Test func sizesAreChecked() {
        #expect(throws: DecodeError.invalidSize(expected: 3, got: 4)) { try ATTPDU(bytes: [0x0A, 0x01, 0x00, 0x00]) }
        #expect(throws: DecodeError.self) { try ATTPDU(bytes: [0x01, 0x0A, 0x10]) }
        #expect(throws: DecodeError.self) { try ATTPDU(bytes: [0x13, 0x00]) }
        // Read By Type Response: length 7 but 6 bytes follow.
        #expect(throws: DecodeError.self) { try ATTPDU(bytes: [0x09, 0x07, 0x02, 0x00, 0x02, 0x03, 0x00, 0x00]) }
        // Find Information Response with format 3.
        #expect(throws: DecodeError.self) { try ATTPDU(bytes: [0x05, 0x03, 0x01, 0x00, 0x00, 0x28]) }
        // Signed Write Command shorter than handle + signature.
        #expect(throws: DecodeError.self) { try ATTPDU(bytes: [0xD2, 0x01, 0x00] + Array(repeating: 0, count: 11)) }
    }

    @Test func unknownOpcodeIsKept() throws {
        #expect(try ATTPDU(bytes: [0x7F, 1, 2]) == .unknown(ATTOpcode(0x7F), [1, 2]))
    }

    @Test func accessors() {
        let n = ATTPDU.handleValueNotification(handle: 0x25, value: [0x45, 0x4F, 0x4D])
        #expect(n.attributeHandle == 0x25 && n.value == Array("EOM".utf8))
        #expect(n.summary == "Handle Value Notification handle=0x0025 value=454f4d")
        #expect(ATTPDU.exchangeMTURequest(clientRxMTU: 23).value == nil)
        #expect(ATTPDU.signedWriteCommand(handle: 1, value: [7], signature: Array(repeating: 0, count: 12)).value == [7])
    }

    /// Read Multiple Variable Response whose last tuple was cut at ATT_MTU (Vol 3, Part F, 3.4.4.12).
    @Test func truncatedLastTuple() throws {
        let pdu = try ATTPDU(bytes: [0x21, 0x02, 0x00, 0xAA, 0xBB, 0x05, 0x00, 0x01, 0x02])
        guard case let .readMultipleVariableResponse(list) = pdu else { Issue.record("wrong case"); return }
        #expect(list.count == 2 && list[1].length == 5 && list[1].value == [1, 2] && list[1].isTruncated)
    }
}

@Suite("SMP and L2CAP details")
struct SMPAndL2CAPTests {
    @Test func smpFlagNames() throws {
        let pdu = try SMPPDU(bytes: [0x01, 0x03, 0x00, 0x2D, 0x10, 0x0D, 0x0F])
        guard case let .pairingRequest(p) = pdu else { Issue.record("wrong case"); return }
        #expect(p.ioCapability.description == "NoInputNoOutput")
        #expect(p.authReq.description == "Bonding|MITM|SC|CT2")
        #expect(p.initiatorKeyDistribution.description == "EncKey|SignKey|LinkKey")
        #expect(p.responderKeyDistribution.description == "EncKey|IdKey|SignKey|LinkKey")
        #expect(p.maxEncryptionKeySize == 16)
        #expect(SMPPairingFailedReason(0x0B).description == "DHKey Check Failed")
        #expect(SMPCode(0x0E).description == "Pairing Keypress Notification")
        #expect(throws: DecodeError.self) { try SMPPDU(bytes: [0x03, 0x00]) }
    }

    @Test func cids() {
        #expect(L2CAPCID.att.description == "ATT")
        #expect(L2CAPCID(0x0041).description == "CID 0x0041" && L2CAPCID(0x0041).isDynamic)
        #expect(L2CAPSignalCode(0x14).description == "LE Credit Based Connection Request")
    }

    @Test func kFrame() throws {
        let first = try withByteReader([0x10, 0x00, 1, 2, 3]) { (r: inout ByteReader) throws(DecodeError) in
            try L2CAPKFrame(parsing: &r, isFirstOfSDU: true)
        }
        #expect(first.sduLength == 16 && first.payload == [1, 2, 3])
        #expect(first.bytes == [0x10, 0x00, 1, 2, 3])
        let next = try withByteReader([4, 5]) { (r: inout ByteReader) throws(DecodeError) in
            try L2CAPKFrame(parsing: &r, isFirstOfSDU: false)
        }
        #expect(next.sduLength == nil && next.payload == [4, 5])
    }

    @Test func signalLengthChecked() {
        // Connection Parameter Update Request declaring 8 bytes, carrying 6.
        #expect(throws: DecodeError.self) { try L2CAPSignal(bytes: [0x12, 0x01, 0x08, 0x00, 6, 0, 12, 0, 0, 0]) }
        // Disconnection Request declaring 6 bytes (2 extra) is malformed.
        #expect(throws: DecodeError.self) { try L2CAPSignal(bytes: [0x06, 0x01, 0x06, 0x00, 0x40, 0, 0x41, 0, 0, 0]) }
    }
}

@Suite("HCIBuild")
struct PacketBuilderTests {
    /// Fragment size never changes the reassembled PDU.
    @Test(arguments: [1, 2, 5, 27, 251])
    func fragmentsReassemble(_ size: Int) throws {
        let pdu = ATTPDU.handleValueNotification(handle: 0x2A, value: Array(0..<100))
        let fragments = HCIBuild.att(handle: 0x40, pdu, fragmentSize: size, firstBoundary: .firstFlushable)
        var data: [UInt8] = []
        for (i, f) in fragments.enumerated() {
            let acl = try ACLPacket(bytes: f)
            #expect(acl.handle == 0x40)
            #expect(acl.packetBoundary == (i == 0 ? .firstFlushable : .continuation))
            #expect(acl.data.count <= size)
            data += acl.data
        }
        let frame = try L2CAPBasicFrame(bytes: data)
        #expect(frame.cid == .att)
        #expect(try ATTPDU(bytes: frame.payload) == pdu)
    }

    @Test func h4AndEvents() throws {
        #expect(HCIBuild.h4(.command, HCIBuild.command(.reset)) == [0x01, 0x03, 0x0C, 0x00])
        #expect(HCIBuild.commandStatus(.leCreateConnection) == [0x0F, 0x04, 0x00, 0x01, 0x0D, 0x20])
        #expect(HCIBuild.numberOfCompletedPackets(handle: 0x40, count: 2) == [0x13, 0x05, 0x01, 0x40, 0x00, 0x02, 0x00])
        #expect(HCIBuild.leMeta(.dataLengthChange, parameters: [1]) == [0x3E, 0x02, 0x07, 0x01])
    }
}
