import BLECore
import BLEProtocols

/// The story's lines about BR/EDR links beyond their count: the SCO/eSCO links of the calls, each on its own handle,
/// and the links whose transport the log never showed.
extension Story {
    /// `Calls' audio: 1 eSCO link (transparent, 7.5 ms) up at frame 4, removed at 8; 1 setup failed (0x1A) at 12.`
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
                if let asked = l.requestedCoding { text += ", \(asked) asked" }
                text += l.endFrame.map { ", removed at \($0)" } ?? ", still up when the log ends"
                parts.append(text)
            } else {
                parts.append("\(kind) setup failed at frame \(l.resultFrame ?? l.requestFrame ?? 0) (\(codeName(l.status)))")
            }
        }
        if links.count > 6 { parts.append("\(links.count - 6) more") }
        let frames = links.compactMap { $0.startFrame ?? $0.resultFrame } + links.compactMap(\.endFrame)
        return StorySentence(.classic, "Calls' audio links: " + parts.joined(separator: "; ") + ".", frames: frames)
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
