import BLECapture
import BLECore
import BLEProtocols

extension Analyzer {
    /// Air captures (nRF Sniffer LT 272, LE LL LT 256/251) enter at the link layer; their L2CAP
    /// fragments go through the same reassembly as HCI ACL, so ATT, SMP, GATT and the trackers see
    /// the same thing whichever way the bytes came.
    func processLinkLayer(_ record: CaptureRecord) {
        counters.linkLayerRecords += 1
        var llFindings: [Finding] = []
        // unowned(unsafe) is safe: `process` takes `emit` non-escaping, so the closure runs only during this call,
        // and `self` is the analyzer whose method this is. A strong capture cost two atomic reference-count
        // operations per record, a tenth of the time on an air capture.
        linkLayer.process(record, findings: &llFindings) { [unowned(unsafe) self] output in self.handleLinkLayer(output, record: record) }
        findings += llFindings
    }

    func finishLinkLayer() {
        var llFindings: [Finding] = []
        linkLayer.finish(findings: &llFindings, frame: lastFrame, timestamp: lastTimestamp) { output in
            if case .connectionEnded(let e) = output { endAirConnection(e) }
        }
        findings += llFindings
    }

    func handleLinkLayer(_ output: LinkLayerOutput, record: CaptureRecord) {
        let controller = record.controllerIndex
        switch output {
        case .connectionStarted(let info):
            linkLayerConnectionStarted(info, controller: controller)
        case .l2capFragment(let f):
            guard let index = connectionIndex(controller: controller, handle: f.handle, frame: f.frame, timestamp: f.timestamp, infer: true)
            else { return }
            table[index].machine.feed(airData: f.direction, bytes: f.payload.count)
            feedL2CAP(f.fragment, connection: index, direction: f.direction, timestamp: f.timestamp)
        case .control(let c):
            if !c.isRetransmission { recordLinkLayerControl(c, controller: controller) }
            if options.timeline {
                var e = TimelineEvent(
                    frame: c.frame, timestamp: c.timestamp, connection: c.handle, direction: c.direction, layer: .ll,
                    code: UInt32(c.opcode.rawValue), name: c.opcode.name, summary: c.summary)
                if c.isRetransmission { e.status = "retransmission" }
                emit(e)
            }
        case .parametersChanged(let p):
            linkLayerParametersChanged(p, controller: controller)
        case .connectionEnded(let e):
            endAirConnection(e)
        case .encryptionStarted(let s):
            linkLayerEncryptionStarted(s)
        case .linkChanged(let change):
            linkLayerChanged(change, controller: controller)
        case .advertising(let a):
            if options.timeline {
                var summary = a.advertiser.map { "\($0)" + identityText($0.value) } ?? ""
                summary += " channel \(a.channel)"
                if let rssi = a.rssi { summary += " RSSI \(rssi) dBm" }
                if !a.advertisingData.isEmpty { summary += " data=" + hexString(a.advertisingData) }
                emit(
                    TimelineEvent(
                        frame: a.frame, timestamp: a.timestamp, connection: nil, direction: .unknown, layer: .ll,
                        code: UInt32(a.type.rawValue), name: a.type.description, summary: summary))
            }
        }
    }

    /// CONNECT_IND (or a connection inferred from its data PDUs): the connection opened, its parameters observed.
    func linkLayerConnectionStarted(_ info: LLConnectionInfo, controller: UInt16) {
        if info.inferred {
            let index = connectionIndex(
                controller: controller, handle: info.handle, frame: info.startFrame, timestamp: info.startTimestamp, infer: true)
            if let index { table[index].accessAddress = info.accessAddress.description }
        } else {
            openConnection(
                controller: controller, handle: info.handle, frame: info.startFrame, timestamp: info.startTimestamp, isLE: true
            ) { c in
                c.peerAddress = info.peripheral?.description
                c.centralAddress = info.central?.description
                c.accessAddress = info.accessAddress.description
                if let i = info.parameters.interval, let l = info.parameters.latency, let t = info.parameters.timeout {
                    _ = c.machine.feed(
                        .parametersUpdated(ConnectionParameters(interval: i, latency: l, timeout: t)), frame: info.startFrame,
                        timestamp: info.startTimestamp)
                }
            }
        }
        if options.timeline {
            var summary = "access address \(info.accessAddress)"
            if let c = info.central { summary += " central \(c)" + identityText(c.value) }
            if let p = info.peripheral { summary += " peripheral \(p)" + identityText(p.value) }
            if let i = info.parameters.interval {
                summary += " interval \(String(fractionDigits: 2, ConnectionTiming.intervalMilliseconds(i))) ms"
            }
            emit(
                TimelineEvent(
                    frame: info.startFrame, timestamp: info.startTimestamp, connection: info.handle, direction: .tx,
                    layer: .ll, code: nil, name: info.inferred ? "Connection (inferred from data PDUs)" : "CONNECT_IND",
                    summary: summary))
        }
    }

    /// A connection update, channel map or PHY update reached its instant: the link's parameters and PHY, when changed.
    func linkLayerParametersChanged(_ p: LLParametersChanged, controller: UInt16) {
        guard
            let index = connectionIndex(controller: controller, handle: p.handle, frame: p.frame, timestamp: p.timestamp, infer: false)
        else { return }
        // A controller reports a change only (an update to the same values, or a channel map, changes nothing).
        if let i = p.parameters.interval, let l = p.parameters.latency, let t = p.parameters.timeout {
            let value = ConnectionParameters(interval: i, latency: l, timeout: t)
            if table[index].currentParameters != value {
                feedLink(.parametersUpdated(value), connection: index, frame: p.frame, timestamp: p.timestamp)
            }
        }
        let phy = PHYPair(tx: p.parameters.centralToPeripheralPHY, rx: p.parameters.peripheralToCentralPHY)
        if table[index].currentPHY != phy {
            feedLink(.phyChanged(phy), connection: index, frame: p.frame, timestamp: p.timestamp)
        }
    }

