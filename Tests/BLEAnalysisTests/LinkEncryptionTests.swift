import BLEAnalysis
import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import BLESecurity
import BLETestSupport
import Foundation
import Testing

@Suite struct LinkEncryptionTests {
    @Test(arguments: [LEPHY.le1M, LEPHY.le2M])
    func decryptsBothDirectionsWithTheLTK(_ phy: LEPHY) throws {
        var link = EncryptedLinkBuilder(phy: phy)
        link.startEncryption()
        let values: [[UInt8]] = [Array(0..<60), Array(100..<110), Array(repeating: 0xA5, count: 244)]
        link.notify(values[0])
        link.retransmitLast()
        link.notify(values[1])
        // The central writes a command (ATT Write Command 0x52 on 0x002C) while notifications flow.
        link.encrypted(.start, [7, 0, 0x04, 0x00, 0x52, 0x2C, 0x00, 0xDE, 0xAD, 0xBE, 0xEF], central: true)
        link.notify(values[2], fragment: 251)
        let r = LinkEncryptionRun.run(try link.capture(), keys: try LinkKeyMaterial(ltkOption: EncryptedLinkBuilder.ltkText))
        #expect(r.notifications.map(\.value) == values)
        let writes = r.timeline.filter { $0.layer == .att && $0.code == 0x52 }
        #expect(writes.map(\.value) == [[0xDE, 0xAD, 0xBE, 0xEF]] && writes.first?.direction == .tx)
        let ll = try #require(r.analyzer.connections.first?.linkLayer)
        // 2 LL_START_ENC_RSP + 3 + 1 + 1 + 1 fragments (60+7 bytes → 3, 17 → 1, command 1, 251) = 8 decrypted; the copy not.
        #expect(ll.decryptedHere == 8 && ll.retransmissions == 1 && ll.encryptedUndecrypted == 0 && ll.micFailures == 0)
        let started = r.timeline.filter { $0.name == "Encryption started" }
        #expect(started.count == 1 && started[0].summary.contains("LTK 0F241772AC270CAFEE654186F0A65D5F (--ltk)"))
        #expect(!r.analyzer.findings.contains { $0.kind.code.id.hasPrefix("ll.") })
    }

    @Test func withoutTheKeyOneFindingSaysWhatIsMissing() throws {
        var link = EncryptedLinkBuilder()
        link.startEncryption()
        link.notify(Array(0..<60))
        for keys in [LinkKeyMaterial(), try LinkKeyMaterial(ltkOption: "00112233445566778899AABBCCDDEEFF")] {
            let r = LinkEncryptionRun.run(try link.capture(), keys: keys)
            #expect(r.notifications.isEmpty)
            let found = r.analyzer.findings.filter { $0.kind.code == .llEncryptedNoKey }
            // 2 LL_START_ENC_RSP + 3 fragments, reported once, at the first encrypted frame (the 5th record); their bytes on
            // air: 2 × (1 + 4 MIC) and 27 + 27 + 13 of the 67-byte L2CAP PDU, each with its 4-byte MIC.
            #expect(found.count == 1 && found[0].frame == 5 && found[0].kind.message.contains("encrypted, no key: 5 PDUs, 89 bytes"))
            #expect(r.analyzer.connections.first?.linkLayer?.encryptedUndecrypted == 5)
            #expect(!r.analyzer.findings.contains { $0.kind.code.id.hasPrefix("l2cap.") })
        }
    }

    @Test func aPDUWithABadMICIsCountedAndTheRestStillDecrypts() throws {
        var link = EncryptedLinkBuilder()
        link.startEncryption()
        link.notify(Array(0..<20))
        link.notify(Array(20..<40), fragment: 27)
        // Tamper the only fragment of a third notification: MIC fails, the next one decrypts again.
        link.encrypted(.start, [7, 0, 0x04, 0x00, 0x1B, 0x2A, 0x00, 1, 2, 3, 4], central: false, tamper: true)
        link.notify([9, 9, 9])
        let r = LinkEncryptionRun.run(try link.capture(), keys: try LinkKeyMaterial(ltkOption: EncryptedLinkBuilder.ltkText))
        #expect(r.notifications.map(\.value) == [Array(0..<20), Array(20..<40), [9, 9, 9]])
        #expect(r.analyzer.connections.first?.linkLayer?.micFailures == 1)
        #expect(r.analyzer.findings.filter { $0.kind.code.id == "ll.mic-failed" }.count == 1)
    }

