import BLECore

extension Evidence {
    /// What the diagnosis reads about a finished pass (after ``Analyzer/finish()``): the evidence its machines recorded
    /// (one event per HCI command and event, ATT exchange, SMP PDU and signalling step a rule may cite), its
    /// connections and its findings. The capture reader's findings, the completeness verdict and the file name are the
    /// caller's to add. Everything else a rule needs is in the connections (``Connection/link``, ``Connection/activity``).
    public init(pass analyzer: Analyzer, throughput: [ThroughputStream]? = nil) {
        let log = analyzer.sink.evidenceLog
        // Stable by frame: some events are recorded when their wait ends (an unanswered request at the disconnection).
        let events = log.events.enumerated().sorted { ($0.element.frame, $0.offset) < ($1.element.frame, $1.offset) }.map(\.element)
        let counters = analyzer.counters
        self.init(
            events: events, connections: analyzer.connections, findings: analyzer.findings, records: counters.records,
            lastTime: counters.records > 0 ? analyzer.lastTimestamp : nil, lastFrame: analyzer.lastFrame,
            isAirCapture: counters.linkLayerRecords > 0, controllers: analyzer.controllerIdentities,
            aclBuffers: analyzer.aclBuffers, eventsDropped: log.dropped, throughput: throughput)
        // The ISO streams are the analyzer's own (every pass follows them), so every diagnosis reads them: `info` said
        // "nothing wrong found" where `diagnose` found the BIG sync loss (LA-05). The ASE operations (LA-02) come from
        // the LE Audio tracker, only where it runs (``CaptureAnalysis/leAudio``).
        iso = analyzer.isoAnalysis
        classic = analyzer.classicAnalysis
        peerNames = analyzer.sink.names
        localNames = analyzer.localNames
    }
}
