import BLEAnalysis
import BLEAnalysisTestSupport
import BLECapture
import BLECore
import BLEProtocols
import BLESecurity
import BLETestSupport
import Foundation
import Testing

/// Real air captures with a whole LE legacy pairing, cut at test time so that c1 cannot be used: every record before
/// the Pairing Request dropped (the CONNECT_IND with it), or the Pairing Confirms dropped too (crackle's "missing
/// confirms" case). The cut copy must decrypt what the whole capture decrypts (there c1 found the TK from the
/// CONNECT_IND's addresses): the same key, the same plaintext PDUs at the same frames.
@Suite struct PairingMICSearchRealCaptureTests {
    struct RealPairing: CustomTestStringConvertible, Sendable {
        var path: String
        /// The TK as the capture's provenance gives it: bsniffhub names the passkey in the file, crackle's expected
        /// output prints the TK (tests/01_crack: 000000; tests/05_numeric_pin: 461140).
        var passkey: UInt32
        /// The LTK crackle prints for the pairing (tests/01_crack, tests/05_numeric_pin), most significant first.
        var crackleLTK: String?
        var testDescription: String { (path as NSString).lastPathComponent }
    }

    static let shared = TestEnvironment.sharedCaptures ?? "/nonexistent"
    static let corpus = TestEnvironment.corpusDirectory ?? "/nonexistent"
    static let pairings = [
        RealPairing(path: shared + "/lell-rf-lt256_bsniffhub-legacy-bonding-3enc-known-ltk.pcap", passkey: 0),
        RealPairing(path: corpus + "/lell-rf-lt256_bsniffhub-legacy-passkey-123456-enc.pcap", passkey: 123_456),
        RealPairing(
            path: corpus + "/ppi-btle-lt192_crackle-legacy-pairing-ltk-exchange-encrypted.pcap", passkey: 0,
            crackleLTK: "7f62c053f104a5bbe68b1d896a2ed49c"),
        RealPairing(
            path: corpus + "/ppi-btle-lt192_crackle-numeric-pin-pairing.pcap", passkey: 461_140,
            crackleLTK: "9c0469262e521d1d40e095e7c542c5ec"),
    ]

    static func records(_ path: String) throws -> [OwnedRecord] {
        let capture = try CaptureFile.open(path: path)
        var out: [OwnedRecord] = []
        while let r = capture.next() { out.append(OwnedRecord(r)) }
        return out
    }

