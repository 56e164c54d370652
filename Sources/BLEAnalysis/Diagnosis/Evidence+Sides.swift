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

    /// `the passkey shown by the peer, typed on this side`; `the passkey typed on both sides`.
    public func passkeyText(_ roles: PasskeyRoles) -> String {
        switch roles {
        case .shownBy(let shower): "passkey shown by \(side(shower)), typed on \(side(shower == .local ? .peer : .local))"
        case .bothType: "passkey typed on both sides"
        }
    }

    /// `this side asked`, `the peer asked`, `both sides asked`: who set the MITM flag of a pairing.
    public func mitmAskers(_ askers: Set<EvidenceEvent.Sender>) -> String {
        askers.count == 2 ? "both sides" : askers.first.map(side) ?? "a side"
    }

    /// The capture's own side: `this side` on an HCI log, `the central` on an air capture.
    public var thisSide: String { side(.local) }
}
