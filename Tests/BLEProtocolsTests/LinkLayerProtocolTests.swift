import BLECore
import BLEProtocols
import Testing

@Suite struct LinkLayerProtocolTests {
    static let adv = LLDeviceAddress(0xF8F0_05F3_66E0)
    static let rnd = LLDeviceAddress(0x5D36_AC90_0B22, isRandom: true)

    static let advertisingPDUs: [LLAdvertisingPDU] = [
        .advInd(advertiser: adv, data: [0x02, 0x01, 0x06, 0x03, 0x03, 0x0F, 0x18]),
        .advDirectInd(advertiser: adv, target: rnd),
        .advNonconnInd(advertiser: rnd, data: []),
        .scanReq(scanner: rnd, advertiser: adv),
        .scanRsp(advertiser: adv, data: [0x05, 0x09, 0x41, 0x42, 0x43, 0x44]),
        .advScanInd(advertiser: adv, data: [0x02, 0x0A, 0xF4]),
        .connectInd(
            LLConnectInd(
                initiator: rnd, advertiser: adv,
                parameters: LLConnectionParameters(
                    accessAddress: LLAccessAddress(0x50654A27), crcInit: 0x12_3456, windowSize: 3,
                    windowOffset: 7, interval: 24, latency: 2, timeout: 72,
                    channelMap: 0x1F_FFFF_FFFF, hop: 11, sleepClockAccuracy: 5))),
        .extended(
            .advExtInd,
            LLExtendedAdvertisingPayload(
                advMode: 1, adi: LLAdvDataInfo(dataID: 0x123, setID: 2),
                auxPointer: LLAuxPointer(channelIndex: 12, clockAccuracy50ppm: true, offsetUnits300: false, auxOffset: 400, auxPHY: 1))),
        .extended(
            .advExtInd,
            LLExtendedAdvertisingPayload(
                advMode: 0, advertiser: adv, target: rnd, cteInfo: 0x22, syncInfo: Array(0..<18),
                txPower: -4, acad: [1, 2], advData: [0x02, 0x01, 0x06])),
        .extended(.auxConnectRsp, LLExtendedAdvertisingPayload(advMode: 0, advertiser: adv, target: rnd)),
        .unknown(LLAdvertisingPDUType(rawValue: 0x0F), [1, 2, 3]),
    ]

    @Test(arguments: advertisingPDUs)
    func advertisingPDURoundTrips(_ pdu: LLAdvertisingPDU) throws {
        let packet = LLAdvertisingPacketPDU(pdu)
        let bytes = packet.bytes
        #expect(Int(bytes[1]) == bytes.count - 2)
        #expect(try LLAdvertisingPacketPDU(bytes: bytes) == packet)
        // Inside a whole LL packet with a CRC computed for the advertising channel.
        let ll = LLPacket(accessAddress: .advertising, pdu: bytes, crcInit: 0x55_5555)
        let parsed = try LLPacket(bytes: ll.bytes)
        #expect(parsed == ll)
        #expect(parsed.crcMatches(crcInit: 0x55_5555))
    }