    /// A sniffer that decrypted the link's first PDUs and then lost the link (nRF Sniffer on the LESC debug-key capture:
    /// MIC ok up to 432, then "MIC failed" at 503, the peripheral's Read By Type Response, counter 10, flagged as the
    /// central's; the central's PDU before it went unheard). The key opens the rest at the counters the link reached, past
    /// the 8 an encryption start's search tries (10 for the peripheral; 6 for the central, whose counter 5 went unseen),
    /// in the direction the MIC checks in, not the flag's. A wrong key still opens nothing.
    @Test func theKeyOpensALinkTheSnifferLostPastTheFirstCounters() throws {
        var link = EncryptedLinkBuilder()
        link.startEncryption(byCapturer: true)
        for i in 0..<9 { link.notify([UInt8(i)], byCapturer: true) }
        let write: [UInt8] = [7, 0, 0x04, 0x00, 0x52, 0x2C, 0x00, 0xDE, 0xAD, 0xBE, 0xEF]
        for _ in 0..<4 { link.encrypted(.start, write, central: true, byCapturer: true) }
        link.missed(central: true)
        link.directionFlagWrong = true
        let lost = link.b.records.count + 1
        link.notify([0x10, 0x11])
        link.encrypted(.start, write, central: true)
        link.notify([0x12], fragment: 27)
        let before = (0..<9).map { [UInt8($0)] }
        #expect(link.counters.0 == 7 && link.counters.1 == 12)
        let r = LinkEncryptionRun.run(try link.capture(), keys: try LinkKeyMaterial(ltkOption: EncryptedLinkBuilder.ltkText))
        #expect(r.notifications.map(\.value) == before + [[0x10, 0x11], [0x12]])
        #expect(r.notifications.last.map(\.frame) == link.b.records.count)
        #expect(r.timeline.filter { $0.layer == .att }.allSatisfy { $0.direction == ($0.code == 0x1B ? .rx : .tx) })
        let ll = try #require(r.analyzer.connections.first?.linkLayer)
        #expect(ll.decryptedByCapturer == 2 + 9 + 4 && ll.decryptedHere == 3 && ll.micFailures == 0)
        let e = try #require(r.analyzer.connections.first?.linkEncryption)
        #expect(e.key?.displayText == EncryptedLinkBuilder.ltkText && e.missedPDUs == 1 && e.firstMICFailureFrame == nil)
        #expect(!r.analyzer.findings.contains { $0.kind.code.id == "ll.mic-failed" })

        let wrong = LinkEncryptionRun.run(try link.capture(), keys: try LinkKeyMaterial(ltkOption: "00112233445566778899AABBCCDDEEFF"))
        #expect(wrong.notifications.map(\.value) == before)
        let w = try #require(wrong.analyzer.connections.first?.linkLayer)
        #expect(w.decryptedHere == 0 && w.micFailures == 3)
        #expect(wrong.analyzer.findings.filter { $0.kind.code.id == "ll.mic-failed" }.map(\.frame) == [lost])
    }

    /// The builder's nRF Sniffer records as LINKTYPE 256 writes them: no encryption flags, the direction in the PDU type.
    static func lt256(_ link: EncryptedLinkBuilder) throws -> CaptureFile {
        let owned = link.b.records.map { r in
            let advertising = Array(r.bytes[17..<21]) == [0xD6, 0xBE, 0x89, 0x8E]
            let pduType: UInt16 = advertising ? 0 : r.bytes[8] & 0x02 != 0 ? 2 : 3
            let h = LERFHeader(rfChannel: advertising ? 0 : 8, flags: LERFFlags(rawValue: 0x0C13 | pduType << 7)).bytes
            return OwnedRecord(
                frame: r.frame, timestamp: Timestamp(microseconds: r.micros), direction: .unknown, kind: .linkLayer,
                originalLength: h.count + r.bytes.count - 17, linkType: 256, bytes: h + Array(r.bytes[17...]))
        }
        return try CaptureFile.open(bytes: CaptureWriter.pcap(owned, linkType: 256), name: "lt256.pcap")
    }