    /// Every decoded L2CAP-level event (SMP, ATT, signalling) and LL control PDU: (frame, layer, name, value or summary).
    static func plaintext(_ r: LinkEncryptionRun.Result, from: Int = 0, shift: Int = 0) -> [String] {
        r.timeline.filter { $0.frame >= from && [.smp, .att, .l2cap, .ll].contains($0.layer) && $0.name != "Encryption started" }
            .map { e in
                // Responses name their request's frame (`← #1449`): moved like every frame.
                let summary = e.summary.replacing(#/#(\d+)/#) { "#\(Int($0.1)! - shift)" }
                return "\(e.frame - shift) \(e.layer) \(e.direction) \(e.name) \(e.value.map(hexString) ?? summary)"
            }
    }

    @Test(arguments: pairings)
    func aCopyWithoutTheConnectIndDecryptsTheSame(_ pairing: RealPairing) throws {
        guard FileManager.default.fileExists(atPath: pairing.path) else {
            print("skipped: \(pairing.path) is not on this machine")
            return
        }
        let all = try Self.records(pairing.path)
        let full = LinkEncryptionRun.run(try CaptureFile.open(path: pairing.path))
        // The pairing's connection is the one the first Pairing Request is on.
        let request = try #require(full.timeline.first { $0.layer == .smp && $0.name == "Pairing Request" })
        let connection = try #require(full.analyzer.connections.first { $0.handle == request.connection })
        let fullKey = try #require(connection.linkEncryption?.key)
        #expect(fullKey.source.kind == (pairing.passkey == 0 ? "legacy-just-works" : "legacy-passkey"))
        guard case let .legacyPairing(passkey, pairingFrame) = fullKey.source else { Issue.record("\(fullKey.source)"); return }
        #expect(passkey == pairing.passkey)

        let kept = all.filter { $0.frame >= request.frame }
        let shift = request.frame - 1
        let copy = try CaptureFile.open(
            bytes: CaptureWriter.pcap(
                kept.map {
                    var r = $0; r.frame -= shift; return r
                }, linkType: all[0].linkType), name: "cut.pcap")
        let cut = LinkEncryptionRun.run(copy)
        #expect(!cut.timeline.contains { $0.name == "CONNECT_IND" && $0.frame <= connection.startFrame - shift })
        let cutConnection = try #require(cut.analyzer.connections.first)
        #expect(cutConnection.inferred)
        let cutKey = try #require(cutConnection.linkEncryption?.key)
        #expect(cutKey.ltk == fullKey.ltk)
        guard case let .legacyPairingMIC(cutPasskey, cutPairingFrame, checked, cause, confirmation) = cutKey.source else {
            Issue.record("\(cutKey.source)")
            return
        }
        #expect(cutPasskey == pairing.passkey && cutPairingFrame == pairingFrame - shift && cause == .noConnectInd)
        #expect(checked == (connection.linkEncryption?.encryptedFrom ?? 0) - shift)
        guard case .confirmed(let confirmedFrame) = confirmation else { Issue.record("\(confirmation)"); return }
        #expect(confirmedFrame > checked)
        // The same plaintext from the encryption start on: SMP (the keys distributed under the STK), ATT, LL control, and
        // the later connections the distributed LTK decrypts. (Before it, in the clear, the cut can change what is read:
        // a PDU whose earlier copy was cut away is no longer a retransmission.)
        let expected = Self.plaintext(full, from: checked + shift, shift: shift)
        let got = Self.plaintext(cut, from: checked)
        let firstDifference = zip(got, expected).first { $0 != $1 }.map { "\($0) vs \($1)" }
        #expect(got == expected, "\(firstDifference ?? "") count \(got.count) vs \(expected.count)")
        #expect(got.contains { $0.contains("Encryption Information") })
        // And the pairing itself, in the clear, is read the same.
        let pairingPDUs = { (r: LinkEncryptionRun.Result, shift: Int) in
            r.timeline.filter { $0.layer == .smp && $0.frame < checked + shift }.map { "\($0.frame - shift) \($0.summary)" }
        }
        #expect(pairingPDUs(cut, 0) == pairingPDUs(full, shift) && pairingPDUs(cut, 0).count >= 5)
        if let ltk = pairing.crackleLTK {
            // The LTK distributed in the encrypted part, as crackle printed it.
            let distributed = cut.timeline.filter { $0.name == "Encryption Information" }.map(\.summary)
            #expect(distributed.contains { $0.contains("ltk=" + hexString(bytes(fromHex: ltk)!.reversed())) }, "\(distributed)")
        }
    }
}

extension PairingMICSearchRealCaptureTests {
    /// crackle's "missing confirms" case (its tests/03_stk_brute: the same capture without the Pairing Confirms): the
    /// CONNECT_IND is there but c1 has nothing to check, so the MIC decides; the same STK as the whole capture's.
    @Test(arguments: pairings)
    func aCopyWithoutThePairingConfirmsDecryptsTheSame(_ pairing: RealPairing) throws {
        guard FileManager.default.fileExists(atPath: pairing.path) else {
            print("skipped: \(pairing.path) is not on this machine")
            return
        }
        let full = LinkEncryptionRun.run(try CaptureFile.open(path: pairing.path))
        let confirms = Set(full.timeline.filter { $0.layer == .smp && $0.name == "Pairing Confirm" }.map(\.frame))
        try #require(confirms.count == 2)
        let fullKey = try #require(full.analyzer.connections.compactMap(\.linkEncryption).first?.key)
        let kept = try Self.records(pairing.path).filter { !confirms.contains($0.frame) }
        let copy = try CaptureFile.open(bytes: CaptureWriter.pcap(kept, linkType: kept[0].linkType), name: "no-confirms.pcap")
        let r = LinkEncryptionRun.run(copy)
        let key = try #require(r.analyzer.connections.compactMap(\.linkEncryption).first?.key)
        #expect(key.ltk == fullKey.ltk)
        guard case let .legacyPairingMIC(passkey, _, _, cause, confirmation) = key.source else { Issue.record("\(key.source)"); return }
        #expect(passkey == pairing.passkey && cause == .missing("Pairing Confirm"))
        if case .confirmed = confirmation {} else { Issue.record("\(confirmation)") }
        #expect(key.source.description.contains("because the capture has no Pairing Confirm"))
        // Every ATT PDU of the whole capture, none lost.
        #expect(r.timeline.filter { $0.layer == .att }.count == full.timeline.filter { $0.layer == .att }.count)
    }

