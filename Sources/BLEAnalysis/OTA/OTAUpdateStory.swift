import BLECore

/// Tells each update's story across connections: which connections it used and why each ended,
/// and a buttonless DFU (the application rebooting into its bootloader) joined with the Secure DFU
/// that follows on the bootloader's connection.
///
/// Nordic bootloaders advertise at the application's address + 1 (`NRF_DFU_BLE_BUTTONLESS_…`,
/// nRF5 SDK `nrf_dfu_ble.c`) or at the same address when bonded. A Secure DFU session on a later
/// connection to either address, starting within ``maximumGap`` of the application connection's
/// end, is the same update.
public enum OTAUpdateStory {
    /// The longest reboot between the application's connection and the bootloader's (µs).
    public static let maximumGap: Int64 = 60_000_000

    /// Returns the sessions with their connections filled in and each successful buttonless DFU
    /// folded into the Secure DFU session that follows it.
    public static func link(_ sessions: [OTASession], connections: [Connection]) -> [OTASession] {
        let byNumber = Dictionary(connections.map { ($0.number, $0) }, uniquingKeysWith: { a, _ in a })
        func step(_ s: OTASession, role: String) -> OTAConnectionStep {
            let c = byNumber[s.connectionNumber]
            return OTAConnectionStep(role: role, connectionNumber: s.connectionNumber, connection: s.connection,
                                     peerAddress: c?.peerAddress, startFrame: c?.startFrame ?? s.startFrame,
                                     startTime: c?.startTime ?? s.startTime, endFrame: c?.endFrame, endTime: c?.endTime,
                                     endReason: c?.disconnectReason)
        }
        var out = sessions.map { s -> OTASession in
            var s = s
            s.connections = [step(s, role: s.protocolName == .nordicButtonlessDFU ? "application" : "update")]
            return s
        }
        var absorbed = Set<Int>()
        for (i, b) in out.enumerated() where b.protocolName == .nordicButtonlessDFU && b.result == .success {
            guard let app = b.connections.first, let appEnd = app.endTime else { continue }
            let next = out.indices.first { j in
                let s = out[j]
                guard s.protocolName == .nordicSecureDFU, !absorbed.contains(j), s.connectionNumber > b.connectionNumber,
                      let c = s.connections.first, c.startTime.microseconds(since: appEnd) >= 0,
                      c.startTime.microseconds(since: appEnd) <= maximumGap else { return false }
                return isBootloaderAddress(c.peerAddress, of: app.peerAddress)
            }
            guard let j = next else { continue }
            absorbed.insert(i)
            var s = out[j]
            var boot = s.connections[0]
            boot.role = "bootloader"
            boot.gapMicroseconds = boot.startTime.microseconds(since: appEnd)
            s.connections = [app, boot]
            var enter = b.phases
            var reconnect = OTAPhase(name: "reconnect", frame: app.endFrame ?? b.endFrame, time: appEnd)
            reconnect.endFrame = boot.startFrame
            reconnect.endTime = boot.startTime
            enter.append(reconnect)
            s.phases = enter + s.phases
            s.startFrame = b.startFrame
            s.startTime = b.startTime
            s.wireBytes += b.wireBytes
            s.findings = b.findings + s.findings
            out[j] = s
        }
        return out.enumerated().filter { !absorbed.contains($0.offset) }.map(\.element)
    }

    /// Whether `candidate` is `app` or `app` + 1 (as 48-bit numbers); unknown addresses do not match.
    static func isBootloaderAddress(_ candidate: String?, of app: String?) -> Bool {
        guard let a = candidate.flatMap(number), let b = app.flatMap(number) else { return false }
        return a == b || a == b + 1
    }

    static func number(_ address: String) -> UInt64? {
        let parts = address.split(separator: " ").first?.split(separator: ":") ?? []
        guard parts.count == 6 else { return nil }
        var v: UInt64 = 0
        for p in parts {
            guard let byte = UInt8(p, radix: 16) else { return nil }
            v = v << 8 | UInt64(byte)
        }
        return v
    }
}
