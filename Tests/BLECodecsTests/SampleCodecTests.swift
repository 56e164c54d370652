import BLECore
import Testing

@testable import BLECodecs

/// The Samples/codecs specs against frames from Samples/PROTOCOLS.md.
struct SampleCodecTests {
    static let root: String = {
        var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
        parts.removeLast(3)  // Tests/BLECodecsTests/<file>
        return parts.joined(separator: "/")
    }()

    static let registry: CodecRegistry = {
        let r = CodecRegistry()
        do {
            try r.load(directory: root + "/Samples/codecs")
        } catch {
            Issue.record("sample specs failed to load: \(error)")
        }
        return r
    }()

    static let ffe0 = BluetoothUUID(uuid16: 0xFFE0)
    static let braceletWrite = CodecContext(service: ffe0, characteristic: BluetoothUUID(uuid16: 0xFFE1), direction: .tx, operation: .write)
    static let braceletNotify = CodecContext(
        service: ffe0, characteristic: BluetoothUUID(uuid16: 0xFFE2), direction: .rx, operation: .notify)
    static func headset(_ n: Int, _ op: AttributeOperation) -> CodecContext {
        CodecContext(
            service: BluetoothUUID("5A4E0001-8C3B-4F2E-9A1D-0C7F2B6E4D10"),
            characteristic: BluetoothUUID("5A4E000\(n)-8C3B-4F2E-9A1D-0C7F2B6E4D10"),
            direction: op.isWrite ? .tx : .rx, operation: op)
    }

    /// Appends the XOR of all bytes (the bracelet's checksum), computed here independently of the codec.
    func framed(_ body: [UInt8]) -> [UInt8] { body + [body.reduce(0, ^)] }

    func decode(_ bytes: [UInt8], _ ctx: CodecContext) throws -> DecodedValue {
        try #require(Self.registry.decode(bytes, context: ctx))
    }

    @Test func specsLoad() {
        let names = Self.registry.specs.map(\.name)
        // The folder is read recursively (files first, then each subfolder in name order).
        #expect(names == ["bracelet", "headset", "coc-records", "vendor-ota", "vendor-ota-control", "vendor-ota-data"])
        let bracelet = Self.registry.specs.first
        #expect(bracelet?.messages == ["countRequest", "countResponse", "activityRecord"])
        #expect(bracelet?.roles == [.sequence, .totalCount])
    }

    @Test func braceletCountRequest() throws {
        let frame = framed([0xA5, 0x06, 0x03, 0x03, 0x0E])
        #expect(frame.last == 0xAD)
        let v = try decode(frame, Self.braceletWrite)
        #expect(v.codec == "bracelet")
        #expect(v.message == "countRequest")
        #expect(v.field("month")?.value == .int(3))
        #expect(v.field("day")?.value == .int(14))
        #expect(v.valid)
        #expect(v.summary == "bracelet.countRequest month=3 day=14 ✓")
    }

    @Test func braceletCountResponse() throws {
        let v = try decode([0xA5, 0x06, 0x83, 0x0C, 0x00, 0x2C], Self.braceletNotify)
        #expect(v.message == "countResponse")
        #expect(v.field("total")?.value == .int(12))
        #expect(v.roles[.totalCount] == .int(12))
        #expect(v.valid)
        #expect(v.summary == "bracelet.countResponse total=12 ✓")
    }

    @Test func braceletBadChecksum() throws {
        let v = try decode([0xA5, 0x06, 0x83, 0x0C, 0x00, 0x2D], Self.braceletNotify)
        #expect(!v.valid)
        #expect(v.field("total")?.value == .int(12))  // still decoded
        #expect(v.problems == ["bad checksum (xor8): stored 0x2d, computed 0x2c"])
        #expect(v.summary.contains("✗"))
    }

    @Test func braceletActivityRecord() throws {
        let v = try decode(framed([0xA5, 0x0B, 0x84, 0x05, 0x00, 0x0E, 0x10, 0x27, 0x48, 0x32]), Self.braceletNotify)
        #expect(v.valid)
        #expect(v.message == "activityRecord")
        #expect(v.role(.sequence) == 5)
        #expect(v.field("hour")?.value == .int(14))
        #expect(v.field("steps")?.value == .int(10000))
        #expect(v.field("heartRate")?.display == "72 bpm")
        #expect(v.field("kcal")?.value == .int(50))
    }

