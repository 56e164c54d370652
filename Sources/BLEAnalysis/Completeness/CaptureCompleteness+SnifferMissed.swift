import BLECore

extension CaptureCompleteness {
    /// An air link the sniffer did not hear all of (`ll.sniffer-missed`, ``AirLinkRouter``): the records are whole, the
    /// link is not. One item for every such link: the Log line's few words, `info` the first link's figures.
    mutating func addSnifferMissed(_ findings: [Finding]) {
        let missed = findings.filter { $0.kind.code == .llSnifferMissed }
        if let first = missed.first {
            let others = missed.count - 1
            var item = Item(
                code: .llSnifferMissed, severity: .info,
                message: first.message + (others == 0 ? "" : " (and \(Story.plural(others, "other link")))"), frame: first.frame,
                count: missed.count)
            item.brief = "the sniffer missed part of \(Story.plural(missed.count, "air link"))"
            items.append(item)
        }
    }
}
