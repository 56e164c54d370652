import BLECore
import BLESecurity
import BLETestSupport
import Foundation
import Testing

/// One link-layer data or advertising PDU of an air capture, cut out of a classic pcap record.
struct AirPDU {
    var frame: Int
    var time: Double
    var header0: UInt8
    var payload: [UInt8]
    /// From the nRF Sniffer header (LT 272); nil for LT 256, which does not say.
    var centralToPeripheral: Bool?
    var accessAddress: UInt32
}

/// A minimal classic-pcap walk for these two files (LT 256: 10-octet RF header; LT 272 nRF Sniffer
/// protocol 2: 17 octets before the access address, direction in bit 1 of the flags at offset 8).
/// Enough to pick out the PDUs; the analyzer's own readers are not under test here.
func airPDUs(_ path: String) throws -> [AirPDU] {
    let d = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    func u32(_ o: Int) -> Int { Int(d[o]) | Int(d[o + 1]) << 8 | Int(d[o + 2]) << 16 | Int(d[o + 3]) << 24 }
    let linkType = u32(20)
    let lead = linkType == 256 ? 10 : 17
    var out: [AirPDU] = []
    var o = 24, frame = 0
    while o + 16 <= d.count {
        let time = Double(u32(o)) + Double(u32(o + 4)) / 1e6
        let incl = u32(o + 8)
        o += 16
        frame += 1
        let rec = Array(d[o..<o + incl])
        o += incl
        guard rec.count >= lead + 6 else { continue }
        let length = Int(rec[lead + 5])
        guard rec.count >= lead + 6 + length else { continue }
        out.append(
            AirPDU(
                frame: frame, time: time, header0: rec[lead + 4],
                payload: Array(rec[(lead + 6)..<(lead + 6 + length)]),
                centralToPeripheral: linkType == 272 ? rec[8] & 0x02 != 0 : nil,
                accessAddress: UInt32(rec[lead]) | UInt32(rec[lead + 1]) << 8 | UInt32(rec[lead + 2]) << 16 | UInt32(rec[lead + 3]) << 24))
    }
    return out
}

/// SMP PDUs (L2CAP CID 0x0006) reassembled from LL data PDUs, per direction: (frame of the last fragment, PDU).
func smpPDUs(_ pdus: [AirPDU]) -> [(frame: Int, pdu: [UInt8])] {
    var partial: [Bool: [UInt8]] = [:]
    var out: [(Int, [UInt8])] = []
    for p in pdus where !p.payload.isEmpty {
        let dir = p.centralToPeripheral ?? false
        switch p.header0 & 0x03 {
        case 2: partial[dir] = p.payload
        case 1: partial[dir]? += p.payload
        default: continue
        }
        guard let sdu = partial[dir], sdu.count >= 4 else { continue }
        let length = Int(sdu[0]) | Int(sdu[1]) << 8
        if sdu.count >= 4 + length {
            if sdu[2] == 0x06 && sdu[3] == 0x00 { out.append((p.frame, Array(sdu[4..<(4 + length)]))) }
            partial[dir] = nil
        }
    }
    return out
}

@Suite struct RealCaptureTests {
    static func capture(_ name: String) -> String? {
        guard let dir = TestEnvironment.sharedCaptures else { return nil }
        let path = dir + "/" + name
        return FileManager.default.fileExists(atPath: path) ? path : nil
    }

    static let lesc = capture("nrfsniffer-lt272_bsniffhub-lesc-debugkey-enc-micok-then-badmic.pcap")
    static let legacy = capture("lell-rf-lt256_bsniffhub-legacy-bonding-3enc-known-ltk.pcap")