    /// An encryption pause and restart on LINKTYPE 256 with no key (audit49's pause.pcap; Core Spec Vol 6, Part B,
    /// 5.1.3.2): the central's LL_PAUSE_ENC_RSP goes in the clear, one octet, and once made the whole link "plaintext
    /// after the start", so the restart's ciphertext was read as L2CAP (14 incomplete PDUs, a decode-health warning).
    /// Both sessions' ciphertext is counted as such. Near miss: the same link without the pause.
    @Test(arguments: [true, false])
    func anEncryptionPauseWithoutAKeyLeavesTheRestartCiphertext(_ pause: Bool) throws {
        var link = EncryptedLinkBuilder()
        link.startEncryption()
        link.notify(Array(0..<60))
        if pause {
            link.encrypted(.control, [LLControlOpcode.pauseEncReq.rawValue], central: true)
            link.encrypted(.control, [LLControlOpcode.pauseEncRsp.rawValue], central: false)
            link.clear(.pauseEncRsp, central: true)
            link.counters = (0, 0)
            link.startEncryption()
        }
        link.notify(Array(60..<120))
        let r = LinkEncryptionRun.run(try Self.lt256(link))
        let ll = try #require(r.analyzer.connections.first?.linkLayer)
        // Two notifications of 67-byte L2CAP PDUs (27 + 27 + 13 octets, each with its 4-octet MIC: 79 on air) and the
        // 5-octet control PDUs: both LL_START_ENC_RSPs, and with the pause LL_PAUSE_ENC_REQ, the peripheral's
        // LL_PAUSE_ENC_RSP and the restart's two LL_START_ENC_RSPs.
        #expect(ll.encryptedUndecrypted == (pause ? 12 : 8) && ll.encryptedUndecryptedBytes == 2 * 79 + (pause ? 6 : 2) * 5)
        #expect(ll.decryptedByCapturer == 0 && ll.micFailures == 0)
        #expect(!r.analyzer.findings.contains { $0.kind.code.id.hasPrefix("l2cap.") || $0.kind.code.id == "decode.health" })
        #expect(r.timeline.filter { $0.name == "LL_ENC_REQ" }.count == (pause ? 2 : 1))
    }

    /// The encryption start with both LL_START_ENC_RSPs flagged unencrypted (nRF Sniffer on a fuzzer's link: corpus
    /// telink enc-loop, frames 413 and 415): no PDU is ever encrypted, yet the procedure finished (Core Spec Vol 6,
    /// Part B, 5.1.3.1), so encryption started at the peripheral's response, once, and a pairing before it is not
    /// "stalled" (SEC-04 said so at frame 384 of that capture).
    @Test func anEncryptionStartShownInTheClearStillStartsEncryption() throws {
        var link = EncryptedLinkBuilder()
        link.clear(.encReq(rand: 0, ediv: 0, skdCentral: 1, ivCentral: 2), central: true)
        link.clear(.encRsp(skdPeripheral: 3, ivPeripheral: 4), central: false)
        link.clear(.startEncReq, central: false)
        link.clear(.startEncRsp, central: true)
        link.clear(.startEncRsp, central: false)
        let peripheralResponse = link.b.records.count
        let r = LinkEncryptionRun.run(try link.capture())
        let started = r.timeline.filter { $0.name == "Encryption started" }
        #expect(started.map(\.frame) == [peripheralResponse])
        let evidence = Evidence(pass: r.analyzer).events.filter {
            if case .encryptionChange(_, .success, true) = $0.kind { true } else { false }
        }
        #expect(evidence.map(\.frame) == [peripheralResponse])
    }

    @Test func sniffersThatDecryptedKeepOrDropTheMIC() throws {
        // The same notification recorded as decrypted by the capturer, with the MIC left after the payload
        // (and in the LL length) and without it: both read the same once the packets show which it is.
        for keepMIC in [false, true] {
            var b = NordicBuilder()
            b.connect()
            let mic: [UInt8] = keepMIC ? [0xAA, 0xBB, 0xCC, 0xDD] : []
            b.data(.control, LLControlPacket(.startEncRsp).bytes + mic, central: true, event: 1, encrypted: true, micOK: true)
            let att: [UInt8] = [0x1B, 0x2A, 0x00] + Array(0..<40)
            let pdu = [UInt8(att.count), 0, 0x04, 0x00] + att
            b.data(.start, Array(pdu[0..<27]) + mic, central: false, event: 2, encrypted: true, micOK: true)
            b.data(.continuation, Array(pdu[27...]) + mic, central: false, sn: true, event: 3, encrypted: true, micOK: true)
            let owned = b.records.map {
                OwnedRecord(
                    frame: $0.frame, timestamp: Timestamp(microseconds: $0.micros), direction: .unknown,
                    kind: .linkLayer, originalLength: $0.origLen, linkType: 272, bytes: $0.bytes)
            }
            let r = LinkEncryptionRun.run(try CaptureFile.open(bytes: CaptureWriter.pcap(owned, linkType: 272), name: "x.pcap"))
            #expect(r.notifications.map(\.value) == [Array(0..<40)], "MIC kept: \(keepMIC)")
            #expect(r.analyzer.connections.first?.linkLayer?.decryptedByCapturer == 3)
            #expect(!r.analyzer.findings.contains { $0.kind.code.id.hasPrefix("l2cap.") })
        }
    }

