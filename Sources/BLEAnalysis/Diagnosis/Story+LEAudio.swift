import BLECodecs
import BLECore
import BLEProtocols

// MARK: - LE Audio

extension Story {
    /// `LE Audio: 5 CIS: 4 media LC3 48 kHz 10 ms 120 octets (sink ASE), 1 conversational two-way LC3 32 kHz …;
    /// established 0x00 at 2324 (LE Create CIS 2299), 4279 …; 4 ended by this side (0x16), 1 open at the end; ISO data
    /// path Transparent on vendor path 0x03 (no ISO data over HCI: the audio took another path); no LE Audio problem
    /// found`. Each CIS told by what its ASEs were configured with (ASCS Config Codec, Config QoS naming the CIS, Enable's
    /// contexts), then the HCI steps that set it up, how each ended, and where the audio went.
    static func leAudio(_ e: Evidence, findings: [Diagnosis]) -> StorySentence? {
        let services = audioServices(e)
        let cis = e.iso?.streams.filter { $0.kind == .cis } ?? []
        guard let iso = e.iso, !cis.isEmpty else {
            // Broadcast streams are the Data line's; without them, say that no unicast stream came of the services.
            let none = e.iso?.streams.isEmpty == false ? "" : "; no CIS set up"
            return services.map { StorySentence(.data, "LE Audio: \($0.text)\(none).", frames: $0.frames) }
        }
        let kinds = folded(cis.map { (cisDescription($0, e.leAudio), [$0.establishedFrame]) })
        let bis = iso.streams.count - cis.count
        var parts = ["\(plural(cis.count, "CIS", "CIS")): \(kinds)" + (bis > 0 ? "; \(plural(bis, "BIS", "BIS"))" : "")]
        var frames = cis.map(\.establishedFrame)
        let first = cis[0]
        let asked = first.requestFrame.map { " (\(first.role == "central" ? "LE Create CIS" : "LE CIS Request") \($0))" } ?? ""
        parts.append(
            "established 0x00 at \(first.establishedFrame)\(asked)"
                + (cis.count > 1 ? ", " + list(cis.dropFirst().map(\.establishedFrame)) : ""))
        frames += first.requestFrame.map { [$0] } ?? []
        parts.append(folded(cis.map { (cisEnd($0), [$0.endFrame ?? $0.establishedFrame]) }))
        if let path = dataPathText(cis, iso) { parts.append(path.text); frames.append(path.frame) }
        let audio = findings.filter { DiagnosisRules.rule($0.rule)?.group == .leAudio && $0.severity >= .warning }
        parts.append(
            audio.isEmpty
                ? "no LE Audio problem found"
                : "\(plural(audio.count, "LE Audio finding")) (\(audio.map(\.rule).joined(separator: ", ")))")
        frames += audio.map(\.frame)
        if let services { parts.append(services.text); frames += services.frames }
        return StorySentence(.data, "LE Audio: " + parts.joined(separator: "; ") + ".", frames: frames)
    }

    /// The LE Audio services (Assigned Numbers 3.4; each named as its specification abbreviates it), 0x1843–0x1858.
    static let audioServiceNames: [UInt16: String] = [
        0x1843: "AICS", 0x1844: "VCS", 0x1845: "VOCS", 0x1846: "CSIS", 0x1848: "MCS", 0x1849: "GMCS", 0x184B: "TBS",
        0x184C: "GTBS", 0x184D: "MICS", 0x184E: "ASCS", 0x184F: "BASS", 0x1850: "PACS", 0x1853: "CAS", 0x1854: "HAS",
        0x1855: "TMAS", 0x1858: "GMAS",
    ]

    /// `GATT: PACS, ASCS, VCS, CSIS, CAS, TMAS, AICS, VOCS`: the audio services discovered in the peers' databases on
    /// the LE links, primary ones in handle order, then the included ones (AICS and VOCS are secondary services, found
    /// through VCS's includes), with the frame of the first discovery.
    static func audioServices(_ e: Evidence) -> (text: String, frames: [Int])? {
        var names: [String] = [], frames: [Int] = []
        for c in e.connections where c.isLE {
            // A secondary service is in the database from the include that declares it (GATTLearner).
            let found =
                c.gatt.services.filter(\.isPrimary).map { ($0.uuid, $0.discoveredAt) }
                + c.gatt.includes.compactMap { i in i.uuid.map { ($0, c.startFrame) } }
            for (uuid, frame) in found {
                guard let name = uuid.uuid16.flatMap({ audioServiceNames[$0] }), !names.contains(name) else { continue }
                names.append(name)
                frames.append(frame)
            }
        }
        guard let first = frames.min() else { return nil }
        return ("GATT: " + names.joined(separator: ", "), [first])
    }