    /// crackle decrypted these two captures itself (`…decrypted-by-crackle.pcap`: the same records, the encrypted ones
    /// written in the clear): tshark's reading of that file is a decryption independent of blescope. blescope's
    /// decryption of the copy cut before the pairing gives the same SMP and ATT PDUs (opcodes) at the same frames: 1 in
    /// the first (crackle decrypted 3 packets: the two LL_START_ENC_RSPs and Encryption Information), 53 in the second.
    @Test(arguments: [
        (
            "ppi-btle-lt192_crackle-legacy-pairing-ltk-exchange-encrypted.pcap",
            "ppi-btle-lt192_crackle-legacy-pairing-decrypted-by-crackle.pcap", 1
        ),
        ("ppi-btle-lt192_crackle-numeric-pin-pairing.pcap", "ppi-btle-lt192_crackle-numeric-pin-decrypted-by-crackle.pcap", 53),
    ])
    func tsharkOnCracklesDecryptionAgrees(_ encrypted: String, _ decrypted: String, _ pdus: Int) throws {
        let encryptedPath = Self.corpus + "/" + encrypted, decryptedPath = Self.corpus + "/" + decrypted
        guard FileManager.default.fileExists(atPath: encryptedPath), FileManager.default.fileExists(atPath: decryptedPath),
            TestEnvironment.tsharkPath != nil
        else {
            print("skipped: needs BLESCOPE_CORPUS with \(encrypted) and \(decrypted), and tshark")
            return
        }
        // tshark 4.0 reads PPI without its BTLE payload: the records without their PPI header, as LT 251.
        let bare = try Self.records(decryptedPath).map { r -> OwnedRecord in
            let headerLength = Int(r.bytes[2]) | Int(r.bytes[3]) << 8
            var o = r
            o.bytes = Array(r.bytes[headerLength...])
            o.originalLength = o.bytes.count
            return o
        }
        let path = NSTemporaryDirectory() + "crackle-\(UUID().uuidString).pcap"
        try Data(CaptureWriter.pcap(bare, linkType: 251)).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let rows = try #require(
            TestEnvironment.tsharkFields([
                "-r", path, "-Y", "btsmp || btatt", "-T", "fields", "-e", "frame.number", "-e", "btsmp.opcode", "-e", "btatt.opcode",
            ]))

        let all = try Self.records(encryptedPath)
        let full = LinkEncryptionRun.run(try CaptureFile.open(path: encryptedPath))
        let request = try #require(full.timeline.first { $0.layer == .smp && $0.name == "Pairing Request" })
        let shift = request.frame - 1
        let kept = all.filter { $0.frame >= request.frame }.map {
            var r = $0; r.frame -= shift; return r
        }
        let cut = LinkEncryptionRun.run(
            try CaptureFile.open(bytes: CaptureWriter.pcap(kept, linkType: all[0].linkType), name: "cut.pcap"))
        let encryptedFrom = try #require(cut.analyzer.connections.first?.linkEncryption?.encryptedFrom) + shift
        #expect(cut.analyzer.connections.first?.linkEncryption?.key?.source.kind.hasSuffix("-mic") == true)
        let theirs = rows.compactMap { row -> String? in
            guard let frame = Int(row[0]), frame >= encryptedFrom else { return nil }
            let opcode = row[1].isEmpty ? row[2] : row[1]
            return "\(frame) \(row[1].isEmpty ? "att" : "smp") \(opcode)"
        }
        let ours = cut.timeline.filter { ($0.layer == .smp || $0.layer == .att) && $0.frame + shift >= encryptedFrom }
            .map { "\($0.frame + shift) \($0.layer) 0x\(String($0.code ?? 0, radix: 16).leftPadded(2))" }
        #expect(
            ours == theirs,
            "first difference: \(zip(ours, theirs).first { $0 != $1 }.map { "\($0) vs \($1)" } ?? "count \(ours.count) vs \(theirs.count)")"
        )
        #expect(theirs.count == pdus)
    }
}

extension String {
    fileprivate func leftPadded(_ width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}

extension PairingMICSearchRealCaptureTests {
    static let whad = corpus + "/lell-rf-lt256_whad-ble-pairing-gatt.pcap"

