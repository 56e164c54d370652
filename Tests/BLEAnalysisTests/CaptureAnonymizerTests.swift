import BLEAnalysis
import BLECapture
import BLECore
import Testing

/// CaptureAnonymizer on hand-laid records: pseudonyms, keys, values split over ACL fragments.
@Suite struct CaptureAnonymizerTests {
    /// Runs both passes over `records` (kind, direction, bytes) and returns the rewritten bytes.
    static func run(_ records: [(RecordKind, Direction, [UInt8])], salt: String = "s", values: AnonymizedValues = .keep)
        -> (out: [[UInt8]], anonymizer: CaptureAnonymizer)
    {
        let a = CaptureAnonymizer(salt: Array(salt.utf8), values: values)
        func each(_ body: (CaptureRecord) -> Void) {
            for (i, r) in records.enumerated() {
                r.2.withUnsafeBytes { raw in
                    body(
                        CaptureRecord(
                            frame: i + 1, timestamp: Timestamp(microseconds: Int64(i)), direction: r.1, kind: r.0,
                            originalLength: r.2.count, includedLength: r.2.count, fileOffset: 0, bytes: raw))
                }
            }
        }
        each { a.learn($0) }
        var out: [[UInt8]] = []
        each { out.append(a.anonymize($0).bytes) }
        return (out, a)
    }

    @Test(arguments: [UInt64(0xC1_2233_4455_66), 0x41_2233_4455_66, 0x01_2233_4455_66, 0xFF_FFFF_FFFF_FE])
    func pseudonymKeepsTheRandomAddressSubtype(_ address: UInt64) {
        let a = CaptureAnonymizer(salt: Array("one".utf8), values: .keep)
        let b = CaptureAnonymizer(salt: Array("two".utf8), values: .keep)
        let p = a.pseudonym(address: address)
        #expect(p >> 46 == address >> 46, "static 11, resolvable 01, non-resolvable 00 stay")
        #expect(p != address && p <= 0xFFFF_FFFF_FFFF)
        #expect(a.pseudonym(address: address) == p, "the same device gets the same pseudonym")
        #expect(CaptureAnonymizer(salt: Array("one".utf8), values: .keep).pseudonym(address: address) == p, "across files with --salt")
        #expect(b.pseudonym(address: address) != p, "another salt, another pseudonym")
    }

    @Test func namePseudonymHasTheNameLength() {
        let a = CaptureAnonymizer(salt: [1], values: .keep)
        for name in ["ab", "HRM", "Pixel 8 Pro", String(repeating: "x", count: 248)] {
            let p = a.pseudonym(name: Array(name.utf8))
            #expect(p.count == name.utf8.count && p != Array(name.utf8))
        }
    }

    /// LE Advertising Report (address 66:55:44:33:22:C1, complete name "Tag-42"), then the same address inside an ATT
    /// value and as text in a note; an SMP Encryption Information (LTK) and Identity Information (IRK).
    @Test func addressesNamesAndKeysAreReplacedEverywhere() {
        let address: [UInt8] = [0x66, 0x55, 0x44, 0x33, 0x22, 0xC1]
        let name = Array("Tag-42".utf8)
        let ad: [UInt8] = [UInt8(name.count + 1), 0x09] + name
        let report: [UInt8] = [0x3E, UInt8(11 + ad.count), 0x02, 0x01, 0x00, 0x01] + address + [UInt8(ad.count)] + ad + [0xC4]
        let notify: [UInt8] = [0x40, 0x20, 0x0F, 0x00, 0x0B, 0x00, 0x04, 0x00, 0x1B, 0x12, 0x00] + address.reversed() + [0x01, 0x02]
        let ltk: [UInt8] = [0x40, 0x20, 0x15, 0x00, 0x11, 0x00, 0x06, 0x00, 0x06] + Array(1...16)
        let irk: [UInt8] = [0x40, 0x20, 0x15, 0x00, 0x11, 0x00, 0x06, 0x00, 0x08] + Array(17...32)
        let note = Array("connected to c1:22:33:44:55:66 (Tag-42)".utf8)
        let (out, a) = Self.run([(.event, .rx, report), (.acl, .rx, notify), (.acl, .tx, ltk), (.acl, .tx, irk), (.text, .unknown, note)])
        let p = Array(withUnsafeBytes(of: a.pseudonym(address: 0xC1_2233_4455_66).littleEndian) { Array($0.prefix(6)) })
        #expect(Array(out[0][6..<12]) == p, "the report's address")
        #expect(Array(out[0][15..<21]) == a.pseudonym(name: name), "the advertised name")
        #expect(Array(out[1][11..<17]) == p.reversed(), "the address in a value, in the other byte order")
        #expect(Array(out[1].prefix(11)) == Array(notify.prefix(11)) && out[1].suffix(2) == [0x01, 0x02], "the rest is kept")
        #expect(Array(out[2][9...]) == [UInt8](repeating: 0, count: 16) && Array(out[3][9...]) == [UInt8](repeating: 0, count: 16))
        let text = String(decoding: out[4], as: UTF8.self)
        #expect(!text.contains("c1:22:33:44:55:66") && !text.contains("Tag-42") && text.count == note.count, "\(text)")
        #expect(a.report.keys == ["LTK": 1, "IRK": 1] && a.report.addresses == 1 && a.report.names == 1)
    }

