import BLECore
import BLEProtocols
import Testing

/// Parses tshark's `0x001b` / `39` strings.
func tsharkInt(_ s: String) -> Int? {
    if s.isEmpty { return nil }
    if s.hasPrefix("0x") { return Int(s.dropFirst(2), radix: 16) }
    return Int(s)
}

@Suite("Decoders agree with tshark on PDUs from real captures")
struct CrossCheckTests {
    @Test(arguments: attVectors)
    func attMatchesTshark(_ v: ATTVector) throws {
        let raw = try #require(bytes(fromHex: v.hex))
        let pdu = try ATTPDU(bytes: raw)
        #expect(Int(pdu.opcode.rawValue) == tsharkInt(v.opcode))
        #expect(pdu.opcode.name != nil)
        // Re-encoding gives the same bytes.
        #expect(pdu.bytes == raw)
        if let h = tsharkInt(v.handle) {
            switch pdu {
            case let .readByTypeResponse(list): #expect(Int(list[0].handle) == h)
            case let .readByGroupTypeResponse(list): #expect(Int(list[0].start) == h)
            case let .findInformationResponse(f): #expect(Int(f.entries[0].handle) == h)
            case let .findByTypeValueResponse(list): #expect(Int(list[0].start) == h)
            default:
                // tshark adds the request's handle to responses that carry none (Read/Write Response…).
                if pdu.opcode.handleOffset != nil { #expect(pdu.attributeHandle.map(Int.init) == h) }
            }
        }
        // Frame 263 of the glasses capture: tshark decodes a Write Request to 0x0016 as if it wrote a
        // characteristic declaration, and shows only part of the value.
        if !v.value.isEmpty, let value = pdu.value, v.description != "pklg-ios-le_even-g2-glasses-#263" {
            #expect(hexString(value) == v.value)
        }
        if let e = tsharkInt(v.error), case let .errorResponse(er) = pdu {
            #expect(Int(er.error.rawValue) == e)
        }
        if let m = tsharkInt(v.mtu) {
            switch pdu {
            case let .exchangeMTURequest(x), let .exchangeMTUResponse(x): #expect(Int(x) == m)
            default: Issue.record("MTU field on \(pdu.opcode)")
            }
        }
    }

    @Test(arguments: eventVectors)
    func eventMatchesTshark(_ v: EventVector) throws {
        let raw = try #require(bytes(fromHex: v.hex))
        let packet = try HCIEventPacket(bytes: raw)
        #expect(Int(packet.code.rawValue) == tsharkInt(v.code))
        #expect(packet.code.name != nil)
        if let s = tsharkInt(v.subevent) {
            #expect(packet.subevent.map { Int($0.rawValue) } == s)
            #expect(packet.subevent?.name != nil)
        }
        let decoded = try packet.decodeParameters()
        #expect(HCIEventPacket(decoded).bytes == raw)
        var handle: UInt16?, status: HCIStatus?, reason: HCIStatus?, opcode: HCICommand?
        switch decoded {
        case let .declared(d):
            // Every declared event names its handle and status the same way, whatever its fields.
            handle = d.connectionHandle; status = d.status
            if let disconnection = d.as(DisconnectionComplete.self) { reason = disconnection.reason }
            if let c = d.as(ConnectionComplete.self), v.file.hasPrefix("pklg-macos-be_isap") {
                // tshark's bd_addr, link_type and encryption_mode for iSAP frame 33.
                #expect(c.address.description == "00:13:E0:49:B9:CA" && c.linkType == 0x01 && c.encryptionEnabled == 0)
            }
        case let .commandStatus(c): status = c.status; opcode = c.opcode
        case let .commandComplete(c): opcode = c.opcode; status = c.decodedReturn.status
        case let .numberOfCompletedPackets(n): handle = n.entries.first?.handle
        default: break
        }
        if let h = tsharkInt(v.handle), let handle { #expect(Int(handle) == h) }
        if let s = tsharkInt(v.status), let status { #expect(Int(status.rawValue) == s) }
        if let r = tsharkInt(v.reason), let reason { #expect(Int(reason.rawValue) == r) }
        if let o = tsharkInt(v.opcode), let opcode { #expect(Int(opcode.rawValue) == o) }
        #expect(!packet.summary.isEmpty)
    }

    @Test(arguments: commandVectors)
    func commandMatchesTshark(_ v: CommandVector) throws {
        let raw = try #require(bytes(fromHex: v.hex))
        let packet = try HCICommandPacket(bytes: raw)
        #expect(Int(packet.opcode.rawValue) == tsharkInt(v.opcode))
        #expect(packet.opcode.name != nil || packet.opcode.isVendor, "no name for \(packet.opcode)")
        let decoded = try packet.decodeParameters()
        #expect(HCICommandPacket(decoded, opcode: packet.opcode).bytes == raw)
        if let h = tsharkInt(v.handle) {
            switch decoded {
            case let .disconnect(d): #expect(Int(d.handle) == h)
            case let .leConnectionUpdate(c): #expect(Int(c.handle) == h)
            case let .declared(d) where d.connectionHandle != nil: #expect(Int(d.connectionHandle ?? 0) == h)
            case let .readRemoteVersionInformation(c), let .leReadRemoteFeatures(c): #expect(Int(c.handle) == h)
            default: break
            }
        }
    }

    @Test(arguments: smpVectors)
    func smpMatchesTshark(_ v: SMPVector) throws {
        let raw = try #require(bytes(fromHex: v.hex))
        let pdu = try SMPPDU(bytes: raw)
        #expect(Int(pdu.code.rawValue) == tsharkInt(v.opcode))
        #expect(pdu.bytes == raw)
        switch pdu {
        case let .pairingRequest(p), let .pairingResponse(p):
            #expect(Int(p.ioCapability.rawValue) == tsharkInt(v.io))
            #expect(Int(p.maxEncryptionKeySize) == tsharkInt(v.maxKeySize))
            #expect(Int(p.authReq.rawValue) == tsharkInt(v.authReq))
            #expect(Int(p.initiatorKeyDistribution.rawValue) == tsharkInt(v.initKeys))
            #expect(Int(p.responderKeyDistribution.rawValue) == tsharkInt(v.respKeys))
        case let .securityRequest(a): #expect(Int(a.rawValue) == tsharkInt(v.authReq))
        case let .pairingFailed(r): #expect(Int(r.rawValue) == tsharkInt(v.reason))
        default: break
        }
    }

    @Test(arguments: signalVectors)
    func leSignallingMatchesTshark(_ v: SignalVector) throws {
        let raw = try #require(bytes(fromHex: v.hex))
        let frame = try L2CAPBasicFrame(bytes: raw)
        #expect(frame.cid == .leSignalling)
        let signal = try L2CAPSignal(bytes: frame.payload)
        #expect(Int(signal.code.rawValue) == tsharkInt(v.code))
        #expect(Int(signal.identifier) == tsharkInt(v.ident))
        #expect(signal.bytes == frame.payload)
        switch signal.command {
        case let .connectionParameterUpdateRequest(minI, maxI, latency, timeout):
            #expect(Int(minI) == tsharkInt(v.minInterval))
            #expect(Int(maxI) == tsharkInt(v.maxInterval))
            #expect(Int(latency) == tsharkInt(v.latency))
            #expect(Int(timeout) == tsharkInt(v.timeout))
        case let .connectionParameterUpdateResponse(result): #expect(Int(result) == tsharkInt(v.result))
        default: Issue.record("unexpected \(signal.code)")
        }
    }
}
