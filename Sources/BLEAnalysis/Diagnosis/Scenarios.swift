import BLECore

/// What a capture as a whole is the scene of, when its shape says so (issue 48, scope 6): recognised once, before the
/// rules run, by the scenario rules (`Rules/Scenario/`) from the links' facts and the evidence; the other rules and the
/// story read it, so that the findings fit the scene (a disconnect after an update is the reboot into it).
public struct Scenarios: Sendable {
    /// Runs of same-size writes that look like a firmware update in a protocol blescope does not know (SC-01).
    public var unknownUpdates: [UnknownFirmwareUpdate] = []
    /// A fuzzing-like run of connection attempts (SC-02): at most one, the capture's largest.
    public var fuzzing: [FuzzingRun] = []

    public init() {}

    /// Recognises every scenario of `e`.
    public init(_ e: Evidence) {
        unknownUpdates = SC01UnknownFirmwareUpdate.recognise(e)
        fuzzing = SC02FuzzingRun.recognise(e)
    }

    public var isEmpty: Bool { unknownUpdates.isEmpty && fuzzing.isEmpty }

    /// The unknown-protocol update whose link ended at `frame` on connection `number`, if any.
    public func update(endingAt frame: Int, connection number: Int?) -> UnknownFirmwareUpdate? {
        unknownUpdates.first { $0.connection == number && $0.ending.frame == frame }
    }
}
