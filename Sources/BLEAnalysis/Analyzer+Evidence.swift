import BLECapture
import BLECore
import BLEProtocols

/// What the diagnosis reads, recorded as the pass goes: one call per HCI command, per HCI event and per ATT exchange
/// that a rule may cite (``EvidenceEvent``); the SMP PDUs' and the signalling's come from the connection's machines
/// (``Analyzer/applySecurity(_:connection:frame:timestamp:)``, ``Analyzer/applySignal(_:frame:connection:direction:timestamp:state:)``).
/// Everything else a rule needs is in the connections (``Connection/link``, ``Connection/activity``).
extension Analyzer {
    /// What the diagnosis reads about the pass (after ``finish()``): the evidence events, the connections and the
    /// analyzer's findings. The capture reader's findings, the completeness verdict and the file name are the caller's
    /// to add.
    public func evidence(throughput: [ThroughputStream]? = nil) -> Evidence {
        // Stable by frame: some events are recorded when their wait ends (an unanswered request at the disconnection).
        let events = sink.evidenceLog.events.enumerated().sorted { ($0.element.frame, $0.offset) < ($1.element.frame, $1.offset) }.map(
            \.element)
        var evidence = Evidence(
            events: events, connections: connections, findings: findings, records: counters.records,
            lastTime: counters.records > 0 ? lastTimestamp : nil, lastFrame: lastFrame,
            isAirCapture: counters.linkLayerRecords > 0, controllers: controllerIdentities, aclBuffers: aclBuffers,
            eventsDropped: sink.evidenceLog.dropped, throughput: throughput)
        // The ISO streams are the analyzer's own (every pass follows them), so every diagnosis reads them: `info` said
        // "nothing wrong found" where `diagnose` found the BIG sync loss (LA-05). The ASE operations (LA-02) come from
        // the LE Audio tracker, only where it runs (``CaptureAnalysis/leAudio``).
        evidence.iso = isoAnalysis
        return evidence
    }

    func evidence(_ kind: EvidenceEvent.Kind, frame: Int, timestamp: Timestamp, controller: UInt16 = 0, connection: Int? = nil) {
        sink.evidence(kind, frame: frame, timestamp: timestamp, controller: controller, connection: connection)
    }
}