    /// LESC Just Works where the responder uses the debug key (frames 181–208): DHKey, LTK, both DHKey checks.
    @Test(.enabled(if: lesc != nil, "shared captures absent"))
    func lescDebugKeyCapture() throws {
        let pdus = try airPDUs(Self.lesc!)
        let connect = try #require(pdus.first { $0.header0 & 0x0F == 0x05 })  // CONNECT_IND, frame 5
        #expect(connect.frame == 5)
        let initiator = PairingAddress(Array(connect.payload[0..<6]), isRandom: connect.header0 & 0x40 != 0)
        let responder = PairingAddress(Array(connect.payload[6..<12]), isRandom: connect.header0 & 0x80 != 0)
        var byOpcode: [UInt8: [(frame: Int, pdu: [UInt8])]] = [:]
        for s in smpPDUs(pdus) { byOpcode[s.pdu[0], default: []].append(s) }
        let keys = try #require(byOpcode[0x0C]).map { $0.pdu }, randoms = try #require(byOpcode[0x04]).map { $0.pdu }
        let checks = try #require(byOpcode[0x0D]).map { $0.pdu }
        #expect(byOpcode[0x0C]?.map(\.frame) == [191, 198] && byOpcode[0x0D]?.map(\.frame) == [205, 208])
        let x = SecureConnectionsExchange(
            pairingRequest: try #require(byOpcode[0x01]?.first?.pdu), pairingResponse: try #require(byOpcode[0x02]?.first?.pdu),
            initiator: initiator, responder: responder,
            initiatorPublicKeyX: Array(keys[0][1..<33]), initiatorPublicKeyY: Array(keys[0][33..<65]),
            responderPublicKeyX: Array(keys[1][1..<33]), responderPublicKeyY: Array(keys[1][33..<65]),
            na: Key128(wire: randoms[0][1...])!, nb: Key128(wire: randoms[1][1...])!,
            ea: Key128(wire: checks[0][1...]), eb: Key128(wire: checks[1][1...]))
        #expect(SecureConnections.isDebugPublicKey(x: x.responderPublicKeyX, y: x.responderPublicKeyY))
        let derived = try #require(SecureConnections.deriveWithDebugKey(x))
        #expect(derived.eaMatches == true && derived.ebMatches == true)
        #expect(derived.ltk == key("FC4091878A54C22CB58488B88608B5E2"), "LTK \(derived.ltk)")
        // Session key from LL_ENC_REQ (frame 211) and LL_ENC_RSP (frame 214).
        let req = try #require(pdus.first { $0.frame == 211 }), rsp = try #require(pdus.first { $0.frame == 214 })
        let sk = LinkLayerEncryption.sessionKey(ltk: derived.ltk, skdm: Array(req.payload[11..<19]), skds: Array(rsp.payload[1..<9]))
        print(
            "LESC capture: LTK \(derived.ltk), SK \(sk), IV \(hexString(LinkLayerEncryption.iv(ivm: Array(req.payload[19..<23]), ivs: Array(rsp.payload[9..<13]))))"
        )
    }

    /// Legacy Just Works pairing in the clear (frames 125–136), then three encrypted connections: the first with
    /// the STK, the two later ones with the bonded LTK 0F241772AC270CAFEE654186F0A65D5F (given upstream).
    @Test(.enabled(if: legacy != nil, "shared captures absent"))
    func legacyCapture() throws {
        var pdus = try airPDUs(Self.legacy!)
        assignDirections(&pdus)
        let connect = try #require(pdus.first { $0.header0 & 0x0F == 0x05 })  // frame 50
        let initiator = PairingAddress(Array(connect.payload[0..<6]), isRandom: connect.header0 & 0x40 != 0)
        let responder = PairingAddress(Array(connect.payload[6..<12]), isRandom: connect.header0 & 0x80 != 0)
        let smp = smpPDUs(pdus.filter { $0.accessAddress == 0x20C1_92EE })
        func pdu(_ opcode: UInt8, _ n: Int = 0) throws -> [UInt8] {
            try #require(smp.filter { $0.pdu[0] == opcode }.dropFirst(n).first).pdu
        }
        let x = LegacyPairingExchange(
            pairingRequest: try pdu(0x01), pairingResponse: try pdu(0x02),
            initiator: initiator, responder: responder,
            mrand: Key128(wire: try pdu(0x04, 0)[1...])!, srand: Key128(wire: try pdu(0x04, 1)[1...])!,
            mconfirm: Key128(wire: try pdu(0x03, 0)[1...])!, sconfirm: Key128(wire: try pdu(0x03, 1)[1...])!)
        let found = try #require(LegacyPairingCracker.crack(x))
        #expect(found.tk == .zero && found.passkey == nil)
        print("legacy capture: TK \(found.tk), STK \(found.stk)")
        #expect(found.stk == key("E3FE1C757B8DD90E1A3E24192ED8A5DC"), "STK \(found.stk)")

        let ltk = key("0F241772AC270CAFEE654186F0A65D5F")
        for (aa, k, expected) in [(UInt32(0x20C1_92EE), found.stk, 0), (0xEDB0_2BC4, ltk, 0), (0x5D21_84BE, ltk, 0)] {
            let report = decryptConnection(pdus.filter { $0.accessAddress == aa }, key: k)
            print(
                "connection \(hexString([UInt8(aa >> 24), UInt8(aa >> 16 & 0xFF), UInt8(aa >> 8 & 0xFF), UInt8(aa & 0xFF)])): "
                    + report.lines.joined(separator: "\n  "))
            #expect(report.decrypted > 0 && report.failed == expected, "\(report.failed) MIC failures")
            if aa == 0x20C1_92EE {
                // Frame 152 (P→C) is SMP Encryption Information: the bonded LTK, as upstream names it; frame 154
                // Master Identification with the EDIV/Rand that the later LL_ENC_REQs carry.
                let encInfo = try #require(report.plaintext[152])
                #expect(Array(encInfo.prefix(5)) == [0x11, 0x00, 0x06, 0x00, 0x06])
                #expect(Key128(wire: encInfo[5..<21]) == ltk)
                let masterID = try #require(report.plaintext[154])
                let laterReq = try #require(pdus.first { $0.frame == 445 })
                #expect(Array(masterID[5..<15]) == Array(laterReq.payload[9..<11] + laterReq.payload[1..<9]))
            }
        }
    }

