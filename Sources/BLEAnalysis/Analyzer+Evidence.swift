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

extension Analyzer {
    /// The evidence in an ATT PDU of connection `index` (its activity is the link machine's, ``LinkActivity``): a CCCD
    /// written, a Service Changed indication, a BASS source removed. Only the rare PDUs go further than a comparison.
    @inline(__always)
    func noteATT(
        _ pdu: ATTView, direction: Direction, connection index: Int, state: ConnectionState, frame: Int, timestamp: Timestamp
    ) {
        guard pdu.size == 5 || pdu.size == 7, let handle = pdu.handle else { return }
        let value = pdu.value
        if pdu.opcode == .handleValueIndication {
            guard direction == .rx, pdu.size == 7 else { return }
            noteServiceChanged(value, handle: handle, connection: index, state: state, frame: frame, timestamp: timestamp)
        } else if pdu.isWrite, pdu.size == 5 {
            if direction == .tx {
                noteCCCDWrite(
                    handle, value: UInt16(value[0]) | UInt16(value[1]) << 8, byCommand: pdu.opcode == .writeCommand,
                    connection: index, frame: frame, timestamp: timestamp)
            } else if value[0] == Self.removeSourceOpcode {
                // The peer's 2-byte write 05 xx may be a BASS Remove Source: only then is the database asked.
                noteSourceRemoved(handle, sourceID: value[1], connection: index, frame: frame, timestamp: timestamp)
            }
        }
    }

    /// A 2-byte write to a handle the peer's database names a CCCD (0x2902), or that follows a notifying
    /// characteristic's value: a subscription.
    func noteCCCDWrite(_ handle: UInt16, value: UInt16, byCommand: Bool, connection index: Int, frame: Int, timestamp: Timestamp) {
        let database = connections[index].gatt
        let owner = database.characteristic(owning: handle)
        let isCCCD: Bool
        if let t = database.attributeTypes[handle] {
            isCCCD = t.uuid16 == GATTAttributeType.clientCharacteristicConfiguration
        } else if let c = owner, c.valueHandle &+ 1 == handle, !c.properties.intersection([.notify, .indicate]).isEmpty {
            isCCCD = true
        } else {
            isCCCD = false
        }
        guard isCCCD else { return }
        evidence(
            .cccdWrite(handle: handle, valueHandle: owner?.valueHandle, value: value, byCommand: byCommand, sender: .local),
            frame: frame, timestamp: timestamp, connection: connections[index].number)
    }

    /// A write of `05 id` by the peer to this side's Broadcast Audio Scan Control Point: the assistant removed a source.
    func noteSourceRemoved(_ handle: UInt16, sourceID: UInt8, connection index: Int, frame: Int, timestamp: Timestamp) {
        guard connections[index].localGATT.uuid(for: handle)?.uuid16 == Self.broadcastAudioScanControlPoint else { return }
        evidence(
            .broadcastSourceRemoved(sourceID: sourceID, sender: .peer), frame: frame, timestamp: timestamp,
            connection: connections[index].number)
    }

    /// The Broadcast Audio Scan Control Point characteristic (Assigned Numbers 3.8).
    static let broadcastAudioScanControlPoint: UInt16 = 0x2BC7
    /// Its Remove Source operation (BASS 3.1.1, opcode 0x05: Source_ID follows).
    static let removeSourceOpcode: UInt8 = 0x05

    /// An indication of the Service Changed characteristic (0x2A05): the peer's database changed in a range.
    func noteServiceChanged(
        _ value: UnsafeRawBufferPointer, handle: UInt16, connection index: Int, state: ConnectionState, frame: Int,
        timestamp: Timestamp
    ) {
        guard attribute(index, handle: handle, db: .peer, state: state).uuid?.uuid16 == 0x2A05 else { return }
        let start = UInt16(value[0]) | UInt16(value[1]) << 8, end = UInt16(value[2]) | UInt16(value[3]) << 8
        evidence(.serviceChanged(start: start, end: end), frame: frame, timestamp: timestamp, connection: connections[index].number)
    }

    /// An ATT Error Response, with the request it answers when the capture holds it.
    func noteATTError(
        _ pdu: ATTView, direction: Direction, requestFrame: Int?, connection index: Int, frame: Int, timestamp: Timestamp
    ) {
        guard let e = pdu.errorResponse else { return }
        evidence(
            .attError(
                request: e.request, handle: e.handle, error: e.error, requestFrame: requestFrame, sender: direction == .rx ? .peer : .local),
            frame: frame, timestamp: timestamp, connection: connections[index].number)
    }
}
