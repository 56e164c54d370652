import BLEAnalysis
import BLECapture
import BLECore
import Testing

/// What the corpus's AnonymizeTests run found left or broken in anonymized copies (issue 49), on hand-laid records.
extension CaptureAnonymizerTests {
    /// The PeriPage printer's SPP status line (corpus peripage log, frame 191: RFCOMM UIH on DLCI 2, L2CAP CID 0x0041,
    /// handle 6, as tshark -x shows it) writes its own address as text: `PeriPage+754F|00:00:00:05:75:4F|…`. The
    /// address is learned from the Connection Complete (frame 48, BD_ADDR 00:00:00:05:75:4f), so its text is replaced
    /// in the payload like its bytes are, in the same case; the near miss, the same payload in a log whose fields never
    /// name that address, is left as it is: blescope cannot know free text to be a device's address.
    @Test func aLearnedAddressWrittenAsTextInAPayloadIsReplaced() {
        let address: [UInt8] = [0x4F, 0x75, 0x05, 0x00, 0x00, 0x00]
        let connectionComplete: [UInt8] = [0x03, 0x0B, 0x00, 0x06, 0x00] + address + [0x01, 0x00]
        let status = Array("PeriPage+754F|00:00:00:05:75:4F|00:00:00:05:75:4F|V1.12_304dpi|A".utf8)
        let spp: [UInt8] = [0x06, 0x20, 0x49, 0x00, 0x45, 0x00, 0x41, 0x00, 0x09, 0xEF, 0x80, 0x00] + status + [0x40]
        let (out, a) = Self.run([(.event, .rx, connectionComplete), (.acl, .rx, spp)])
        let p = a.pseudonym(address: 0x05_754F)
        let text = (0..<6).reversed().map { i in
            let s = String((p >> (8 * UInt64(i))) & 0xFF, radix: 16, uppercase: true)
            return s.count == 1 ? "0" + s : s
        }.joined(separator: ":")
        let written = String(decoding: out[1][12..<(12 + status.count)], as: UTF8.self)
        #expect(written == "PeriPage+754F|\(text)|\(text)|V1.12_304dpi|A", "\(written)")
        #expect(Array(out[1].prefix(12)) == Array(spp.prefix(12)) && out[1].last == 0x40 && out[1].count == spp.count)
        #expect(a.report.textAddressReplacements == 2)
        // A name run into the address, as the Sony headset app's RFCOMM device list writes them (`Nexus 564:C2:…`).
        let entry = Array("\u{1}\u{7}Nexus 500:00:00:05:75:4F\u{2}\u{9}".utf8)
        let list = [UInt8](spp.prefix(12)) + entry + [UInt8](repeating: 0x20, count: 40)
        let (listed, _) = Self.run([(.event, .rx, connectionComplete), (.acl, .rx, list)])
        #expect(String(decoding: listed[1][12..<38], as: UTF8.self) == "\u{1}\u{7}Nexus 5\(text)", "\(listed[1])")

        let (alone, b) = Self.run([(.acl, .rx, spp)])
        #expect(alone[0] == spp && b.report.addresses == 0)
    }

    /// A CCCD the traffic tells (Core Spec Vol 3, Part G, 3.3.3.3): the corpus OpenSnek log starts mid-link, so no
    /// discovery names handle 0x0040; the write of 01 00 to it at frame 17181, then notifications of 0x003F, make it a
    /// CCCD for blescope. Its value is the link's configuration, not data: kept under `--values hash`, as is the value
    /// written to a CCCD discovery named (Find Information: 0x0060 is 0x2902). The hashed 01 00 (78 E7) was read as
    /// "notifications off" of an unknown handle. The near miss: the same write to a handle whose characteristic is
    /// never notified (0x0050) is a value like any other, hashed.
    @Test func cccdValuesAreKept() {
        func att(_ sdu: [UInt8], _ direction: Direction) -> (RecordKind, Direction, [UInt8]) {
            (.acl, direction, [0x10, 0x20, UInt8(sdu.count + 4), 0x00, UInt8(sdu.count), 0x00, 0x04, 0x00] + sdu)
        }
        let records = [
            att([0x05, 0x01, 0x60, 0x00, 0x02, 0x29], .rx),  // Find Information Response: 0x0060 is a CCCD
            att([0x12, 0x40, 0x00, 0x01, 0x00], .tx),  // Write Request: 0x0040 = 01 00
            att([0x13], .rx),
            att([0x1B, 0x3F, 0x00, 0x11, 0x22, 0x33], .rx),  // notification of 0x003F
            att([0x12, 0x60, 0x00, 0x02, 0x00], .tx),  // Write Request: 0x0060 = 02 00
            att([0x12, 0x50, 0x00, 0x01, 0x00], .tx),  // Write Request: 0x0050 = 01 00, never notified
        ]
        let (out, a) = Self.run(records, values: .hash)
        #expect(Array(out[1].suffix(2)) == [0x01, 0x00], "the CCCD the traffic tells")
        #expect(Array(out[4].suffix(2)) == [0x02, 0x00], "the CCCD discovery names")
        #expect(Array(out[3].suffix(3)) != [0x11, 0x22, 0x33], "the notification's value is hashed")
        #expect(Array(out[5].suffix(2)) != [0x01, 0x00], "a write to a handle never shown to be a CCCD is hashed")
        #expect(a.report.values == 2)
    }
}