    @Test func braceletWrongLengthByte() throws {
        let v = try decode(framed([0xA5, 0x07, 0x83, 0x0C, 0x00]), Self.braceletNotify)
        #expect(!v.valid)
        #expect(v.problems == ["length is 7, but the value has 6 byte(s)"])
    }

    @Test func braceletDoesNotApplyElsewhere() {
        #expect(
            Self.registry.decode(
                [0xA5, 0x06, 0x83, 0x0C, 0x00, 0x2C], context: CodecContext(characteristic: BluetoothUUID(uuid16: 0xFFF1))) == nil)
        #expect(Self.registry.decode([0x5A, 0x06], context: Self.braceletNotify) == nil)  // prefix A5 required
    }

    @Test func headsetResendRequest() throws {
        let v = try decode([0x11, 0x00, 0x25], Self.headset(3, .notify))
        #expect(v.message == "resendRequest")
        #expect(v.role(.resendRequest) == 37)
        #expect(v.valid)
    }

    @Test func headsetOTAData() throws {
        let v = try decode([0x81, 0x00, 0x05, 0xDE, 0xAD, 0xBE, 0xEF], Self.headset(4, .writeCommand))
        #expect(v.message == "otaData")
        #expect(v.role(.sequence) == 5)
        #expect(v.roles[.otaData] == .bytes([0xDE, 0xAD, 0xBE, 0xEF]))
        #expect(v.valid)
    }

    @Test(arguments: [(UInt8(0), "success", true), (1, "crc-failure", false), (2, "version-error", false), (3, "restart-failure", false)])
    func headsetOTAResult(_ code: UInt8, _ name: String, _ success: Bool) throws {
        let v = try decode([0x12, code], Self.headset(3, .notify))
        #expect(v.message == "otaResult")
        #expect(v.field("result")?.value == .named(Int64(code), name))
        #expect(v.role(.otaResult) == Int64(code))
        #expect(v.otaSuccess == success)
    }

    @Test func headsetStartEndAndEvents() throws {
        let s = try decode([0x80, 0x00, 0x01, 0x00, 0x00, 0x01, 0x00], Self.headset(2, .write))
        #expect(s.message == "startOta")
        #expect(s.roles[.otaStart] == .present)
        #expect(s.field("imageSize")?.value == .int(65536))
        #expect(s.role(.totalCount) == 256)
        let e = try decode([0x82, 0xCB, 0xF4, 0x39, 0x26], Self.headset(2, .write))
        #expect(e.roles[.messageTerminator] == .present)
        #expect(e.field("imageCrc32")?.value == .int(0xCBF4_3926))
        #expect(try decode([0x03, 0x07], Self.headset(3, .notify)).summary == "headset.volume level=7 ✓")
        #expect(try decode([0x01, 0xFF], Self.headset(3, .notify)).field("state")?.value == .named(0xFF, "sensor-error"))
        #expect(try decode([0x04, 0x06], Self.headset(3, .notify)).field("gesture")?.value == .named(6, "double-click"))
        #expect(try decode([0x10, 0x01], Self.headset(3, .notify)).field("reply")?.value == .named(1, "entered-ota-mode"))
        let ver = try decode([0x20, 0x05] + Array("1.2.3".utf8), Self.headset(3, .notify))
        #expect(ver.field("version")?.value == .string("1.2.3"))
        #expect(ver.valid)
        let mac = try decode([0x21, 0xC0, 0x11, 0x22, 0x33, 0x44, 0x55], Self.headset(3, .notify))
        #expect(mac.field("address")?.value == .bytes([0xC0, 0x11, 0x22, 0x33, 0x44, 0x55]))
        #expect(try decode([0x83], Self.headset(2, .write)).message == "queryVersion")
    }

    @Test func headsetProblems() throws {
        let unknown = try decode([0x7F, 0x01], Self.headset(3, .notify))
        #expect(!unknown.valid)
        #expect(unknown.problems == ["no message for opcode=0x7f"])
        let short = try decode([0x11, 0x00], Self.headset(3, .notify))
        #expect(!short.valid)
        #expect(short.problems.first?.hasPrefix("truncated at packet") == true)
        // 0x80 is a phone → headset command: as a notification it matches no message.
        #expect(try decode([0x80, 0, 0, 0, 0, 0, 0], Self.headset(3, .notify)).valid == false)
        let long = try decode([0x20, 0x09, 0x31], Self.headset(3, .notify))
        #expect(!long.valid)
    }
}