    @Test func keyFileAndOption() throws {
        let m = try LinkKeyMaterial(
            keyFile: """
                - address: C0:FF:EE:00:00:01
                  ltk: 0F241772AC270CAFEE654186F0A65D5F
                  ediv: 0x2e7a
                  rand: 0x238d24c7250de29c
                - irk: 00112233445566778899AABBCCDDEEFF
                  address: C0:FF:EE:00:00:02
                """, path: "keys.yaml")
        #expect(m.linkKeys.count == 1 && m.identityKeys.count == 1)
        #expect(m.linkKeys[0].ltk.first == 0x5F && m.linkKeys[0].ltk.last == 0x0F)  // wire order: least significant first
        #expect(m.linkKeys[0].ediv == 0x2E7A && m.linkKeys[0].rand == 0x238D_24C7_250D_E29C && m.linkKeys[0].address == 0xC0FF_EE00_0001)
        #expect(m.linkKeys[0].displayText == "0F241772AC270CAFEE654186F0A65D5F")
        #expect(throws: LinkKeyMaterial.LoadError.self) { try LinkKeyMaterial(keyFile: "- ltk: 0F24", path: "k") }
        #expect(throws: LinkKeyMaterial.LoadError.self) { try LinkKeyMaterial(keyFile: "- address: C0:FF:EE:00:00:01", path: "k") }
        #expect(throws: LinkKeyMaterial.LoadError.self) { try LinkKeyMaterial(ltkOption: "xyz") }
    }

    /// Core Spec Vol 3, Part H, Appendix D.7: IRK ec0234a357c8ad05341010a60a397d9b, prand 708194 → hash 0dfbaa,
    /// so the resolvable private address 70:81:94:0D:FB:AA belongs to the device with that IRK.
    @Test func identityResolverNamesTheDeviceBehindItsPrivateAddress() throws {
        let keys = try LinkKeyMaterial(
            keyFile: """
                - irk: ec0234a357c8ad05341010a60a397d9b
                  address: C0:FF:EE:00:00:01
                """)
        var resolver = IdentityResolver(keys.identityKeys)
        #expect(resolver.identity(of: 0x7081_940D_FBAA)?.description == "C0:FF:EE:00:00:01")
        #expect(resolver.identity(of: 0x7081_940D_FBAB) == nil)  // hash off by one
        #expect(resolver.identity(of: 0xC081_940D_FBAA) == nil)  // static random: not resolvable
        #expect(IdentityResolver.isResolvable(0x7081_940D_FBAA) && !IdentityResolver.isResolvable(0x3081_940D_FBAA))
    }

