import BLEAnalysis
import BLECapture
import BLECore

/// The names peers give themselves, for matching them when their addresses differ (a resolvable private address
/// without its IRK, an iOS log that names no address): the Device Name characteristic (0x2A00, Core Spec Vol 3, Part
/// C, 12.1) the client read on the connection, else the Complete or Shortened Local Name (Supplement to the Core Spec,
/// Part A, 1.2) the peer's address advertised in the capture.
struct DiffNames {
    /// Peer address (17 characters, upper case) → the first name it advertised.
    var advertised: [String: String] = [:]
    /// Connection number → the first Device Name read from the peer.
    var deviceNames: [Int: String] = [:]

    init() {}

    init(_ f: FileAnalysis, advertised: [String: String]) {
        self.advertised = advertised
        deviceNames = f.usage.deviceNames.mapValues(\.name)
    }

    /// The name of connection `c`'s peer: its Device Name read, else what its address advertised.
    func name(_ c: Connection) -> String? {
        if let n = deviceNames[c.number] { return n }
        return c.peerAddress.flatMap { advertised[String($0.prefix(17)).uppercased()] }
    }

    /// Each advertiser's first name in the capture at `path` (a pass of the adverts tracker, as `blescope adverts`
    /// reads it); empty when the capture cannot be read (the analysis said so already).
    static func advertisedNames(path: String) -> [String: String] {
        guard let capture = try? CaptureFile.open(path: path) else { return [:] }
        var tracker = AdvertisingTracker()
        while let record = capture.next() { tracker.process(record) }
        var out: [String: String] = [:]
        for d in tracker.result.devices {
            guard let name = d.name, !name.isEmpty else { continue }
            let key = d.address.description.uppercased()
            if out[key] == nil { out[key] = name }
        }
        return out
    }
}
