import BLEAnalysis
import BLECodecs
import BLECore
import Foundation

/// An attribute value event with owned bytes, for feeding trackers in tests.
package struct TestEvent {
    package var frame: Int
    package var time: Int64
    package var connection: UInt16 = 1
    package var connectionNumber = 1
    package var direction: Direction
    package var kind: ValueKind
    package var handle: UInt16
    package var characteristic: BluetoothUUID?
    package var service: BluetoothUUID? = nil
    package var value: [UInt8]
    package var decoded: DecodedValue? = nil
    package var link = TestEvent.defaultLink

    package static let defaultLink = LinkSnapshot(
        parameters: ConnectionParameters(interval: 12, latency: 0, timeout: 400), phy: .le1M,
        dataLength: DataLength(maxTxOctets: 251, maxTxTime: 2120, maxRxOctets: 251, maxRxTime: 2120), mtu: 247,
        encrypted: false)

    package static func notify(
        _ frame: Int, handle: UInt16 = 16, uuid: BluetoothUUID?, _ value: [UInt8], conn: Int = 1,
        time: Int64? = nil, decoded: DecodedValue? = nil
    ) -> TestEvent {
        TestEvent(
            frame: frame, time: time ?? Int64(frame) * 1000, connection: UInt16(conn), connectionNumber: conn,
            direction: .rx, kind: .notification, handle: handle, characteristic: uuid, value: value, decoded: decoded)
    }

    package static func write(
        _ frame: Int, handle: UInt16, uuid: BluetoothUUID?, _ value: [UInt8], command: Bool = false,
        conn: Int = 1, time: Int64? = nil, decoded: DecodedValue? = nil
    ) -> TestEvent {
        TestEvent(
            frame: frame, time: time ?? Int64(frame) * 1000, connection: UInt16(conn), connectionNumber: conn,
            direction: .tx, kind: command ? .writeCommand : .writeRequest, handle: handle, characteristic: uuid,
            value: value, decoded: decoded)
    }
}

/// What ends a test stream.
package enum TestEnd {
    case finish
    case disconnect(connectionNumber: Int)
}

/// Feeds events in order (value pointers live only during each call), then ends the stream.
package func feed<O: AttributeValueObserver>(_ observer: inout O, _ events: [TestEvent], end: [TestEnd] = [.finish]) {
    var lastFrame = 0
    var lastTime: Int64 = 0
    for e in events {
        e.value.withUnsafeBytes { raw in
            observer.observe(
                AttributeValueEvent(
                    frame: e.frame, timestamp: Timestamp(microseconds: e.time), connection: e.connection,
                    connectionNumber: e.connectionNumber, direction: e.direction, kind: e.kind, handle: e.handle,
                    characteristic: e.characteristic, service: e.service, decoded: e.decoded,
                    l2capBytes: e.value.count + 3 + 4, link: e.link),
                value: raw.bytes)
        }
        lastFrame = max(lastFrame, e.frame)
        lastTime = max(lastTime, e.time)
    }
    for x in end {
        switch x {
        case .finish:
            observer.finish(frame: lastFrame + 1, timestamp: Timestamp(microseconds: lastTime + 1000))
        case let .disconnect(n):
            observer.connectionEnded(
                connectionNumber: n, frame: lastFrame + 1,
                timestamp: Timestamp(microseconds: lastTime + 1000), reason: "Remote User Terminated Connection")
        }
    }
}

/// Splits `bytes` into chunks of `size`.
package func chunked(_ bytes: [UInt8], _ size: Int) -> [[UInt8]] {
    stride(from: 0, to: bytes.count, by: size).map { Array(bytes[$0..<min($0 + size, bytes.count)]) }
}

/// The Samples' image generator: xorshift32 (13, 17, 5), one step per byte, low 8 bits.
package func xorshiftImage(seed: UInt32, count: Int) -> [UInt8] {
    var x = seed
    var out: [UInt8] = []
    out.reserveCapacity(count)
    for _ in 0..<count {
        x ^= x << 13
        x ^= x >> 17
        x ^= x << 5
        out.append(UInt8(x & 0xFF))
    }
    return out
}

package func hexBytes(_ s: String) -> [UInt8] { bytes(fromHex: s) ?? [] }

/// `Samples/` of this repository (found from this file's path).
package let samplesDirectory: URL = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Samples")

/// A `Samples/<name>.truth.json`, or nil when absent.
package func loadTruth(_ name: String) -> [String: Any]? {
    let url = samplesDirectory.appendingPathComponent("\(name).truth.json")
    guard let data = try? Data(contentsOf: url) else { return nil }
    return (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
}

package func truthExists(_ name: String) -> Bool {
    FileManager.default.fileExists(atPath: samplesDirectory.appendingPathComponent("\(name).truth.json").path)
}

package let appleUUID = BluetoothUUID("08590F7E-DB05-467E-8757-72F6FAEB13D4")!

/// `3a8b93fa` (8 lowercase digits, as the truth files write CRCs).
package func crcHex(_ v: UInt32) -> String {
    let s = String(v, radix: 16)
    return String(repeating: "0", count: 8 - s.count) + s
}
