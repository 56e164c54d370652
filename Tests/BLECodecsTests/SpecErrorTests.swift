import BLECore
import Foundation
import Testing

@testable import BLECodecs

/// `blescope codecs check` relies on these: line, path and a readable message for each mistake.
struct SpecErrorTests {
    func error(_ yaml: String) -> CodecSpecError? {
        do {
            _ = try CodecSpecCompiler.compile(yaml: yaml, file: "t.yaml")
            return nil
        } catch {
            return error
        }
    }

    @Test func unknownType() throws {
        let e = try #require(
            error(
                """
                codec: x
                fields:
                  - {name: a, type: u8}
                  - {name: b, type: u9}
                """))
        #expect(e.line == 4)
        #expect(e.path == "fields[1].type")
        #expect(e.message.hasPrefix("unknown type 'u9'"))
        #expect(e.description.hasPrefix("t.yaml:4:"))
    }

    @Test func unknownKeyAndMissingName() throws {
        let e = try #require(error("codec: x\nfields:\n  - {name: a, type: u8, lenght: 3}\n"))
        #expect(e.line == 3)
        #expect(e.message.hasPrefix("unknown key 'lenght'"))
        let m = try #require(error("fields: []\n"))
        #expect(m.message == "missing 'codec: <name>'")
    }

    @Test func badReferences() throws {
        let sel = try #require(error("codec: x\nfields: [{name: a, type: u8}]\nselect: cmd\nmessages: []\n"))
        #expect(sel.path == "select")
        #expect(sel.message == "no earlier integer field named 'cmd'")
        let len = try #require(error("codec: x\nfields:\n  - {name: data, type: bytes, length: n}\n  - {name: n, type: u8}\n"))
        #expect(len.path == "fields[0].length")
        #expect(len.line == 3)
        let msg = try #require(error("codec: x\nfields: [{name: c, type: u8}]\nselect: c\nmessages:\n  - {id: 1}\n"))
        #expect(msg.path == "messages[0]")
        #expect(msg.message == "missing 'name'")
    }

    @Test func badValues() throws {
        #expect(try #require(error("codec: x\nchecksum: {algorithm: crc99}\n")).message.hasPrefix("unknown checksum 'crc99'"))
        #expect(try #require(error("codec: x\nmatch: {service: XYZ}\n")).path == "match.service")
        #expect(try #require(error("codec: x\nmatch: {direction: sideways}\n")).message.hasPrefix("unknown direction"))
        #expect(
            try #require(error("codec: x\nfields: [{name: s, type: string, enum: {1: a}}]\n")).message
                == "'enum' applies to integer fields only")
        #expect(
            try #require(error("codec: x\nfields: [{name: f, type: u8, bits: [{name: hi, bits: 4-9}]}]\n")).message
                == "bits 4-9 do not fit in 8 bits")
    }

    @Test func yamlSyntax() throws {
        let e = try #require(error("codec: x\nfields: [ {name: a\n"))
        #expect(e.line != nil)
        #expect(e.message.hasPrefix("YAML syntax"))
    }

    @Test func everyFeature() throws {
        // Bit fields, flags, conditions, arrays sized by a count field, a length-prefixed group, scaling, crc16.
        let yaml = """
            codec: demo
            match: [{characteristic: 2A37, direction: notify}, {handle: 0x0020, prefix: "7E"}]
            checksum: {algorithm: crc16-modbus, endian: little}
            fields:
              - name: flags
                type: u8
                bits:
                  - {name: wide, bit: 0}
                  - {name: mode, bits: 1-2, enum: {0: idle, 1: run, 2: stop}}
                  - {name: hasTemp, bit: 3}
              - {name: value, type: u16, if: {field: wide, equals: 1}}
              - {name: value8, type: u8, if: {field: wide, equals: 0}}
              - {name: temp, type: i16, scale: 0.01, unit: "°C", if: {field: flags, mask: 0x08}}
              - {name: status, type: u8, flags: {0: low-battery, 7: error}}
              - {name: n, type: u8, hidden: true}
              - name: samples
                type: array
                count: n
                fields: [{name: v, type: u16be}]
              - {name: len, type: u8, hidden: true}
              - name: blob
                type: group
                length: len
                fields: [{name: tag, type: u8}, {name: body, type: bytes}]
            """
        let codec = try CodecSpecCompiler.compile(yaml: yaml)
        var frame: [UInt8] = [0x0B, 0x34, 0x12, 0x2A, 0xF6, 0x81, 0x02, 0x00, 0x01, 0x01, 0x00, 0x03, 0x09, 0xAA, 0xBB]
        let crc = ChecksumAlgorithm.crc16Modbus.compute(frame)
        frame += [UInt8(crc & 0xFF), UInt8(crc >> 8)]
        let v = codec.decodeUnconditionally(frame)
        #expect(v.valid, "\(v.problems)")
        #expect(v.field("flags.mode")?.value == .named(1, "run"))
        #expect(v.field("flags.wide")?.value == .bool(true))
        #expect(v.field("value")?.value == .int(0x1234))
        #expect(v.field("value8") == nil)
        // 0xF62A = -2518
        if case let .double(t)? = v.field("temp")?.value { #expect(abs(t - -25.18) < 1e-9) } else { Issue.record("temp") }
        #expect(v.field("status")?.value == .flags(0x81, ["low-battery", "error"]))
        #expect(
            v.field("samples")?.value
                == .list([
                    DecodedField("0", .nested([DecodedField("v", .int(1), offset: 7)]), offset: 7),
                    DecodedField("1", .nested([DecodedField("v", .int(256), offset: 9)]), offset: 9),
                ]))
        #expect(v.field("blob.tag")?.value == .int(9))
        #expect(v.field("blob.body")?.value == .bytes([0xAA, 0xBB]))
        let ctx = CodecContext(characteristic: BluetoothUUID(uuid16: 0x2A37), direction: .rx, operation: .notify)
        #expect(codec.decode(frame, context: ctx) != nil)
        #expect(codec.decode(frame, context: CodecContext(characteristic: BluetoothUUID(uuid16: 0x2A37), operation: .write)) == nil)
        #expect(codec.decode([0x7E, 0], context: CodecContext(handle: 0x20)) != nil)
        frame[3] ^= 0xFF
        #expect(codec.decodeUnconditionally(frame).problems.first?.hasPrefix("bad checksum (crc16-modbus)") == true)
    }
}