    /// A real capture of this shape as recorded: WHAD joined the connection at an AUX_CONNECT_REQ (frame 1, on secondary
    /// channel 35), which opens the link as a CONNECT_IND does (Core Spec Vol 6, Part B, 2.3.3.1), so the link has the
    /// request's addresses and the legacy Just Works pairing's TK (0) gives the STK directly. Checked independently with
    /// tshark's reading of the capture: c1 over the addresses of that AUX_CONNECT_REQ and the pairing's values gives the
    /// same TK and STK, and the keys decrypted with it are the devices' own (the peripheral's identity address is the
    /// AdvA; the central's IRK resolves its InitA).
    @Test(.enabled(if: FileManager.default.fileExists(atPath: whad) && TestEnvironment.tsharkPath != nil))
    func whadCaptureJoinedAtAnAuxConnectReq() throws {
        let connect = try #require(
            TestEnvironment.tsharkFields([
                "-r", Self.whad, "-Y", "frame.number == 1", "-T", "fields", "-e", "btle.initiator_address", "-e",
                "btle.advertising_address", "-e", "btle.advertising_header.randomized_tx", "-e", "btle.advertising_header.randomized_rx",
            ])?.first)
        let smp = try #require(
            TestEnvironment.tsharkFields([
                "-r", Self.whad, "-Y", "btsmp.opcode <= 4", "-T", "fields", "-e", "frame.number", "-e", "btsmp.opcode", "-e",
                "btsmp.io_capability", "-e", "btsmp.oob_data_flags", "-e", "btsmp.authreq", "-e", "btsmp.max_enc_key_size", "-e",
                "btsmp.initiator_key_distribution", "-e", "btsmp.responder_key_distribution", "-e", "btsmp.cfm_value", "-e",
                "btsmp.random_value",
            ]))
        func number(_ text: String) -> UInt8 { UInt8(text.hasPrefix("0x") ? UInt8(text.dropFirst(2), radix: 16)! : UInt8(text)!) }
        func pdu(_ opcode: UInt8) throws -> [UInt8] {
            let row = try #require(smp.first { number($0[1]) == opcode })
            return [opcode] + row[2...7].map(number)
        }
        func values(_ opcode: UInt8, _ column: Int) -> [Key128] {
            smp.filter { number($0[1]) == opcode }.compactMap { Key128(wire: bytes(fromHex: $0[column]) ?? []) }
        }
        let (confirms, randoms) = (values(3, 8), values(4, 9))
        try #require(confirms.count == 2 && randoms.count == 2)
        let exchange = LegacyPairingExchange(
            pairingRequest: try pdu(1), pairingResponse: try pdu(2),
            initiator: try #require(PairingAddress(text: connect[0], isRandom: connect[2] == "1")),
            responder: try #require(PairingAddress(text: connect[1], isRandom: connect[3] == "1")),
            mrand: randoms[0], srand: randoms[1], mconfirm: confirms[0], sconfirm: confirms[1])
        let c1 = try #require(LegacyPairingCracker.crack(exchange))

        let r = LinkEncryptionRun.run(try CaptureFile.open(path: Self.whad))
        let link = try #require(r.analyzer.connections.first)
        #expect(!link.inferred && link.startFrame == 1 && link.peerAddress == connect[1].uppercased())
        let key = try #require(link.linkEncryption?.key)
        #expect(key.ltk == c1.stk.bytes && c1.passkey == nil)
        let lastRandom = try #require(smp.last { number($0[1]) == 4 }.flatMap { Int($0[0]) })
        guard case let .legacyPairing(passkey, frame) = key.source else { Issue.record("\(key.source)"); return }
        #expect(passkey == 0 && frame == lastRandom)
        #expect(link.linkLayer?.encryptedUndecrypted == 0 && link.linkLayer?.micFailures == 0)
        // The distributed keys are the devices' own.
        let identities = r.analyzer.knownKeys.identityKeys
        #expect(identities.contains { $0.identity?.description == connect[1].uppercased() })
        var resolver = IdentityResolver(identities)
        let initiator = try #require(PairingAddress(text: connect[0], isRandom: true))
        var initiatorValue: UInt64 = 0
        for (i, byte) in initiator.bytes.enumerated() { initiatorValue |= UInt64(byte) << UInt64(8 * i) }
        #expect(resolver.identity(of: initiatorValue) != nil)
    }
}

extension PairingMICSearchRealCaptureTests {
    /// LE Secure Connections joined mid-connection: no TK to search (the LTK comes from ECDH), and the debug-key path
    /// needs the CONNECT_IND's addresses; the finding says so instead of a bare "no key", and nothing is decrypted.
    @Test(arguments: [
        shared + "/lell-rf-lt256_crackle-lesc-pairing.pcapng", corpus + "/lell-rf-lt256_bsniffhub-lesc-passkey-123456-enc.pcap",
    ])
    func secureConnectionsSaysWhyNothingIsSearched(_ path: String) throws {
        guard FileManager.default.fileExists(atPath: path) else {
            print("skipped: \(path) is not on this machine")
            return
        }
        let all = try Self.records(path)
        let full = LinkEncryptionRun.run(try CaptureFile.open(path: path))
        let request = try #require(full.timeline.first { $0.layer == .smp && $0.name == "Pairing Request" })
        let kept = all.filter { $0.frame >= request.frame }
        let cut = LinkEncryptionRun.run(
            try CaptureFile.open(bytes: CaptureWriter.pcap(kept, linkType: all[0].linkType), name: "cut.pcap"))
        let summary = try #require(cut.analyzer.connections.first?.linkEncryption)
        #expect(summary.key == nil)
        guard case .secureConnections(_, addressesKnown: false, _) = summary.keySearch else {
            Issue.record("\(String(describing: summary.keySearch))"); return
        }
        let finding = try #require(cut.analyzer.findings.first { $0.kind.code.id == "ll.encrypted-no-key" })
        #expect(
            finding.kind.message.contains("is LE Secure Connections: its LTK comes from an ECDH key exchange, so there is no TK to search"))
        #expect(finding.kind.message.contains("needs both addresses from the CONNECT_IND, which the capture does not have"))
    }
}