    /// Spec layout of CONNECT_IND LLData checked byte by byte (Vol 6, Part B, 2.3.3.1).
    @Test func connectIndLayout() throws {
        let p = LLConnectionParameters(
            accessAddress: LLAccessAddress(0xAF9A_9482), crcInit: 0x6D_4B3A, windowSize: 2, windowOffset: 0x000F,
            interval: 0x0018, latency: 0, timeout: 0x0048, channelMap: 0x1F_FFFF_FFFF, hop: 9, sleepClockAccuracy: 1)
        #expect(
            p.bytes == [
                0x82, 0x94, 0x9A, 0xAF, 0x3A, 0x4B, 0x6D, 0x02, 0x0F, 0x00, 0x18, 0x00, 0x00, 0x00, 0x48, 0x00,
                0xFF, 0xFF, 0xFF, 0xFF, 0x1F, 0x29,
            ])
        #expect(p.intervalMicroseconds == 30_000)
        #expect(p.usedChannels == 37)
    }

    /// A CRC from a real capture (SweynTooth nRF file, frame 1: AUX_SCAN_REQ, CRC 0xcebc7d as Wireshark shows it).
    @Test func crcOfARealAdvertisingPacket() throws {
        let pdu: [UInt8] = [0x03, 0x0C, 0x22, 0x0B, 0x90, 0xAC, 0x36, 0x5D, 0xE0, 0x66, 0xF3, 0x05, 0xF0, 0xF8]
        let crc = LLCRC.compute(crcInit: 0x55_5555, over: pdu)
        #expect(crc == 0xBE_3D73)  // bytes 73 3d be on the air
        #expect(LLCRC.reverse24(crc) == 0xCE_BC7D)
    }

    static let controlPDUs: [LLControlPDU] = [
        .connectionUpdateInd(LLConnectionUpdate(windowSize: 1, windowOffset: 2, interval: 6, latency: 0, timeout: 500, instant: 0x1234)),
        .channelMapInd(channelMap: 0x1F_0000_FFFF, instant: 99),
        .terminateInd(errorCode: 0x13),
        .encReq(rand: 0x0102_0304_0506_0708, ediv: 0xBEEF, skdCentral: 0x1122_3344_5566_7788, ivCentral: 0xCAFE_BABE),
        .encRsp(skdPeripheral: 42, ivPeripheral: 7),
        .startEncReq, .startEncRsp, .pauseEncReq, .pauseEncRsp, .pingReq, .pingRsp, .cteRsp,
        .unknownRsp(unknownType: LLControlOpcode(rawValue: 0x77)),
        .featureReq(features: 0x0000_0000_0001_79FF), .featureRsp(features: 0xFF), .peripheralFeatureReq(features: 1),
        .versionInd(version: 0x0C, companyID: 0x0059, subversion: 0x1234),
        .rejectInd(errorCode: 0x06),
        .connectionParamReq(
            LLConnectionParamRequest(
                intervalMin: 6, intervalMax: 12, latency: 0, timeout: 400, preferredPeriodicity: 2,
                referenceConnEventCount: 10, offsets: [0, 1, 2, 3, 4, 5])),
        .connectionParamRsp(LLConnectionParamRequest(intervalMin: 6, intervalMax: 12, latency: 0, timeout: 400)),
        .rejectExtInd(rejectOpcode: .connectionParamReq, errorCode: 0x1A),
        .lengthReq(LLLengthParameters(maxRxOctets: 251, maxRxTime: 2120, maxTxOctets: 251, maxTxTime: 2120)),
        .lengthRsp(LLLengthParameters(maxRxOctets: 27, maxRxTime: 328, maxTxOctets: 27, maxTxTime: 328)),
        .phyReq(txPHYs: 3, rxPHYs: 3), .phyRsp(txPHYs: 2, rxPHYs: 2),
        .phyUpdateInd(centralToPeripheralPHY: 2, peripheralToCentralPHY: 2, instant: 77),
        .minUsedChannelsInd(phys: 1, minUsedChannels: 2),
        .cteReq(minLength: 20, cteType: 1),
        .clockAccuracyReq(sca: 3), .clockAccuracyRsp(sca: 4),
        .cisTerminateInd(cigID: 1, cisID: 2, errorCode: 0x13),
        .powerControlReq(phy: 1, delta: -3, txPower: 4),
        .subrateReq(factorMin: 1, factorMax: 4, maxLatency: 0, continuationNumber: 1, timeout: 100),
        .subrateInd(factor: 2, baseEvent: 5, latency: 0, continuationNumber: 1, timeout: 100),
        .other(.cisRsp, [1, 2, 3, 4, 5, 6, 7, 8]),
        .other(LLControlOpcode(rawValue: 0xD6), [9, 9]),
    ]

    @Test(arguments: controlPDUs)
    func controlPDURoundTrips(_ pdu: LLControlPDU) throws {
        let packet = LLControlPacket(pdu)
        let bytes = packet.bytes
        if let info = pdu.opcode.info { #expect(bytes.count == info.size + 1, "\(pdu.opcode)") }
        #expect(try LLControlPacket(bytes: bytes) == packet)
        // Carried in a data PDU with LLID 11.
        let data = LLDataPDU(llid: .control, nesn: true, sn: false, moreData: true, payload: bytes)
        #expect(try LLDataPDU(bytes: data.bytes) == data)
        #expect(!pdu.summary.isEmpty)
    }

    @Test func controlTableCoversCore54() {
        #expect(LLControlTable.entries.count == 0x2B)
        #expect(LLControlOpcode.phyUpdateInd.name == "LL_PHY_UPDATE_IND")
        #expect(LLControlOpcode(rawValue: 0x7F).description == "LLControlOpcode(0x7f)")
    }

    @Test func controlPDUOfTheWrongSizeIsRejected() {
        #expect(throws: DecodeError.self) { try LLControlPacket(bytes: [0x14, 0xFB, 0x00]) }
    }

    @Test func dataHeaderBits() throws {
        let h = try LLDataHeader(bytes: [0x1E, 0x00])  // LLID 10, NESN 1, SN 1, MD 1
        #expect(h.llid == .start && h.nesn && h.sn && h.moreData && h.cteInfo == nil && h.length == 0)
        let cp = try LLDataHeader(bytes: [0x21, 0x00, 0x14])
        #expect(cp.cteInfo == 0x14)
        #expect(cp.bytes == [0x21, 0x00, 0x14])
    }

    @Test(arguments: [UInt8(0), 1, 2, 3])
    func nordicHeaderRoundTrips(_ version: UInt8) throws {
        let h = NordicBLEHeader(
            boardID: 75, protocolVersion: version, packetCounter: 513, packetID: .eventPacketData,
            flags: NordicBLEFlags(crcOK: true, centralToPeripheral: true, encrypted: true, micOK: false, phy: .le2M),
            channel: 17, rssiSample: 60, eventCounter: 0xABCD, time: 123_456, linkLayerLength: 9)
        let bytes = h.bytes
        #expect(bytes.count == h.size)
        let back = try NordicBLEHeader(bytes: bytes)
        #expect(back.flags.crcOK && back.flags.centralToPeripheral && back.flags.encrypted && !back.flags.micOK && back.flags.phy == .le2M)
        #expect(back.eventCounter == 0xABCD && back.time == 123_456 && back.rssi == -60 && back.channel == 17)
        if version != 0 { #expect(back == h) }
    }

    /// The first record of the SweynTooth capture, decoded field by field as Wireshark shows it.
    @Test func nordicHeaderOfARealRecord() throws {
        let record = bytes(fromHex: "4b1f0002000000 0a0300000000000000 00 d6be898e 030c22 0b90ac365de066f3 05f0f8 733dbe")!
        let air = try record.withUnsafeBytes { raw throws(DecodeError) in try LLAirPacket(linkType: 272, bytes: raw).packet.crc }
        #expect(air == 0xBE_3D73)
        let h = try withByteReader(record) { (input: inout ByteReader) throws(DecodeError) in try NordicBLEHeader(parsing: &input) }
        #expect(h.boardID == 75 && h.protocolVersion == 2 && h.payloadLength == 31 && h.packetCounter == 0 && h.eventPacketLength == 10)
        #expect(h.flags.crcOK && h.flags.auxType == 1 && h.channel == 0 && h.size == 17)
    }

    @Test func rfHeaderRoundTrips() throws {
        let h = LERFHeader(
            rfChannel: 12, signalPower: -58, noisePower: -90, accessAddressOffenses: 1, referenceAccessAddress: 0x8E89_BED6,
            flags: LERFFlags(rawValue: 0x0C13 | 0x4000))
        #expect(try LERFHeader(bytes: h.bytes) == h)
        #expect(h.bytes.count == 10)
        #expect(h.channelIndex == 38)
        #expect(h.flags.contains(.crcChecked) && h.flags.contains(.crcValid) && h.flags.phy == .le2M)
        #expect(
            LERFHeader.channelIndex(rfChannel: 0) == 37 && LERFHeader.channelIndex(rfChannel: 1) == 0
                && LERFHeader.channelIndex(rfChannel: 13) == 11 && LERFHeader.channelIndex(rfChannel: 38) == 36)
    }

    /// Frame 107 of the corpus capture `lell-rf-lt256_blue2th-smp-pairing-request-x6-unanswered.pcap` (LT 256), an ATT
    /// Error Response that Wireshark shows as "PDU Type: Data, Slave to Master (3)", flags 0x4d93: the PDU type, not
    /// the packet's place in its event, gives the direction. Flags 0x0c13 (type 0) leave it unknown.
    @Test func rfHeaderPDUTypeGivesTheDirection() throws {
        let record = bytes(fromHex: "24c08000 4ade4b93 934d 4ade4b93 1609 0500 0400 010a2a00f7 1259b9")!
        let direction = try record.withUnsafeBytes { raw throws(DecodeError) in try LLAirPacket(linkType: 256, bytes: raw).direction }
        let phy = try record.withUnsafeBytes { raw throws(DecodeError) in try LLAirPacket(linkType: 256, bytes: raw).phy }
        let crc = try record.withUnsafeBytes { raw throws(DecodeError) in try LLAirPacket(linkType: 256, bytes: raw).crc }
        #expect(direction == .rx && phy == .le2M && crc == .valid)
        #expect(LERFFlags(rawValue: 0x4d93).pduType == 3 && LERFFlags(rawValue: 0x0d13).direction == .tx)
        #expect(LERFFlags(rawValue: 0x0c13).direction == .unknown)
    }

    /// Frames 409 and 408 of the corpus's Ubertooth capture of an iPhone and a shaver (PPI around LT 251, which says
    /// nothing of the CRC): the same 46-byte ADV_NONCONN_IND, 408 with the top bit of its length byte flipped on the
    /// air (0xa5 for 0x25, so 165 bytes stated in a 46-byte record). Unchecked, such a header is damaged: the packet
    /// failed its CRC, it is not malformed. An LT 256 header that vouches for the CRC keeps its word (an error).
    @Test func anUncheckedHeaderLongerThanItsRecordFailedItsCRC() throws {
        let good = bytes(fromHex: "d6be898e 4225 bce196f64001 1eff0600010920 00f8749e43fd5db2c8af8edba0a0fedf8ae207441d3a7b5d78 23eb")!
        let damaged = bytes(fromHex: "d6be898e 42a5 7be072335a4a 1edb0600414820 025ec720cba00d6e73bb63bff2cbe4178db0df71dd9c578076 c64c")!
        let read = { (record: [UInt8], linkType: UInt32) throws -> (LLCheck, Int, Bool) in
            try record.withUnsafeBytes { raw in
                let air = try LLAirPacket(linkType: linkType, bytes: raw)
                return (air.crc, air.packet.payload.count, LLCRC.compute(crcInit: 0x55_5555, over: air.packet.pdu) == air.packet.crc)
            }
        }
        let (goodCRC, goodLength, goodChecks) = try read(good, 251)
        #expect(goodCRC == .notChecked && goodLength == 0x25 && goodChecks)
        let (damagedCRC, _, damagedChecks) = try read(damaged, 251)
        #expect(damagedCRC == .invalid && !damagedChecks)
        let vouched = LERFHeader(
            rfChannel: 12, signalPower: -58, noisePower: -90, accessAddressOffenses: 0, referenceAccessAddress: 0x8E89_BED6,
            flags: LERFFlags(rawValue: 0x0C13)
        ).bytes
        #expect(throws: DecodeError.self) { try read(vouched + damaged, 256) }
    }

    /// One PHY type, three encodings: HCI 1/2/3 (Core Spec Vol 4, Part E, 7.7.65.12), the LL bit field
    /// 0x01/0x02/0x04 (Vol 6, Part B, 2.4.2.22), the sniffer headers' 0/1/2 (nRF Sniffer flags bits 4–6).
    @Test func phyEncodings() throws {
        let phys: [(LEPHY, hci: UInt8, llBit: UInt8, sniffer: UInt8)] = [
            (.le1M, 1, 0x01, 0), (.le2M, 2, 0x02, 1), (.leCoded, 3, 0x04, 2),
        ]
        for (phy, hci, bit, sniffer) in phys {
            #expect(phy.rawValue == hci && phy.llBit == bit && phy.snifferValue == sniffer)
            #expect(LEPHY(llBits: bit) == phy && LEPHY(sniffer: sniffer) == phy)
        }
        // LL_PHY_UPDATE_IND: 0 means "no change"; a mask names its lowest PHY.
        #expect(LEPHY(llBits: 0) == nil && LEPHY(llBits: 0x06) == .le2M)
        // nRF Sniffer flags 0x21: CRC ok, PHY field 2 (LE Coded) in bits 4–6.
        #expect(NordicBLEFlags(rawValue: 0x21).phy == .leCoded)
        #expect(NordicBLEFlags(crcOK: true, phy: .leCoded).rawValue == 0x21)
        // LE PHY Update Complete parameters (after subevent 0x0C): status 0, handle 0x0040, TX 2M, RX Coded.
        let event = try LEPHYUpdateComplete(bytes: [0x00, 0x40, 0x00, 0x02, 0x03])
        #expect(event.txPHY == .le2M && event.rxPHY == .leCoded && "\(event.rxPHY)" == "Coded")
        #expect(PHYPair(tx: event.txPHY, rx: event.rxPHY).description == "tx 2M / rx Coded")
    }
}