    /// `--keys-from`: the phone's HCI log hands its controller every LTK. As central (LE Enable Encryption) and as
    /// peripheral (LE Long Term Key Request, then its Reply), the keys come out with their EDIV/Rand and peer.
    @Test func aPhonesHCILogGivesTheKeysThatDecryptTheAirCapture() throws {
        let ltk = Key128(hex: EncryptedLinkBuilder.ltkText)!.bytes
        let other = Key128(hex: "00112233445566778899AABBCCDDEEFF")!.bytes
        let log = CaptureBuilder()
            .connect(handle: 0x40, peer: BDAddress(0xC0FF_EE00_0001))
            .command(
                HCIBuild.command(
                    .declared(
                        LEEnableEncryption {
                            $0.handle = 0x40
                            $0.randomNumber = 0x1122
                            $0.encryptedDiversifier = 0x3344
                            $0.longTermKey = other
                        }))
            )
            .connect(handle: 0x41, peer: BDAddress(0xC0FF_EE00_0002))
            .event(HCIBuild.leMeta(.longTermKeyRequest, parameters: [0x41, 0x00] + [0, 0, 0, 0, 0, 0, 0, 0] + [0, 0]))
            .command(HCIBuild.command(.leLongTermKeyRequestReply, parameters: [0x41, 0x00] + ltk))
        let path = NSTemporaryDirectory() + "phone-\(UUID().uuidString).btsnoop"
        try Data(log.btsnoopBytes()).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let keys = try LinkKeyMaterial(phoneLog: path)
        #expect(keys.linkKeys.count == 2)
        #expect(
            keys.linkKeys.contains {
                $0.ltk == other && $0.ediv == 0x3344 && $0.rand == 0x1122 && $0.address == 0xC0FF_EE00_0001
                    && $0.source == .phoneLog(path: path, frame: 2)
            })
        #expect(
            keys.linkKeys.contains {
                $0.ltk == ltk && $0.ediv == 0 && $0.rand == 0 && $0.address == 0xC0FF_EE00_0002
                    && $0.source == .phoneLog(path: path, frame: 5)
            })
        var link = EncryptedLinkBuilder()
        link.startEncryption()
        link.notify(Array(0..<30))
        let r = LinkEncryptionRun.run(try link.capture(), keys: keys)
        #expect(r.notifications.map(\.value) == [Array(0..<30)])
    }

    @Test func timelineNamesTheIdentityBehindAPrivateAddress() throws {
        var b = NordicBuilder()
        let c = LLConnectInd(
            initiator: LLDeviceAddress(0x7081_940D_FBAA, isRandom: true), advertiser: LLDeviceAddress(0xC0FF_EE00_0001),
            parameters: LLConnectionParameters(accessAddress: NordicBuilder.aa, crcInit: NordicBuilder.crcInit, interval: 24, timeout: 72))
        b.add(aa: .advertising, pdu: LLAdvertisingPacketPDU(.connectInd(c)).bytes, crcInit: 0x55_5555, data: false)
        let owned = b.records.map {
            OwnedRecord(
                frame: $0.frame, timestamp: Timestamp(microseconds: $0.micros), direction: .unknown,
                kind: .linkLayer, originalLength: $0.origLen, linkType: 272, bytes: $0.bytes)
        }
        let keys = try LinkKeyMaterial(keyFile: "- irk: ec0234a357c8ad05341010a60a397d9b\n  address: C0:FF:EE:00:00:02\n")
        let r = LinkEncryptionRun.run(try CaptureFile.open(bytes: CaptureWriter.pcap(owned, linkType: 272), name: "x.pcap"), keys: keys)
        #expect(
            r.timeline.contains {
                $0.name == "CONNECT_IND" && $0.summary.contains("central 70:81:94:0D:FB:AA (random) = identity C0:FF:EE:00:00:02")
            })
        #expect(!r.timeline.contains { $0.summary.contains("C0:FF:EE:00:00:01 = identity") })  // a public address is never resolved
    }

    // MARK: real captures

    static let legacyBonding =
        (TestEnvironment.sharedCaptures ?? "/nonexistent") + "/lell-rf-lt256_bsniffhub-legacy-bonding-3enc-known-ltk.pcap"
    static let nordicBadMIC =
        (TestEnvironment.sharedCaptures ?? "/nonexistent") + "/nrfsniffer-lt272_bsniffhub-lesc-debugkey-enc-micok-then-badmic.pcap"

    /// Legacy Just Works pairing in the clear, then three encrypted connections (PROVENANCE: the bonded LTK is
    /// 0F241772AC270CAFEE654186F0A65D5F, given upstream in the file's name). blescope finds TK 0, decrypts the
    /// first connection with the STK, reads the LTK the peripheral distributes, and decrypts the other two with it.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: legacyBonding)))
    func legacyBondingDecryptsEveryConnectionWithoutAKey() throws {
        let r = LinkEncryptionRun.run(try CaptureFile.open(path: Self.legacyBonding))
        let encrypted = r.analyzer.connections.compactMap(\.linkEncryption)
        #expect(encrypted.count == 3)
        #expect(encrypted[0].key?.source.kind == "legacy-just-works")
        #expect(
            encrypted.dropFirst().allSatisfy {
                $0.key?.displayText == "0F241772AC270CAFEE654186F0A65D5F" && $0.key?.source.kind == "smp-distributed"
            })
        #expect(r.analyzer.connections.compactMap(\.linkLayer).allSatisfy { $0.encryptedUndecrypted == 0 && $0.micFailures == 0 })
        #expect(r.timeline.filter { $0.layer == .att }.count == 92)  // tshark on `convert --decrypt`'s copy: 92
        #expect(r.analyzer.knownKeys.linkKeys.contains { $0.displayText == "0F241772AC270CAFEE654186F0A65D5F" && $0.ediv == 0x2E7A })
    }

    static let pogoPhoneLog =
        (TestEnvironment.corpusDirectory ?? "/nonexistent") + "/android-btsnoop_pogo-plus-pair-and-reconnect-encrypted.log"

    /// `--keys-from` on a real Android log (public corpus, `BLESCOPE_CORPUS`): the LTK the phone hands its controller
    /// in LE Enable Encryption (frame 417; tshark: Long Term Key 0600d3ab06f0bfd9720b888665eef392, Rand 0, EDIV 0) for
    /// peer 7C:BB:8A:CB:0C:8D, and the IRK the phone distributes with its identity D0:13:FD:77:94:8B (frames 423–424).
    @Test(.enabled(if: FileManager.default.fileExists(atPath: pogoPhoneLog)))
    func keysFromARealPhoneLog() throws {
        let keys = try LinkKeyMaterial(phoneLog: Self.pogoPhoneLog)
        let ltk: [UInt8] = BLECore.bytes(fromHex: "0600d3ab06f0bfd9720b888665eef392")!
        #expect(
            keys.linkKeys.contains {
                $0.ltk == ltk && $0.ediv == 0 && $0.rand == 0 && $0.address == 0x7CBB_8ACB_0C8D
                    && $0.source == .phoneLog(path: Self.pogoPhoneLog, frame: 417)
            })
        let irk: [UInt8] = BLECore.bytes(fromHex: "634fc4a0c071230d3c872b296ae2459a")!
        #expect(keys.identityKeys.contains { $0.irk == irk && $0.identity?.description == "D0:13:FD:77:94:8B" })
    }

    /// The sniffer decrypted the link (MIC ok, no MIC in the payload), then lost it at frame 503: 19 packets flagged
    /// "MIC failed", 10 more no longer flagged encrypted. The LTK blescope derives from the debug-key pairing
    /// (FC4091878A54C22CB58488B88608B5E2) opens all 29 (an independent AES-CCM check, audit49's ccm.py, agrees): 503 is
    /// the peripheral's Read By Type Response at counter 10, flagged as the central's; the central's counter 10 went
    /// unheard, its 504 is 11; 1522 is the central's LL_TERMINATE_IND 0x13 at counter 21.
    @Test(.enabled(if: FileManager.default.fileExists(atPath: nordicBadMIC)))
    func theDerivedKeyOpensWhatTheSnifferFailed() throws {
        let r = LinkEncryptionRun.run(try CaptureFile.open(path: Self.nordicBadMIC))
        // tshark: 18 ATT PDUs the sniffer decrypted; ccm.py: 28 more from 503 (the 29th is the LL_TERMINATE_IND).
        let att = r.timeline.filter { $0.layer == .att }
        #expect(att.count == 18 + 28)
        #expect(att.first { $0.frame == 503 }.map { $0.code == 0x09 && $0.direction == .rx } == true)
        #expect(att.filter { $0.code == 0x1B }.map(\.frame) == [836, 936, 1036, 1136, 1233, 1329, 1427])
        let ll = try #require(r.analyzer.connections.first?.linkLayer)
        #expect(ll.micFailures == 0 && ll.decryptedByCapturer == 20 && ll.decryptedHere == 29 && ll.encryptedUndecrypted == 0)
        let e = try #require(r.analyzer.connections.first?.linkEncryption)
        #expect(e.key?.displayText == "FC4091878A54C22CB58488B88608B5E2" && e.key?.source.kind == "lesc-debug-key")
        #expect(e.missedPDUs == 1)
        #expect(r.analyzer.connections.first?.endFrame == 1522)
        #expect(!r.analyzer.findings.contains { $0.kind.code.id == "ll.mic-failed" || $0.kind.code.id.hasPrefix("l2cap.") })
    }
}
