import BLECapture
import BLECore
import BLETestSupport
import Foundation

/// `<repo>/../shared/captures`, or nil when absent.
let capturesDirectory: String? = {
    var parts = String(#filePath).split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(3)  // Tests/BLECaptureTests/Helpers.swift
    let dir = parts.joined(separator: "/") + "/../shared/captures"
    var isDir: ObjCBool = false
    return FileManager.default.fileExists(atPath: dir, isDirectory: &isDir) && isDir.boolValue ? dir : nil
}()

let realCaptures: [String] = {
    guard let dir = capturesDirectory,
        let names = try? FileManager.default.contentsOfDirectory(atPath: dir)
    else { return [] }
    return names.filter { !$0.hasSuffix(".md") }.sorted()
}()

func capturePath(_ name: String) -> String { capturesDirectory! + "/" + name }
func captureBytes(_ name: String) -> [UInt8] { Array(FileManager.default.contents(atPath: capturePath(name)) ?? Data()) }

var tsharkPath: String? { TestEnvironment.tsharkPath }

/// Frame timestamps (µs, truncated like libpcap does) as tshark reads them.
func tsharkTimestamps(_ path: String) -> [Int64]? {
    guard let text = TestEnvironment.tshark(["-n", "-r", path, "-T", "fields", "-e", "frame.time_epoch"]) else { return nil }
    return text.split(separator: "\n").map { line in
        let parts = line.split(separator: ".")
        let seconds = Int64(parts[0]) ?? 0
        var fraction = parts.count > 1 ? String(parts[1]) : ""
        fraction = String((fraction + "000000").prefix(6))
        return seconds * 1_000_000 + (Int64(fraction) ?? 0)
    }
}

/// Values from PROVENANCE.md (tshark 4.0.17), for machines without tshark: count, first, last (µs).
let provenance: [String: (Int, Int64, Int64)] = [
    "android-btsnoop_pixel8-pongbot-14conn-prepwrite-indicate.log.last": (8018, 1_773_950_641_695_475, 1_773_956_667_790_569),
    "android-btsnoop_horizon74-treadmill-writereq-notify.log": (2572, 1_612_150_079_092_423, 1_612_150_226_288_360),
    "pcapng-lt201-h4phdr_airbily-smartwatch.pcapng": (810, 1_617_562_152_723_014, 1_617_562_355_294_912),
    "nrfsniffer-lt272_surplife-led-ll-fragmentation.pcapng": (31131, 1_782_547_436_193_711, 1_782_552_162_066_591),
    "nrfsniffer-lt272_sweyntooth-atsamb11-invalid-l2cap-fragment.pcap": (937, 1_571_635_750_816_385, 1_571_635_758_923_169),
    "lell-rf-lt256_crackle-lesc-pairing.pcapng": (303, 905_224_953_861, 905_233_870_052),
    "lell-rf-lt256-pcapng-named-pcap_whad-gatt-discovery.pcap": (180, 1_678_994_898_563_265, 1_678_994_920_881_195),
    "pklg-ios-le_even-g2-glasses-discovery-indicate.pklg": (1134, 1_784_912_406_257_000, 1_785_278_734_976_032),
    "pklg-macos-be_isap-sim-access-classic.pklg": (161, 1_283_518_326_465_269, 1_283_518_998_697_435),
    "pklg-btstack-be_esp32-classic-sniffer-host.pklg": (118, 1_630_410_294_405_245, 1_630_410_296_794_516),
    "btmon-w-dl2001_batteread-rpi-notes-only.btsnoop": (6, 1_719_603_154_369_587, 1_719_603_154_369_593),
]

/// A file of `bytes` under the temporary directory, its name unique to the call: tests run in parallel, and two that
/// wrote the same `name` shared one path, so one's cleanup removed the other's file (PcapngReaderTests and
/// PcapngWriterTests both write "two.pcapng": the flaky "No such file or directory" of two fresh-clone CI runs).
func writeTemporary(_ bytes: [UInt8], name: String) -> String {
    let path = NSTemporaryDirectory() + "blecapture-\(getpid())-\(UUID().uuidString)-\(name)"
    _ = FileManager.default.createFile(atPath: path, contents: Data(bytes))
    return path
}

/// Offsets of the btsnoop record headers, walked independently of the reader.
func btsnoopRecordOffsets(_ bytes: [UInt8]) -> [Int] {
    var offsets: [Int] = []
    var o = 16
    while o + 24 <= bytes.count {
        offsets.append(o)
        let incl = Int(bytes[o + 4]) << 24 | Int(bytes[o + 5]) << 16 | Int(bytes[o + 6]) << 8 | Int(bytes[o + 7])
        o += 24 + incl
    }
    return offsets
}

/// The fields a format change keeps.
struct Essentials: Equatable, CustomStringConvertible {
    var timestamp: Int64, direction: Direction, kind: RecordKind, bytes: [UInt8]
    init(_ r: OwnedRecord) { timestamp = r.timestamp.microseconds; direction = r.direction; kind = r.kind; bytes = r.bytes }
    var description: String { "\(timestamp) \(direction) \(kind) \(hexString(bytes))" }
}
