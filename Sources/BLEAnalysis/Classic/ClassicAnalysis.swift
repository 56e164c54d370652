import BLECore

/// What a pass found of BR/EDR beyond its ACL links' facts: the SCO and eSCO links (each on its own handle, with its
/// own lifecycle). Every pass follows them (the HCI machine does), so every output and the diagnosis read them.
public struct ClassicAnalysis: Hashable, Sendable {
    /// SCO/eSCO links and the setups that failed, in the order they were asked for or appeared.
    public var synchronousLinks: [SynchronousLink] = []
    public init() {}
    public var isEmpty: Bool { synchronousLinks.isEmpty }
}

extension Analyzer {
    /// The BR/EDR results of the pass (``ClassicAnalysis``).
    public var classicAnalysis: ClassicAnalysis {
        var a = ClassicAnalysis()
        a.synchronousLinks = hci.synchronous.links
        return a
    }
}
