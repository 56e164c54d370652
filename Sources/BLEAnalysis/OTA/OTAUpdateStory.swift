import BLECore

/// Tells each update's story across connections: which connections it used and why each ended,
/// a buttonless DFU (the application rebooting into its bootloader) joined with the Secure DFU
/// that follows on the bootloader's connection, and an MCUmgr upload that ends with a reset joined
/// with the confirm the phone sends after reconnecting.
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
            return OTAConnectionStep(
                role: role, connectionNumber: s.connectionNumber, connection: s.connection,
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
                    c.startTime.microseconds(since: appEnd) <= maximumGap
                else { return false }
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
        return joinConfirmations(out.enumerated().filter { !absorbed.contains($0.offset) }.map(\.element))
    }

    /// Folds each MCUmgr confirm-only session (no image packets, a "confirm" phase) into the latest
    /// earlier MCUmgr upload that ended with a reset, on a connection to the same address that ended
    /// at most ``maximumGap`` before the confirm's connection started: Zephyr devices come back at
    /// their identity address after the reset. Roles "upload" and "confirm"; a failed confirm fails
    /// the update.
    static func joinConfirmations(_ sessions: [OTASession]) -> [OTASession] {
        var out = sessions
        var absorbed = Set<Int>()
        for (i, c) in out.enumerated()
        where c.protocolName == .mcumgr && c.packets == 0
            && c.phases.contains(where: { $0.name == "confirm" })
        {
            guard let confirmConnection = c.connections.first else { continue }
            let upload = out.indices.last { j in
                let u = out[j]
                guard j != i, !absorbed.contains(j), u.protocolName == .mcumgr, u.packets > 0,
                    u.connectionNumber < c.connectionNumber, u.phases.last?.name == "reset",
                    let last = u.connections.last, let end = last.endTime,
                    last.peerAddress != nil, last.peerAddress == confirmConnection.peerAddress
                else { return false }
                let gap = confirmConnection.startTime.microseconds(since: end)
                return gap >= 0 && gap <= maximumGap
            }
            guard let j = upload, let end = out[j].connections.last?.endTime else { continue }
            absorbed.insert(i)
            var u = out[j]
            u.connections[u.connections.count - 1].role = "upload"
            var confirmStep = confirmConnection
            confirmStep.role = "confirm"
            confirmStep.gapMicroseconds = confirmStep.startTime.microseconds(since: end)
            u.connections.append(confirmStep)
            var reconnect = OTAPhase(name: "reconnect", frame: u.connections[u.connections.count - 2].endFrame ?? u.endFrame, time: end)
            reconnect.endFrame = confirmStep.startFrame
            reconnect.endTime = confirmStep.startTime
            u.phases += [reconnect] + c.phases
            u.endFrame = c.endFrame
            u.endTime = c.endTime
            u.wireBytes += c.wireBytes
            u.findings += c.findings
            if case .success = c.result {} else { u.result = c.result }
            out[j] = u
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
