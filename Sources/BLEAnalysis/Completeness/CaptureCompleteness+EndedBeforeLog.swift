import BLEProtocols

extension CaptureCompleteness {
    /// A link from before the log whose end alone the log holds (``CaptureCompleteness/endedBeforeLog``).
    public struct EndedBeforeLog: Hashable, Sendable {
        public var handle: UInt16
        public var frame: Int
        public var reason: HCIStatus
        /// A second Disconnection Complete for the handle, with nothing opened on it between (the iPhone BTServer log:
        /// 0x000b ended 0x13 at 27, again with reason 0x00 1.9 ms later at 28): a link ends once (Core Vol 4 Part E
        /// 7.7.5), so it is a repeat, told beside the end, not another link.
        public var again: Repeat?

        public struct Repeat: Hashable, Sendable {
            public var frame: Int
            public var reason: HCIStatus
        }
    }
}
