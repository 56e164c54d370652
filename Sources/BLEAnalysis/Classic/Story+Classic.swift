import BLECore
import BLEProtocols

/// The story's lines about BR/EDR links beyond their count: the SCO/eSCO links of the calls, each on its own handle,
/// and the links whose transport the log never showed.
extension Story {
    /// `Calls' audio links: eSCO link up at frame 4 (transparent, every 7.50 ms), removed at 8; SCO setup failed at frame
    /// 12 (…).`, or `Audio connection (no call in the HFP exchange): …` where no call shows.
    /// Packets one way before the other way's silence is worth saying: 50 is 0.375 s of 7.5 ms eSCO packets.
    static let oneWayAudioPackets = 50

    /// `, the controller marking 15 received as no data, 5 as possibly invalid`: its Packet_Status_Flag on received
    /// packets.
    static func flaggedText(_ l: SynchronousLink) -> String {
        let names = [1: "possibly invalid", 2: "no data", 3: "partially lost"]
        let marked = [2, 1, 3].filter { l.receivedFlagged[$0] > 0 }.enumerated().map { i, flag in
            "\(grouped(l.receivedFlagged[flag]))" + (i == 0 ? " received" : "") + " as \(names[flag]!)"
        }
        guard !marked.isEmpty else { return "" }
        return ", the controller marking " + marked.joined(separator: ", ")
    }

    /// ` by this side (12)` for this side's Setup, ` by the peer (accepted at 12)` for its Accept: who wanted the audio
    /// link (the blueprobe Echo Auto log: the phone's Setup Synchronous Connection 13698 for the Clip 3's call).
    static func askedBy(_ l: SynchronousLink) -> String {
        guard let name = l.request, let frame = l.requestFrame else { return "" }
        return name.contains("Accept") ? " by the peer (accepted at \(frame))" : " by this side (\(frame))"
    }

    static func synchronousLine(_ e: Evidence) -> StorySentence? {
        let links = e.classic.synchronousLinks
        guard !links.isEmpty else { return nil }
        var parts: [String] = []
        for l in links.prefix(6) {
            let kind = l.isESCO ? "eSCO" : "SCO"
            if l.established {
                var text = "\(kind) link up at frame \(l.startFrame ?? 0)"
                if let air = l.airMode {
                    text +=
                        " (\(air)" + (l.transmissionInterval > 0 ? ", every \(String(fractionDigits: 2, l.intervalMilliseconds)) ms)" : ")")
                }
                if let asked = l.requestedCoding { text += ", \(asked) asked" + askedBy(l) }
                text +=
                    l.endFrame.map { l.endedByReset ? ", ended by the HCI Reset at \($0)" : ", removed at \($0)" }
                    ?? ", still up when the log ends"
                // A link removed within a second carried next to no audio: said with its life (the blueprobe midlog's
                // eSCO for the ring, up 6299, removed 6307, 33 ms; set up again after the answer).
                if let us = l.durationMicroseconds, l.endFrame != nil, !l.endedByReset, us < 1_000_000 {
                    text += " after \(BLEAnalysis.duration(us))"
                }
                // The audio the host carried over HCI (none where the controller routes it on its own path, the usual
                // case on phones): counted on the link by its handle, so empty records of no link are not.
                if l.packets.total > 0 {
                    let received = l.packets.rx + l.packets.unknown
                    text += ", \(grouped(l.packets.tx)) SCO packets sent and \(grouped(received)) received"
                    // Audio one way only over HCI: the other way took another path (PCM/I2S to the controller) or was
                    // silent; the log cannot tell which, but a listener hears nothing from this side over HCI.
                    if l.packets.tx == 0 && received >= oneWayAudioPackets {
                        text += " (none sent: this side's audio did not cross HCI; another path, or none)"
                    } else if received == 0 && l.packets.tx >= oneWayAudioPackets {
                        text += " (none received: the peer's audio did not cross HCI; another path, or none)"
                    }
                    text += flaggedText(l)
                }
                parts.append(text)
            } else {
                parts.append("\(kind) setup failed at frame \(l.resultFrame ?? l.requestFrame ?? 0) (\(codeName(l.status)))")
            }
        }
        if links.count > 6 { parts.append("\(links.count - 6) more") }
        let frames = links.compactMap { $0.startFrame ?? $0.resultFrame } + links.compactMap(\.endFrame)
        // A call only where the HFP exchange shows one (HFPCallShown.swift); else what the log shows, audio connections.
        let title =
            e.hfpShowsACall
            ? "Calls' audio links: "
            : (links.count == 1 ? "Audio connection" : "Audio connections")
                + (e.hfpDecoded ? " (no call in the HFP exchange): " : ": ")
        return StorySentence(.classic, title + parts.joined(separator: "; ") + ".", frames: frames)
    }

}

extension Story {
    /// `1 link whose transport the log does not show (up before it began, on handle 0x0edc): …`: links inferred from
    /// traffic that no channel or event showed to be LE or BR/EDR, counted as neither.
    static func unknownTransport(_ e: Evidence) -> StorySentence? {
        let links = e.connections.filter { $0.link.transport.value == nil }
        guard !links.isEmpty else { return nil }
        let handles = links.map { hex($0.handle, width: 4) }
        let groups = links.map { ending($0, e) }
        let text =
            "\(plural(links.count, "link")) whose transport the log does not show (up before it began; no channel or event of LE or BR/EDR on handle \(handles.prefix(4).joined(separator: ", "))): \(folded(groups.map { ($0.0, [$0.1]) }))."
        return StorySentence(.links, text, frames: links.map(\.startFrame) + groups.map(\.1))
    }
}