    /// `media LC3 48 kHz 10 ms 120 octets (sink ASE)`, `conversational two-way LC3 32 kHz 10 ms 80 octets (sink and source
    /// ASEs)`; without the ASE operations (GATT not followed, or not in the log), the SDUs the CIG asked for.
    static func cisDescription(_ s: ISOStream, _ profiles: LEAudioProfiles?) -> String {
        let twoWay = (s.maxSDUTx ?? 0) > 0 && (s.maxSDURx ?? 0) > 0
        let ases = profiles.map { aseParameters(of: s, $0) } ?? []
        guard let codec = ases.first(where: { $0.codec.codingFormat != nil })?.codec else {
            let sdu = max(s.maxSDUTx ?? 0, s.maxSDURx ?? 0)
            return (twoWay ? "two-way " : "") + "\(sdu)-octet SDUs every \(Double(s.sduInterval(.tx)) / 1000) ms"
        }
        let contexts = ases.reduce(UInt16(0)) { $0 | ($1.contexts ?? 0) }
        // The use case the client enabled the ASEs for, by its most specific context (Unspecified only when alone).
        let named = (0..<16).filter { contexts >> $0 & 1 == 1 }.compactMap { bit in
            bit < LEAudioTables.contextBits.count ? LEAudioTables.contextBits[bit]?.lowercased() : nil
        }
        let kind = (named.count > 1 ? named.filter { $0 != "unspecified" } : named).joined(separator: "/")
        var text = kind.isEmpty ? "" : kind + " "
        if twoWay { text += "two-way " }
        text += LEAudioTables.codingFormats[Int64(codec.codingFormat!)] ?? "codec \(hex(codec.codingFormat!))"
        if let hz = codec.samplingHz { text += " \(hz % 1000 == 0 ? "\(hz / 1000)" : "\(Double(hz) / 1000)") kHz" }
        if let us = codec.frameDurationMicroseconds { text += " \(us % 1000 == 0 ? "\(us / 1000)" : "\(Double(us) / 1000)") ms" }
        if let octets = codec.octetsPerFrame { text += " \(octets) octets" }
        let roles = Set(ases.compactMap(\.role)).sorted()
        return roles.isEmpty ? text : text + " (\(roles.joined(separator: " and ")) ASE\(roles.count > 1 ? "s" : ""))"
    }

    /// The ASEs a CIS carried: those the last Config QoS before its establishment on its link put on its CIG and CIS,
    /// each with its last Config Codec, its last Enable's contexts, and its role (the ASE characteristic it was reported
    /// on: sink or source).
    static func aseParameters(of s: ISOStream, _ profiles: LEAudioProfiles) -> [(codec: ASEParameters, contexts: UInt16?, role: String?)] {
        let before = profiles.operations.filter { $0.connectionNumber == s.connectionNumber && $0.frame < s.establishedFrame }
        guard let qos = before.last(where: { $0.opcode == 2 && $0.parameters.contains { $0.cigID == s.cigID && $0.cisID == s.cisID } })
        else { return [] }
        let ids = qos.parameters.filter { $0.cigID == s.cigID && $0.cisID == s.cisID }.map(\.aseID)
        return ids.compactMap { id in
            func last(_ op: UInt8) -> ASEParameters? {
                before.last { $0.opcode == op }.flatMap { o in o.parameters.first { $0.aseID == id } }
            }
            guard let codec = last(1) else { return nil }
            let role = profiles.aseStates.first { $0.connectionNumber == s.connectionNumber && $0.aseID == id }?.role
            return (codec, last(3)?.contexts, role)
        }
    }

    /// `ended by this side (0x16)`, `open at the end`, `lost (0x08 Connection Timeout)`.
    static func cisEnd(_ s: ISOStream) -> String {
        if s.endFrame == nil { return "open at the end" }
        if s.endedByReset { return "ended \(ISOStream.endedByResetText)" }
        guard let reason = s.endReason else { return "ended" }
        let code = hex(reason.rawValue)
        switch reason {
        case .connectionTerminatedByLocalHost: return "ended by this side (\(code))"
        case .remoteUserTerminatedConnection: return "ended by the peer (\(code))"
        default: return "ended \(code) (\(reason.description))"
        }
    }

    /// `ISO data path Transparent on vendor path 0x03 (no ISO data over HCI: the audio took another path)`: where the
    /// audio of the streams went, from their LE Setup ISO Data Path and the ISO data packets the log holds.
    static func dataPathText(_ streams: [ISOStream], _ iso: ISOAnalysis) -> (text: String, frame: Int)? {
        let paths = streams.flatMap(\.dataPaths)
        guard let first = paths.first else { return nil }
        let codecs = Set(paths.map { LEAudioTables.codingFormats[Int64($0.codec.codingFormat)] ?? hex($0.codec.codingFormat) }).sorted()
        var ids: [UInt8] = []
        for p in paths where !ids.contains(p.dataPathID) { ids.append(p.dataPathID) }
        let vendor = ids.filter { $0 != 0 }
        let over = vendor.isEmpty ? "HCI" : "vendor path\(vendor.count > 1 ? "s" : "") \(vendor.map { hex($0) }.joined(separator: ", "))"
        let sdus = iso.health.reduce(0) { $0 + $1.sdus }
        let carried =
            sdus > 0
            ? "\(plural(sdus, "SDU")) over HCI"
            : vendor.isEmpty ? "no ISO data in the log" : "no ISO data over HCI: the audio took another path"
        return ("ISO data path \(codecs.joined(separator: ", ")) on \(over) (\(carried))", first.frame)
    }
}
