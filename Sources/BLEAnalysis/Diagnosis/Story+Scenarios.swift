import BLECore

extension Story {
    /// `Fuzzing-like run: 52 attempts in 3 min 8 s by 5D:36:AC:90:0B:22 to 00:A0:50:00:00:03 …`: told with the links,
    /// before the pairings and requests it explains (SC-02, ``Scenarios/fuzzing``).
    static func fuzzing(_ e: Evidence) -> [StorySentence] {
        (e.scenarios?.fuzzing ?? []).map { run in
            StorySentence(
                .links,
                "\(run.headline.capitalizedFirst) by \(run.central ?? "one central") to \(run.device) (links #\(run.connections.first!)–#\(run.connections.last!)): \(run.abnormal) malformed or aborted (\(run.details)); their failures are a fuzzer's, told at info.",
                frames: [run.firstFrame, run.lastFrame])
        }
    }

    /// `Probable firmware update (protocol not known): 8189 Write Commands … to handle 0x000e …; the device ended the
    /// link at frame 18722 …; the device came back at frame 18743 …`: told with the data (SC-01,
    /// ``Scenarios/unknownUpdates``), as its rule tells it.
    static func updates(_ e: Evidence) -> [StorySentence] {
        (e.scenarios?.unknownUpdates ?? []).prefix(3).map { u in
            StorySentence(
                .data, "\(u.summary.capitalizedFirst); \(SC01UnknownFirmwareUpdate.followed(u, e)).",
                frames: [u.firstFrame, u.lastFrame, u.ending.frame] + (u.cameBack.map { [$0.frame] } ?? []))
        }
    }
}
