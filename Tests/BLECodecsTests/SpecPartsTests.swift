import BLECore
import Testing

@testable import BLECodecs

/// `parts:` — one spec covering several characteristics, each with its own layout (SPEC_FORMAT.md).
struct SpecPartsTests {
    static let service = BluetoothUUID("7E5A0001-6F1C-4B8A-9D2E-3C4B5A6F7081")!
    static let control = BluetoothUUID("7E5A0002-6F1C-4B8A-9D2E-3C4B5A6F7081")!
    static let data = BluetoothUUID("7E5A0003-6F1C-4B8A-9D2E-3C4B5A6F7081")!

    static func load(_ path: String) throws -> CodecRegistry {
        let r = CodecRegistry()
        try r.load(directory: SampleCodecTests.root + "/Samples/codecs/vendor-ota/" + path)
        return r
    }

    static func context(_ characteristic: BluetoothUUID, _ op: AttributeOperation, service: BluetoothUUID? = service) -> CodecContext {
        CodecContext(service: service, characteristic: characteristic, direction: op.isWrite ? .tx : .rx, operation: op)
    }

    /// The same bytes decode to the same fields and roles whether the protocol is one spec with
    /// two parts or two specs.
    @Test(arguments: ["one-spec", "two-specs"])
    func partsDecodeLikeSeparateSpecs(_ layout: String) throws {
        let r = try Self.load(layout)
        // 01 size=30000 crc=0x3bba23c4 (little-endian) on the control characteristic.
        let start = try #require(
            r.decode([0x01, 0x30, 0x75, 0x00, 0x00, 0xC4, 0x23, 0xBA, 0x3B], context: Self.context(Self.control, .write)))
        #expect(start.message.hasSuffix("start"))
        #expect(start.roles[.otaStart] == .present)
        #expect(start.roles[.totalSize] == .int(30_000))
        #expect(start.field("imageCrc32")?.value == .int(0x3BBA_23C4))
        #expect(start.valid)
        // The same first byte on the data characteristic is a packet index, not an opcode.
        let packet = try #require(r.decode([0x01, 0x00, 0xAA, 0xBB], context: Self.context(Self.data, .writeCommand)))
        #expect(packet.roles[.sequence] == .int(1))
        #expect(packet.roles[.otaData] == .bytes([0xAA, 0xBB]))
        #expect(packet.roles[.otaStart] == nil)
        let resend = try #require(r.decode([0xE1, 0x32, 0x00], context: Self.context(Self.control, .notify)))
        #expect(resend.roles[.resendRequest] == .int(50))
        let result = try #require(r.decode([0x82, 0x01], context: Self.context(Self.control, .notify)))
        #expect(result.roles[.otaResult] == .int(1))
        #expect(result.otaSuccess == false)
        // Another service: no part applies.
        #expect(r.decode([0x01, 0x00], context: Self.context(Self.data, .writeCommand, service: BluetoothUUID(uuid16: 0xFFE0))) == nil)
        // A notification on the data characteristic matches no part (the data part is write-command only).
        #expect(r.decode([0x01, 0x00, 0xAA], context: Self.context(Self.data, .notify)) == nil)
    }

    @Test func onePartSpecNamesItsParts() throws {
        let r = try Self.load("one-spec")
        let summary = try #require(r.specs.first)
        #expect(summary.name == "vendor-ota")
        #expect(summary.appliesTo.contains("parts: control: characteristic 7E5A0002"))
        #expect(summary.appliesTo.contains("| data: characteristic 7E5A0003"))
        #expect(summary.messages == ["start", "ready", "resend", "end", "result"])
    }

    @Test func partsErrorsNameThePath() {
        func error(_ yaml: String) -> String? {
            do { _ = try CodecSpecCompiler.compile(yaml: yaml, file: "x.yaml"); return nil } catch { return error.description }
        }
        // fields next to parts are ambiguous
        #expect(
            error("codec: a\nfields: [{name: x, type: u8}]\nparts:\n  - fields: [{name: y, type: u8}]\n")?
                .contains("'fields' goes inside each of 'parts'") == true)
        #expect(error("codec: a\nparts: []\n")?.contains("non-empty list of parts") == true)
        // a part without match before another would hide it
        #expect(
            error("codec: a\nparts:\n  - fields: [{name: y, type: u8}]\n  - match: {prefix: '01'}\n    fields: [{name: z, type: u8}]\n")?
                .contains("parts[0]: only the last part may leave out 'match'") == true)
        #expect(
            error("codec: a\nparts:\n  - match: {prefix: '01'}\n    fields: [{name: y, type: u9}]\n")?
                .contains("parts[0].fields[0].type") == true)
        // A field of one part is not visible in the next.
        #expect(
            error(
                "codec: a\nparts:\n  - match: {prefix: '01'}\n    fields: [{name: n, type: u8}]\n  - fields: [{name: d, type: bytes, length: n}]\n"
            )?
            .contains("parts[1].fields[0]") == true)
    }

    /// Endianness: a part may override the spec's, and a last part without match takes the rest.
    @Test func partEndianAndFallback() throws {
        let spec = try CodecSpecCompiler.compile(
            yaml: """
                codec: p
                endian: big
                parts:
                  - match: {prefix: "01"}
                    endian: little
                    fields: [{name: op, type: u8}, {name: v, type: u16}]
                  - fields: [{name: op, type: u8}, {name: v, type: u16}]
                """)
        let little = try #require([UInt8]([0x01, 0x02, 0x03]).withUnsafeBytes { spec.decode($0, context: CodecContext()) })
        #expect(little.field("v")?.value == .int(0x0302))
        let big = try #require([UInt8]([0x02, 0x02, 0x03]).withUnsafeBytes { spec.decode($0, context: CodecContext()) })
        #expect(big.field("v")?.value == .int(0x0203))
    }
}
