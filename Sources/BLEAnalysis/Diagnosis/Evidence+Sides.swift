extension Evidence {
    /// Who `sender` is, in this capture's words: on an air capture the link's roles (the sniffer saw both sides, and the
    /// central sends first), on an HCI log this side, whose host wrote the log, and its peer.
    public func side(_ sender: EvidenceEvent.Sender) -> String {
        switch sender {
        case .local: isAirCapture ? "the central" : "this side"
        case .peer: isAirCapture ? "the peripheral" : "the peer"
        }
    }

    /// `the central's` / `this side's`, `the peripheral's` / `the peer's`.
    public func sides(_ sender: EvidenceEvent.Sender) -> String { side(sender) + "'s" }

    /// The capture's own side: `this side` on an HCI log, `the central` on an air capture.
    public var thisSide: String { side(.local) }
}