    /// The first encrypted PDU of a link: the event, saying how it was read (the link's fact and the evidence come from
    /// the procedure, ``linkLayerChanged(_:controller:)``).
    func linkLayerEncryptionStarted(_ s: LLEncryptionStarted) {
        if options.timeline {
            emit(
                TimelineEvent(
                    frame: s.frame, timestamp: s.timestamp, connection: s.handle, direction: s.direction, layer: .ll,
                    code: nil, name: "Encryption started", summary: s.state))
        }
    }

    func endAirConnection(_ e: LLConnectionEnded) {
        guard let index = table.openIndex(handle: e.connection.handle) else { return }
        table[index].linkLayer = e.stats
        table[index].linkEncryption = e.encryption
        noteEncryption(e)
        noteCRCErrors(e)
        keyStore.connectionEnded(
            handle: e.connection.handle, central: e.connection.central?.value, peripheral: e.connection.peripheral?.value)
        let input: ConnectionLifecycle.Input
        switch e.reason {
        case .terminated(let code):
            input = .terminated(code: code, byCentral: e.terminatedByCentral, frame: e.frame, timestamp: e.timestamp)
        case .replaced: input = .replaced(why: "access address reused by a new CONNECT_IND", frame: e.frame, timestamp: e.timestamp)
        case .captureEnded: return  // still open at the end, as HCI connections are
        case .silent(let silence): input = .silent(silence)
        }
        feedLink(.lifecycle(input), connection: index, frame: e.frame, timestamp: e.timestamp)
    }
}

extension Analyzer {
    /// One finding per connection for what encryption hid: PDUs no key decrypted, PDUs whose MIC failed.
    func noteEncryption(_ e: LLConnectionEnded) {
        guard let enc = e.encryption else { return }
        let handle = e.connection.handle
        if let from = enc.firstUndecryptedFrame, e.stats.encryptedUndecrypted > 0 {
            let kind: FindingKind =
                enc.startSeen
                ? .llEncryptedNoKey(
                    e.stats.encryptedUndecrypted, from: from, encryptedFrom: enc.encryptedFrom, keysTried: enc.keysTried,
                    note: enc.keySearch, handle: handle)
                : .llEncryptionStartUnseen(e.stats.encryptedUndecrypted, from: from, handle: handle)
            findings.append(Finding(.warning, kind, frame: from))
        }
        if let from = enc.firstMICFailureFrame, e.stats.micFailures > 0 {
            findings.append(
                Finding(
                    .warning,
                    .llMICFailures(
                        e.stats.micFailures, from: from, handle: handle,
                        capturer: e.stats.decryptedByCapturer > 0), frame: from))
        }
    }
}

extension Analyzer {
    /// ` = identity AA:BB:…` when a known IRK resolves the address (key file, phone log, or SMP seen so far).
    func identityText(_ address: UInt64) -> String {
        guard !keyStore.identities.isEmpty, IdentityResolver.isResolvable(address), let id = keyStore.identity(of: address).first else {
            return ""
        }
        return " = identity \(id)"
    }
}

extension Analyzer {
    /// Packets that fail their CRC are kept out of the decode; when they are a large share of a connection's
    /// packets, what they hid is said once: a noisy radio, a sniffer far away, or a capture rewritten without its CRCs.
    func noteCRCErrors(_ e: LLConnectionEnded) {
        let s = e.stats
        guard s.crcErrors > 10, s.crcErrors * 5 > s.packets else { return }
        findings.append(
            Finding(
                .warning,
                FindingKind(
                    code: "ll.crc-errors",
                    message:
                        "\(s.crcErrors) of \(s.packets) packets on connection \(hex(e.connection.handle, width: 4)) failed their CRC and were not decoded: "
                        + "the sniffer was far from the devices or missed the hopping, or a tool rewrote the capture without recomputing CRCs"
                ),
                frame: e.connection.startFrame))
    }
}

extension Analyzer {
    /// LL control PDUs the diagnosis reads (air captures): a termination and its error code, a refused procedure.
    func recordLinkLayerControl(_ c: LLControlEvent, controller: UInt16) {
        let sender: EvidenceEvent.Sender = c.direction == .rx ? .peer : .local
        let kind: EvidenceEvent.Kind
        switch c.pdu {
        case .terminateInd(let code)?:
            kind = .linkTerminated(sender: sender, reason: HCIStatus(code))
        case .rejectInd(let code)?:
            kind = .linkLayerRejected(sender: sender, procedure: "a procedure (LL_REJECT_IND)", reason: HCIStatus(code))
        case .rejectExtInd(let opcode, let code)?:
            kind = .linkLayerRejected(sender: sender, procedure: opcode.name, reason: HCIStatus(code))
        case .unknownRsp(let opcode)?:
            kind = .linkLayerRejected(sender: sender, procedure: "\(opcode.name) (LL_UNKNOWN_RSP)", reason: nil)
        default:
            return
        }
        let number = table.openIndex(handle: c.handle).map { table[$0].number }
        evidence(kind, frame: c.frame, timestamp: c.timestamp, controller: controller, connection: number)
    }
}