/// The complete example in SPEC_FORMAT.md must compile and decode as the document says.
struct SpecFormatDocTests {
    @Test func documentedExampleWorks() throws {
        let doc = try String(contentsOfFile: SampleCodecTests.root + "/Sources/BLECodecs/Declarative/SPEC_FORMAT.md", encoding: .utf8)
        let start = try #require(doc.range(of: "## Complete example\n\n```yaml\n"))
        let end = try #require(doc.range(of: "```", range: start.upperBound..<doc.endIndex))
        let codec = try CodecSpecCompiler.compile(yaml: String(doc[start.upperBound..<end.lowerBound]), file: "SPEC_FORMAT.md")
        let ctx = CodecContext(
            service: BluetoothUUID(uuid16: 0xFFE0), characteristic: BluetoothUUID(uuid16: 0xFFE2), direction: .rx, operation: .notify)
        let good = try #require(codec.decode([0xA5, 0x06, 0x83, 0x0C, 0x00, 0x2C], context: ctx))
        #expect(good.summary == "bracelet.countResponse total=12 ✓")
        #expect(good.roles[.totalCount] == .int(12))
        let bad = try #require(codec.decode([0xA5, 0x06, 0x83, 0x0C, 0x00, 0x2D], context: ctx))
        #expect(bad.summary == "bracelet.countResponse total=12 ✗ bad checksum (xor8): stored 0x2d, computed 0x2c")
        #expect(doc.contains("`bracelet.countResponse total=12 ✗ bad checksum (xor8): stored 0x2d, computed 0x2c`"))
    }

    @Test func referencesMustBeNumeric() throws {
        do {
            _ = try CodecSpecCompiler.compile(
                yaml: "codec: x\nfields:\n  - {name: n, type: bytes, length: 2}\n  - {name: d, type: bytes, length: n}\n")
            Issue.record("accepted a bytes field as a length")
        } catch {
            #expect(error.path == "fields[1].length")
            #expect(error.line == 4)
        }
    }
}
