import BLECapture
import BLECore
import BLEProtocols
import BLETestSupport
import Testing

@testable import BLEAnalysis

/// Handles named from their values' layout (``ValueLayout``), never discovered: the values are laid out as the GATT
/// Specification Supplement gives each characteristic (Current Time 3.62 with a Date Time 3.70, PnP ID 3.170, Heart
/// Rate Measurement 3.113). A handle is named only when every value fits one layout and no other.
@Suite struct ValueLayoutTests {
    static let connection: UInt16 = 0x0040

    /// `gatt`'s layouts per handle of connection #1, for `build` after an LE Connection Complete (frame 1).
    static func layouts(_ build: (CaptureBuilder) -> CaptureBuilder) throws -> [UInt16: InferredLayout] {
        let capture = try build(CaptureBuilder().connect(handle: connection)).captureFile()
        let analysis = CaptureAnalysis.analyze(capture, observing: Observing(gattUsage: true))
        return analysis.gattUsage?.layouts[1] ?? [:]
    }

    /// 2026-11-28 01:02:03, a Saturday (6), no fractions, manual time update (adjust reason bit 0).
    static let currentTime: [UInt8] = [0xEA, 0x07, 11, 28, 1, 2, 3, 6, 0, 0x01]

    @Test func aCurrentTimeValueNamesItsHandle() throws {
        let layouts = try Self.layouts { $0.notify(handle: 0x0030, Self.currentTime, connection: Self.connection) }
        let named = try #require(layouts[0x0030])
        #expect(named.uuid == BluetoothUUID(uuid16: 0x2A2B) && named.name == "Current Time")
        #expect(named.frame == 2 && named.values == 1)
        #expect(
            named.how
                == "inferred from its value layout: Current Time (2026-11-28 01:02:03) at frame 2; its only value fits it, no other layout")
    }

    /// Month 13 is no date: the handle stays unnamed, and so does one whose later value does not fit.
    @Test func aValueOutOfRangeOrALaterMisfitLeavesItUnnamed() throws {
        var month13 = Self.currentTime
        month13[2] = 13
        #expect(try Self.layouts { $0.notify(handle: 0x0030, month13, connection: Self.connection) }.isEmpty)
        let misfit = try Self.layouts {
            $0.notify(handle: 0x0030, Self.currentTime, connection: Self.connection)
                .notify(handle: 0x0030, [0x01, 0x02, 0x03], connection: Self.connection)
        }
        #expect(misfit.isEmpty)
    }

    /// A PnP ID read: source 1 (Bluetooth SIG), vendor 0x004C (Apple, Inc.), product 0x1234, version 0x0100.
    @Test func aPnPIDReadNamesItsHandle() throws {
        let layouts = try Self.layouts {
            $0.att(.readRequest(handle: 0x0021), handle: Self.connection, .tx)
                .att(.readResponse(value: [0x01, 0x4C, 0x00, 0x34, 0x12, 0x00, 0x01]), handle: Self.connection, .rx)
        }
        let named = try #require(layouts[0x0021])
        #expect(named.uuid == BluetoothUUID(uuid16: 0x2A50) && named.frame == 3)
        #expect(named.how.hasPrefix("inferred from its value layout: PnP ID (Bluetooth SIG vendor 0x004c (Apple, Inc.)) at frame 3"))
    }

    /// Heart rate notifications (flags 0x06: 8-bit rate, contact detected; 0x16: with one RR interval): three fit, and
    /// name the handle; two are too few for so short a layout.
    @Test func heartRateNeedsThreeValues() throws {
        let values: [[UInt8]] = [[0x06, 72], [0x06, 74], [0x16, 73, 0x00, 0x04]]
        let three = try Self.layouts { b in values.reduce(b) { $0.notify(handle: 0x0025, $1, connection: Self.connection) } }
        let named = try #require(three[0x0025])
        #expect(named.uuid == BluetoothUUID(uuid16: 0x2A37) && named.values == 3 && named.frame == 2)
        #expect(named.how.hasSuffix("(72 bpm) at frame 2; all 3 values fit it, no other layout"))
        let two = try Self.layouts { b in values.prefix(2).reduce(b) { $0.notify(handle: 0x0025, $1, connection: Self.connection) } }
        #expect(two.isEmpty)
    }

    /// 10 bytes that are both a Current Time (year 0x1E10 = 7696, 03-05 12:34:56, Tuesday) and a Heart Rate Measurement
    /// (flags 0x10: an 8-bit rate of 0x1E = 30 bpm, then four RR intervals): two layouts fit, so no guess is made.
    @Test func aValueThatFitsTwoLayoutsIsLeftUnnamed() throws {
        let both: [UInt8] = [0x10, 0x1E, 0x03, 0x05, 0x0C, 0x22, 0x38, 0x02, 0x00, 0x00]
        #expect(ValueLayout.currentTime.match(both: both, .notification) == "7696-03-05 12:34:56")
        #expect(ValueLayout.heartRateMeasurement.match(both: both, .notification) == "30 bpm")
        let layouts = try Self.layouts { b in (0..<3).reduce(b) { b, _ in b.notify(handle: 0x0031, both, connection: Self.connection) } }
        #expect(layouts[0x0031] == nil)
    }
}

extension ValueLayout {
    /// The layout's reading of `bytes` carried by a PDU of `kind`.
    func match(both bytes: [UInt8], _ kind: ValueKind) -> String? {
        bytes.withUnsafeBytes { match($0, kind, .rx) }
    }
}
