import BLEAnalysis
import BLECore
import BLEProtocols
import Foundation
import Testing

@testable import BLEReports

/// The JSON Lines renderer's fast paths (hex eight bytes at a time, `handle=0x…` summaries kept as numbers, events
/// whose rare fields are all nil, lines gathered in 64 KiB chunks) give what the plain paths give, checked against
/// values formatted here independently (`String(_:radix:)`) and read back with `JSONSerialization`.
@Suite("Timeline JSON Lines renderer")
struct TimelineJSONRendererTests {
    static func event(frame: Int = 7, handle: UInt16 = 0x002A, value: [UInt8]) -> TimelineEvent {
        var e = TimelineEvent(
            frame: frame, timestamp: Timestamp(microseconds: 1_710_408_413_005_402), connection: 0x0040, direction: .rx,
            layer: .att, code: 0x1B, name: "Handle Value Notification", summaryHandle: handle)
        e.handle = handle
        e.value = value
        return e
    }

    static func object(_ line: [UInt8]) throws -> [String: Any] {
        #expect(line.last == UInt8(ascii: "\n"))
        let parsed = try JSONSerialization.jsonObject(with: Data(line))
        return try #require(parsed as? [String: Any])
    }

    /// Two lowercase digits per byte, made without the renderer's tables or words.
    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { b in (b < 16 ? "0" : "") + String(b, radix: 16) }.joined()
    }

    @Test func hexOfEveryByteAndLength() throws {
        var renderer = TimelineJSONRenderer()
        let all = (0...255).map(UInt8.init)
        // Lengths around the 8-byte words (0–40) and the whole byte range, forwards and backwards.
        var values: [[UInt8]] = (0...40).map { n in (0..<n).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 0xF3) } }
        values += [all, all.reversed()]
        for value in values {
            var line: [UInt8] = []
            renderer.append(Self.event(value: value), to: &line)
            let object = try Self.object(line)
            #expect(object["value"] as? String == Self.hex(value), "\(value.count) bytes")
        }
    }

    @Test(arguments: [UInt16(0x0000), 0x0001, 0x002A, 0x0FFF, 0xABCD, 0xFFFF])
    func handleSummaryAsText(_ handle: UInt16) throws {
        let e = Self.event(handle: handle, value: [1, 2, 3])
        let digits = String(handle, radix: 16)
        let expected = "handle=0x" + String(repeating: "0", count: 4 - digits.count) + digits
        #expect(e.summary == expected)
        #expect(e.summaryHandle == handle)

        // The line of the number-kept summary is the line of the same summary set as text.
        var asText = e
        asText.summary = expected
        #expect(asText.summaryHandle == nil)
        var renderer = TimelineJSONRenderer()
        var a: [UInt8] = [], b: [UInt8] = []
        renderer.append(e, to: &a)
        renderer.append(asText, to: &b)
        #expect(a == b)
        #expect(try Self.object(a)["summary"] as? String == expected)

        // Appending to the summary (as the CCCD and Exchange MTU notes do) turns it into text.
        var noted = e
        noted.summary += "  (CCCD: notifications on)"
        #expect(noted.summary == expected + "  (CCCD: notifications on)")
    }

    @Test func rareFieldsBoxedAndCleared() throws {
        var e = Self.event(value: [0xAA])
        #expect(e.hasNoDetails)
        // Setting nil where nothing is set allocates nothing.
        e.handles = nil
        e.status = nil
        #expect(e.hasNoDetails)
        e.status = "Insufficient Authentication"
        e.uuid = BluetoothUUID(uuid16: 0x2A37)
        #expect(!e.hasNoDetails)
        let copy = e
        e.status = nil
        // A copy keeps what it had (the box is never changed in place).
        #expect(copy.status == "Insufficient Authentication")
        #expect(e.status == nil && e.uuid == BluetoothUUID(uuid16: 0x2A37))
        e.uuid = nil
        #expect(e.hasNoDetails)

        var renderer = TimelineJSONRenderer()
        var line: [UInt8] = []
        renderer.append(copy, to: &line)
        let object = try Self.object(line)
        #expect(object["status"] as? String == "Insufficient Authentication")
        #expect(object["uuid"] as? String == BluetoothUUID(uuid16: 0x2A37).uuidString)
        #expect(object["name"] is NSNull)
        #expect(object["handles"] is NSNull)
    }

    /// Lines gathered in the renderer's buffer and written in chunks are the lines written one by one.
    @Test func chunkedWritesSameBytes() throws {
        // ~40 bytes of hex a line: some 2,000 lines cross the 64 KiB chunk several times.
        let events = (0..<2_000).map { i in
            Self.event(frame: i + 1, handle: UInt16(i & 0xFFFF), value: [UInt8](repeating: UInt8(i & 0xFF), count: i % 97))
        }
        let oneByOne = try BackgroundTimelineJSONTests.written { out in
            var renderer = TimelineJSONRenderer()
            for e in events { renderer.write(e, to: out) }
        }
        let chunked = try BackgroundTimelineJSONTests.written { out in
            var renderer = TimelineJSONRenderer()
            out.write("first\n")
            for e in events { renderer.writeBuffered(e, to: out) }
            renderer.flush(to: out)
            out.write("last\n")
        }
        #expect(chunked == Array("first\n".utf8) + oneByOne + Array("last\n".utf8))
        #expect(oneByOne.count > 3 << 16)
    }
}