    /// LT 256 does not say who sent a PDU: the first PDU of a connection event (after a gap of over 1 ms) is the
    /// central's, and the two alternate within the event.
    func assignDirections(_ pdus: inout [AirPDU]) {
        var last: [UInt32: (time: Double, c2p: Bool)] = [:]
        for i in pdus.indices where pdus[i].accessAddress != 0x8E89_BED6 {
            let aa = pdus[i].accessAddress
            let c2p: Bool
            if let l = last[aa], pdus[i].time - l.time < 0.001 { c2p = !l.c2p } else { c2p = true }
            pdus[i].centralToPeripheral = c2p
            last[aa] = (pdus[i].time, c2p)
        }
    }

    /// Decrypts a connection's PDUs from the one after LL_ENC_RSP's LL_START_ENC_REQ on: SK from LL_ENC_REQ/RSP,
    /// one packet counter per direction from 0, counting non-empty PDUs; a PDU whose SN repeats the previous one
    /// of its direction is a retransmission and keeps its counter (Core Spec Vol 6, Part B, 4.5.9; Part E, 2).
    func decryptConnection(_ pdus: [AirPDU], key: Key128) -> (decrypted: Int, failed: Int, lines: [String], plaintext: [Int: [UInt8]]) {
        guard let req = pdus.first(where: { $0.header0 & 3 == 3 && $0.payload.first == 0x03 }),
            let rsp = pdus.first(where: { $0.header0 & 3 == 3 && $0.payload.first == 0x04 }),
            let start = pdus.first(where: { $0.header0 & 3 == 3 && $0.payload.first == 0x05 && $0.payload.count == 1 })
        else { return (0, 0, ["no LL_ENC_REQ/RSP/START_ENC_REQ"], [:]) }
        let sk = LinkLayerEncryption.sessionKey(ltk: key, skdm: Array(req.payload[11..<19]), skds: Array(rsp.payload[1..<9]))
        let iv = LinkLayerEncryption.iv(ivm: Array(req.payload[19..<23]), ivs: Array(rsp.payload[9..<13]))
        let cipher = LLCipher(sessionKey: sk, iv: iv)
        var lines = [
            "LL_ENC_REQ frame \(req.frame), LL_ENC_RSP \(rsp.frame), LL_START_ENC_REQ \(start.frame); key \(key) SK \(sk) IV \(hexString(iv))"
        ]
        var next: [Bool: UInt64] = [true: 0, false: 0]
        var lastSN: [Bool: UInt8] = [:]
        var decrypted = 0, failed = 0, resynchronised = 0
        var ok: [String] = []
        var plaintext: [Int: [UInt8]] = [:]
        for p in pdus where p.frame > start.frame {
            let dir = p.centralToPeripheral!
            let sn = p.header0 >> 3 & 1
            let retransmission = lastSN[dir] == sn
            lastSN[dir] = sn
            guard !p.payload.isEmpty else { continue }
            var counter = next[dir]!
            if retransmission && counter > 0 { counter -= 1 } else { next[dir] = counter + 1 }
            var plain = cipher.decrypt(header0: p.header0, payload: p.payload, packetCounter: counter, centralToPeripheral: dir)
            var note = retransmission ? " (retransmission)" : ""
            if plain == nil {
                // The sniffer missed a connection event (SN then misleads): try the neighbouring counters.
                let guess = counter
                for c in [guess + 1, guess + 2, guess &- 1, guess + 3] where c <= 0x7F_FFFF_FFFF {
                    if let q = cipher.decrypt(header0: p.header0, payload: p.payload, packetCounter: c, centralToPeripheral: dir) {
                        plain = q
                        counter = c
                        next[dir] = c + 1
                        note = " (resynchronised: SN suggested \(guess))"
                        resynchronised += 1
                        break
                    }
                }
            }
            if let plain {
                decrypted += 1
                plaintext[p.frame] = plain
                ok.append("\(p.frame)")
                if decrypted <= 6 || !note.isEmpty && note != " (retransmission)" {
                    lines.append(
                        "frame \(p.frame) \(dir ? "C→P" : "P→C") counter \(counter)\(note): MIC ok, \(hexString(plain.prefix(12)))")
                }
            } else {
                failed += 1
                lines.append("frame \(p.frame) \(dir ? "C→P" : "P→C") counter \(counter): MIC FAILED")
            }
        }
        lines.append(
            "\(decrypted) PDUs decrypted with MIC ok (frames \(ok.first ?? "-")…\(ok.last ?? "-")), \(failed) failed, \(resynchronised) counter resynchronisations"
        )
        return (decrypted, failed, lines, plaintext)
    }
}
