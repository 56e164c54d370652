import BLECore
import BLEProtocols

/// A codec fallback told as one event: a stream configured with one codec, closed (or aborted) before any Start, and
/// within 2 s another configured with a different codec (the Honda log's EarFeel earbuds: LDAC set at 4086, closed at
/// 4140 with no Start, AAC set at 4142; again at 4535/4587/4590). Told separately, the four streams read as four
/// unrelated facts; the event is that the source gave up its first codec.
extension Story {
    /// How soon after the first codec's configuration the second must follow to be its fallback.
    static let fallbackWindowMicroseconds: Int64 = 2_000_000

    /// One sentence for a device's fallbacks (nil: none), and the configuration frames of the streams it tells.
    static func a2dpFallback(_ streams: [A2DPStream], who: String) -> (line: StorySentence, told: Set<Int>)? {
        let ordered = streams.sorted { $0.configurationFrame < $1.configurationFrame }
        var pairs: [(from: A2DPStream, to: A2DPStream)] = []
        for (a, b) in zip(ordered, ordered.dropFirst()) {
            guard a.starts.isEmpty, let ended = a.closeFrame ?? a.abortFrame, b.configurationFrame > ended,
                let ca = a.codec, let cb = b.codec, ca.name != cb.name,
                b.configurationTime.microseconds(since: a.configurationTime) <= Self.fallbackWindowMicroseconds
            else { continue }
            pairs.append((a, b))
        }
        guard let first = pairs.first, let from = first.from.codec, let to = first.to.codec else { return nil }
        // One sentence for one kind of fallback (the same codecs each time); a log with several kinds keeps its lines.
        guard pairs.allSatisfy({ $0.from.codec?.description == from.description && $0.to.codec?.description == to.description }) else {
            return nil
        }
        let times = pairs.count == 1 ? "" : " \(pairs.count) times"
        let set = pairs.map(\.from.configurationFrame), ended = pairs.map { $0.from.closeFrame ?? $0.from.abortFrame! }
        let fallback = pairs.map(\.to.configurationFrame)
        // The end this side is, said as for one stream when every stream of the fallback agrees.
        let role = Set(pairs.flatMap { [$0.from.thisSideIsSink, $0.to.thisSideIsSink] }).count == 1 ? first.from : nil
        var text =
            "A2DP with \(who)\(role.map(roleText) ?? ""): codec fell back from \(from) to \(to)\(times) (\(from.name) set at \(list(set)), "
            + "closed with no Start at \(list(ended)); \(to.name) set at \(list(fallback)))"
        let media = pairs.map(\.to.media).filter { $0.packets > 0 }
        let starts = pairs.flatMap(\.to.starts)
        if let m = media.first {
            text += "; then streamed \(duration(media.reduce(0) { $0 + $1.streamingMicroseconds }))"
            if let bps = m.bitsPerSecond { text += " at \(Int((bps / 1000).rounded())) kbps" }
            text += " (\(plural(media.reduce(0) { $0 + $1.packets }, "media packet")))"
        } else if !starts.isEmpty {
            text += "; started \(plural(starts.count, "time")) but no media packet in the log"
        } else {
            text += "; the stream never started"
        }
        let frames = set + ended + fallback + starts + media.compactMap(\.firstFrame) + [role?.roleFrame].compactMap { $0 }
        return (StorySentence(.classic, text + ".", frames: frames), Set(set + fallback))
    }
}
