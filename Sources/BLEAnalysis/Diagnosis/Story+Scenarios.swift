import BLECore

extension Story {
    /// `Probable firmware update (protocol not known): 8186 writes of 20 bytes to handle 0x000e …; the device ended the
    /// link at frame 18722 …; the device came back at frame 18743 …`: the scenarios the rules recognised (``Scenarios``),
    /// told as their rules tell them, one sentence each.
    static func scenarios(_ e: Evidence) -> [StorySentence] {
        guard let scenes = e.scenarios else { return [] }
        let fuzzing = scenes.fuzzing.map { run in
            StorySentence(
                .links,
                "\(run.headline.capitalizedFirst) by \(run.central ?? "one central") to \(run.device) (links #\(run.connections.first!)–#\(run.connections.last!)): \(run.abnormal) malformed or aborted (\(run.details)); their failures are a fuzzer's, told at info.",
                frames: [run.firstFrame, run.lastFrame])
        }
        return fuzzing
            + scenes.unknownUpdates.prefix(3).map { u in
                let frames = [u.firstFrame, u.lastFrame, u.ending.frame] + (u.cameBack.map { [$0.frame] } ?? [])
                return StorySentence(
                    .data, "\(u.summary.capitalizedFirst); \(SC01UnknownFirmwareUpdate.followed(u, e)).",
                    frames: frames)
            }
    }
}