    /// A note naming 00:00:00:00:00:00 (a placeholder) must not make every six zero bytes an address.
    @Test func placeholderAddressesInTextAreNotLearned() {
        let note = Array("bd_addr 00:00:00:00:00:00 ff:ff:ff:ff:ff:ff".utf8)
        let zeros: [UInt8] = [0x40, 0x20, 0x0D, 0x00, 0x09, 0x00, 0x04, 0x00, 0x1B, 0x12, 0x00] + [UInt8](repeating: 0, count: 6)
        let (out, a) = Self.run([(.text, .unknown, note), (.acl, .rx, zeros)])
        #expect(out[0] == note && out[1] == zeros && a.report.addresses == 0)
    }

    /// Samsung's stack fills its resolving list with placeholders such as 00:00:00:00:00:0C (corpus yeelock log, frame
    /// 154). Replaced in the address fields the walk knows (LE Add Device to Resolving List 7.8.38, LE Set Privacy
    /// Mode 7.8.77), never searched for elsewhere: a Read Local Name Command Complete starts `0E FC 01 14 0C 00 00…`,
    /// whose opcode byte and zeros are the same six bytes (frame 65 had its opcode rewritten, and frame 68, LE Set
    /// Privacy Mode, its parameter length).
    @Test func placeholderAddressesAreReplacedInTheirFieldsOnly() {
        let placeholder: [UInt8] = [0x0C, 0x00, 0x00, 0x00, 0x00, 0x00]
        let addToList: [UInt8] = [0x27, 0x20, 39, 0x00] + placeholder + [UInt8](repeating: 0, count: 16) + Array(1...16)
        let privacyMode: [UInt8] = [0x4E, 0x20, 0x08, 0x00] + placeholder + [0x01]
        let readLocalName: [UInt8] = [0x0E, 0xFC, 0x01, 0x14, 0x0C, 0x00] + [UInt8](repeating: 0, count: 248)
        let (out, a) = Self.run([(.command, .tx, addToList), (.command, .tx, privacyMode), (.event, .rx, readLocalName)])
        let p = Array(withUnsafeBytes(of: a.pseudonym(address: 0x0C).littleEndian) { Array($0.prefix(6)) })
        #expect(Array(out[0][4..<10]) == p && Array(out[0].prefix(4)) == Array(addToList.prefix(4)))
        #expect(Array(out[0][10...]) == [UInt8](repeating: 0, count: 32), "both IRKs zeroed")
        #expect(out[1] == [0x4E, 0x20, 0x08, 0x00] + p + [0x01], "the length byte kept, the address replaced")
        #expect(out[2] == readLocalName, "a Command Complete whose bytes look like the placeholder is left alone")
        #expect(a.report.addresses == 1)
    }

    /// An LE Bluetooth Device Address (AD type 0x1B) laid out type first, as Wireshark reads it and as the corpus novax
    /// log's scooter sends it (`08 1B 00 87 32 0C 26 8D 60`: type 0, then 60:8D:26:0C:32:87): the address is the six
    /// bytes after the type, so the status byte before that address in a later Command Complete (Link Key Request
    /// Negative Reply, status 0, BD_ADDR) is not taken for part of a device address (frame 2765 had its status rewritten).
    @Test func aTypeFirstLEDeviceAddressIsReadAtItsAddress() {
        let ad: [UInt8] = [0x08, 0x1B, 0x00, 0x87, 0x32, 0x0C, 0x26, 0x8D, 0x60]
        let report: [UInt8] =
            [0x3E, UInt8(11 + ad.count), 0x02, 0x01, 0x00, 0x01] + [0x66, 0x55, 0x44, 0x33, 0x22, 0xC1]
            + [UInt8(ad.count)] + ad + [0xC4]
        let negativeReply: [UInt8] = [0x0E, 0x0A, 0x01, 0x0C, 0x04, 0x00, 0x87, 0x32, 0x0C, 0x26, 0x8D, 0x60]
        let (out, a) = Self.run([(.event, .rx, report), (.event, .rx, negativeReply)])
        let p = Array(withUnsafeBytes(of: a.pseudonym(address: 0x60_8D26_0C32_87).littleEndian) { Array($0.prefix(6)) })
        #expect(Array(out[0][13...15]) == [0x08, 0x1B, 0x00] && Array(out[0][16..<22]) == p, "type kept, address replaced")
        #expect(Array(out[1].prefix(6)) == Array(negativeReply.prefix(6)) && Array(out[1][6...]) == p, "status 0 kept")
        #expect(a.report.addresses == 2)
    }

    /// A notification split over three ACL fragments: every value byte is blanked, the L2CAP and ATT headers kept.
    @Test(arguments: [AnonymizedValues.blank, .hash])
    func valuesAcrossFragments(_ values: AnonymizedValues) {
        let value = [UInt8](repeating: 0xAB, count: 40)
        let sdu: [UInt8] = [0x1B, 0x12, 0x00] + value
        let l2cap: [UInt8] = [UInt8(sdu.count), 0x00, 0x04, 0x00] + sdu
        let parts = [Array(l2cap[0..<20]), Array(l2cap[20..<35]), Array(l2cap[35...])]
        let records = parts.enumerated().map { i, part -> (RecordKind, Direction, [UInt8]) in
            (.acl, .rx, [0x40, i == 0 ? 0x20 : 0x10, UInt8(part.count), 0x00] + part)
        }
        let (out, a) = Self.run(records, values: values)
        let rebuilt = out.flatMap { $0.dropFirst(4) }
        #expect(Array(rebuilt.prefix(7)) == Array(l2cap.prefix(7)), "headers kept")
        let newValue = Array(rebuilt.dropFirst(7))
        #expect(newValue.count == 40)
        if values == .blank { #expect(newValue.allSatisfy { $0 == 0 }) } else { #expect(newValue != value && Set(newValue).count > 1) }
        #expect(a.report.values == 1 && a.report.valueBytes == 40)
    }
}
