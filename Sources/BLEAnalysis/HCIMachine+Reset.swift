import BLECapture
import BLECore
import BLEProtocols

/// An HCI Reset as the links see it: it ends every link its controller held (Core Spec Vol 4, Part E, 7.3.2), and the
/// events the controller had queued before it, logged just after it for handles no link holds, make no link
/// (``StaleAfterReset``).
extension HCIMachine {
    /// This side's HCI Reset: each link open on its controller ends there, by this side (a ``LinkInput``, the reset's
    /// frame its provenance), and so does every link of the other transports: SCO/eSCO (with or without the ACL they
    /// rode on in the log), CIS and BIS, each ended by the reset at its frame. The host's security settings written
    /// before it (``HostSecuritySetting``) are no longer known.
    func resetEndsLinks(_ record: CaptureRecord) {
        let controller = record.controllerIndex, frame = record.frame, time = record.timestamp
        resets[controller] = (frame, time)
        synchronous.reset(controller: controller, frame: frame, timestamp: time)
        iso.reset(controller: controller, frame: frame, timestamp: time)
        // The reset puts the controller's settings back to their defaults (7.3.2); the host writes them again after it.
        classic.hostSettings[controller] = nil
        classic.hostSettingWrites[controller] = nil
        for i in links.openLinks(controller: controller) {
            let number = links.connectionNumber(link: i)
            links.feed(.lifecycle(.reset(frame: frame, timestamp: time)), link: i, frame: frame, timestamp: time)
            synchronous.aclEnded(number, frame: frame, timestamp: time)
        }
    }

    /// Whether ACL on a handle no open link holds opens a link from before the log: not once this side reset the
    /// controller (issue 49). The reset ended every link it held (Vol 4, Part E, 7.3.2) and a link after it is opened by
    /// its Connection Complete; ACL on another handle is stale, counted by the capture's edges (``CompletenessTracker``,
    /// `stale-after-reset`), and HH-06 says where it came on a handle whose link had ended.
    @inline(__always) func infersLinks(controller: UInt16) -> Bool { resets.isEmpty || resets[controller] == nil }

    /// The handle of an event stating a link's facts or end for a handle no link (nor SCO/eSCO link, nor CIS) holds,
    /// logged after the controller's latest HCI Reset: a link's facts at any time after it, since the reset ended every
    /// link and a link after it is opened by its Connection Complete (a Mode Change or Encryption Change seconds later
    /// on a handle none opened is no link's); an end within ``StaleAfterReset/window``. Nil otherwise.
    func staleAfterReset(_ record: CaptureRecord) -> UInt16? {
        guard let reset = resets[record.controllerIndex],
            let (handle, _) = StaleAfterReset.staleEvent(record.bytes, at: record.timestamp, resetSent: reset.timestamp)
        else { return nil }
        let controller = record.controllerIndex
        let held = links.link(controller: controller, handle: handle, frame: record.frame, timestamp: record.timestamp, infer: false)
        guard held == nil, !synchronous.isOpen(controller: controller, handle: handle),
            iso.open[ISOTracker.Key(controller: controller, handle: handle)] == nil
        else { return nil }
        return handle
    }
}
