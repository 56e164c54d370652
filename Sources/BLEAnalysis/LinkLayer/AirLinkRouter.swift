import BLECapture
import BLECore
import BLEProtocols

/// What the air link-layer router asks of the connection table beyond the HCI machine's (``HCILinks``).
protocol AirLinks: HCILinks {
    /// The link open on an air capture's connection handle (air captures have one controller).
    func openIndex(handle: UInt16) -> Int?
    /// An L2CAP fragment of a data PDU to the link: counted as air data, then reassembled like HCI ACL.
    func airData(_ f: LLL2CAPFragment, link: Int)
    /// The link, to read or to write what the air says of it (access address, link-layer counts).
    func withConnection(_ link: Int, _ body: (inout Connection) -> Void)
}

/// Air captures (nRF Sniffer LT 272, LE LL LT 256/251) enter here: the ``LinkLayerTracker`` follows advertising,
/// CONNECT_INDs, LL control procedures and data PDUs; this router turns what it says into the links' ``LinkInput``s
/// (the same the HCI events become), their L2CAP fragments (the same reassembly as HCI ACL), timeline events, findings
/// and evidence, so ATT, SMP, GATT and the trackers see the same thing whichever way the bytes came.
final class AirLinkRouter {
    var tracker = LinkLayerTracker()
    let keyStore: LinkKeyStore
    /// The analyzer, which owns this router and outlives it (`unowned(unsafe)`: no reference count per PDU).
    unowned(unsafe) let links: any AirLinks
    let sink: AnalysisSink
    /// The once-per-link LL procedures seen on each link (`AirLinkRouter+Security.swift`).
    var procedureCounts = LLProcedureCounts()
    /// Each link's data PDU maximum each way (`AirLinkRouter+Security.swift`).
    var lengthLimits = LLLengthLimits()

    init(keyStore: LinkKeyStore, links: any AirLinks, sink: AnalysisSink) {
        self.keyStore = keyStore
        self.links = links
        self.sink = sink
        tracker.keyStore = keyStore
    }

    func process(_ record: CaptureRecord) {
        var llFindings: [Finding] = []
        // unowned(unsafe) is safe: `process` takes `emit` non-escaping, so the closure runs only during this call,
        // and `self` is the router whose method this is. A strong capture cost two atomic reference-count
        // operations per record, a tenth of the time on an air capture.
        tracker.process(record, findings: &llFindings) { [unowned(unsafe) self] output in self.handle(output, record: record) }
        sink.findings += llFindings
    }

    func finish(frame: Int, timestamp: Timestamp) {
        var llFindings: [Finding] = []
        tracker.finish(findings: &llFindings, frame: frame, timestamp: timestamp) { output in
            if case .connectionEnded(let e) = output { ended(e) }
        }
        sink.findings += llFindings
    }

    private func handle(_ output: LinkLayerOutput, record: CaptureRecord) {
        let controller = record.controllerIndex
        switch output {
        case .connectionStarted(let info):
            started(info, controller: controller)
            complianceConnect(info)
        case .l2capFragment(let f):
            guard let index = links.link(controller: controller, handle: f.handle, frame: f.frame, timestamp: f.timestamp, infer: true)
            else { return }
            complianceFragment(f)
            links.airData(f, link: index)
        case .control(let c):
            if !c.isRetransmission {
                recordControl(c, controller: controller)
                securityControl(c)
            }
            if sink.timeline {
                var e = TimelineEvent(
                    frame: c.frame, timestamp: c.timestamp, connection: c.handle, direction: c.direction, layer: .ll,
                    code: UInt32(c.opcode.rawValue), name: c.opcode.name, summary: c.summary)
                if c.isRetransmission { e.status = "retransmission" }
                links.emit(e, waiting: false)
            }
        case .parametersChanged(let p):
            parametersChanged(p, controller: controller)
        case .connectionEnded(let e):
            ended(e)
        case .encryptionStarted(let s):
            // The first encrypted PDU of a link: the event, saying how it was read (the link's fact and the evidence
            // come from the procedure, ``linkChanged(_:controller:)``).
            if sink.timeline {
                links.emit(
                    TimelineEvent(
                        frame: s.frame, timestamp: s.timestamp, connection: s.handle, direction: s.direction, layer: .ll,
                        code: nil, name: "Encryption started", summary: s.state), waiting: false)
            }
        case .linkChanged(let change):
            linkChanged(change, controller: controller)
        case .malformed(let m):
            complianceMalformed(m)
        case .advertising(let a):
            if let advertiser = a.advertiser, !a.advertisingData.isEmpty {
                sink.names.observe(advertisingData: a.advertisingData, address: advertiser.value, source: .advertising, frame: a.frame)
            }
            if sink.timeline {
                var summary = a.advertiser.map { "\($0)" + identityText($0.value) } ?? ""
                summary += " channel \(a.channel)"
                if let rssi = a.rssi { summary += " RSSI \(rssi) dBm" }
                if !a.advertisingData.isEmpty { summary += " data=" + hexString(a.advertisingData) }
                links.emit(
                    TimelineEvent(
                        frame: a.frame, timestamp: a.timestamp, connection: nil, direction: .unknown, layer: .ll,
                        code: UInt32(a.type.rawValue), name: a.type.description, summary: summary), waiting: false)
            }
        }
    }

    /// CONNECT_IND (or a connection inferred from its data PDUs): the connection opened, its parameters observed.
    private func started(_ info: LLConnectionInfo, controller: UInt16) {
        if info.inferred {
            let index = links.link(
                controller: controller, handle: info.handle, frame: info.startFrame, timestamp: info.startTimestamp, infer: true)
            if let index { links.withConnection(index) { $0.accessAddress = info.accessAddress.description } }
        } else {
            links.openLink(
                controller: controller, handle: info.handle, frame: info.startFrame, timestamp: info.startTimestamp, isLE: true
            ) { c in
                c.peerAddress = info.peripheral?.description
                c.centralAddress = info.central?.description
                c.accessAddress = info.accessAddress.description
                // CONNECT_IND's TxAdd and RxAdd (Vol 6, Part B, 2.3.3.1): the central is this side on air captures.
                for (side, a) in [(EvidenceEvent.Sender.local, info.central), (.peer, info.peripheral)] {
                    guard let a else { continue }
                    let seen = SeenAddress(value: a.value, isRandom: a.isRandom, frame: info.startFrame, shownBy: "CONNECT_IND")
                    _ = c.machine.feed(.security(.addressSeen(side, seen)), frame: info.startFrame, timestamp: info.startTimestamp)
                }
                if let i = info.parameters.interval, let l = info.parameters.latency, let t = info.parameters.timeout {
                    _ = c.machine.feed(
                        .parametersUpdated(ConnectionParameters(interval: i, latency: l, timeout: t)), frame: info.startFrame,
                        timestamp: info.startTimestamp)
                }
            }
        }
        guard sink.timeline else { return }
        var summary = "access address \(info.accessAddress)"
        if let c = info.central { summary += " central \(c)" + identityText(c.value) }
        if let p = info.peripheral { summary += " peripheral \(p)" + identityText(p.value) }
        if let i = info.parameters.interval {
            summary += " interval \(String(fractionDigits: 2, ConnectionTiming.intervalMilliseconds(i))) ms"
        }
        links.emit(
            TimelineEvent(
                frame: info.startFrame, timestamp: info.startTimestamp, connection: info.handle, direction: .tx,
                layer: .ll, code: nil, name: info.inferred ? "Connection (inferred from data PDUs)" : "CONNECT_IND",
                summary: summary), waiting: false)
    }

    /// A connection update, channel map or PHY update reached its instant: the link's parameters and PHY, when changed.
    private func parametersChanged(_ p: LLParametersChanged, controller: UInt16) {
        guard let index = links.link(controller: controller, handle: p.handle, frame: p.frame, timestamp: p.timestamp, infer: false)
        else { return }
        var current: (ConnectionParameters?, PHYPair?) = (nil, nil)
        links.withConnection(index) { current = ($0.currentParameters, $0.currentPHY) }
        // A controller reports a change only (an update to the same values, or a channel map, changes nothing).
        if let i = p.parameters.interval, let l = p.parameters.latency, let t = p.parameters.timeout {
            let value = ConnectionParameters(interval: i, latency: l, timeout: t)
            if current.0 != value { links.feed(.parametersUpdated(value), link: index, frame: p.frame, timestamp: p.timestamp) }
        }
        let phy = PHYPair(tx: p.parameters.centralToPeripheralPHY, rx: p.parameters.peripheralToCentralPHY)
        if current.1 != phy { links.feed(.phyChanged(phy), link: index, frame: p.frame, timestamp: p.timestamp) }
    }

    /// A link fact an air capture's LL procedure settled, as the ``LinkInput`` the HCI event would have become: the data
    /// length (LE Data Length Change), the encryption procedure's steps (LE Long Term Key Request, its Reply or
    /// Negative Reply, Encryption Change). The evidence of an encryption change is the one HCI's event gives.
    private func linkChanged(_ change: LLLinkChange, controller: UInt16) {
        switch change.change {
        case .dataLength(let length): lengthLimits.settled(handle: change.handle, length)
        case .encryption(let on, _): lengthLimits.encryption(handle: change.handle, on: on)
        default: break
        }
        guard let index = links.openIndex(handle: change.handle) else { return }
        let frame = change.frame, timestamp = change.timestamp
        switch change.change {
        case .dataLength(let length):
            // A controller reports a change only; a negotiation that confirms the value in force makes it observed.
            var unchanged = false
            links.withConnection(index) { unchanged = $0.link.dataLength.value == length && $0.link.dataLength.isObserved }
            guard !unchanged else { return }
            links.feed(.dataLengthChanged(length), link: index, frame: frame, timestamp: timestamp)
        case .keyRequested:
            links.feed(.encryption(.longTermKeyRequested), link: index, frame: frame, timestamp: timestamp)
            // LL_ENC_REQ: the central starts encryption, as LE Enable Encryption says it on HCI.
            var number = 0
            links.withConnection(index) { number = $0.number }
            sink.evidence(
                .encryptionStart(handle: change.handle), frame: frame, timestamp: timestamp, controller: controller, connection: number)
        case .keyGiven: links.feed(.encryption(.longTermKeyReplied), link: index, frame: frame, timestamp: timestamp)
        case .keyRefused: links.feed(.encryption(.longTermKeyRefused), link: index, frame: frame, timestamp: timestamp)
        case .encryption(let on, let inferred):
            var (encrypted, number) = (false, 0)
            links.withConnection(index) { (encrypted, number) = ($0.isEncrypted, $0.number) }
            guard encrypted != on else { return }
            links.feed(
                .encryption(.changed(status: .success, enabled: on)), link: index, frame: frame, timestamp: timestamp,
                source: inferred ? .inferred(.encryptedPDU(frame: frame)) : nil)
            sink.evidence(
                .encryptionChange(handle: change.handle, status: .success, enabled: on), frame: frame, timestamp: timestamp,
                controller: controller, connection: number)
        }
    }

    private func ended(_ e: LLConnectionEnded) {
        complianceEnded(handle: e.connection.handle, frame: e.frame, timestamp: e.timestamp)
        guard let index = links.openIndex(handle: e.connection.handle) else { return }
        links.withConnection(index) {
            $0.linkLayer = e.stats
            $0.linkEncryption = e.encryption
        }
        noteEncryption(e)
        noteCRCErrors(e)
        noteNoEmptyPDUs(e)
        noteSnifferMissed(e)
        keyStore.connectionEnded(
            handle: e.connection.handle, central: e.connection.central?.value, peripheral: e.connection.peripheral?.value)
        let input: ConnectionLifecycle.Input
        switch e.reason {
        case .terminated(let code):
            input = .terminated(code: code, byCentral: e.terminatedByCentral, frame: e.frame, timestamp: e.timestamp)
        case .replaced: input = .replaced(why: "access address reused by a new CONNECT_IND", frame: e.frame, timestamp: e.timestamp)
        case .captureEnded: return  // still open at the end, as HCI connections are
        case .silent(let silence): input = .silent(silence)
        case .notFollowed: input = .notFollowed(frame: e.frame, timestamp: e.timestamp)
        }
        links.feed(.lifecycle(input), link: index, frame: e.frame, timestamp: e.timestamp)
    }

    /// LL control PDUs the diagnosis reads (air captures): a termination and its error code, a refused procedure.
    private func recordControl(_ c: LLControlEvent, controller: UInt16) {
        let sender: EvidenceEvent.Sender = c.direction == .rx ? .peer : .local
        let kind: EvidenceEvent.Kind
        switch c.pdu {
        case .terminateInd(let code)?:
            kind = .linkTerminated(sender: sender, reason: HCIStatus(code))
        case .rejectInd(let code)?:
            kind = .linkLayerRejected(sender: sender, procedure: "a procedure (LL_REJECT_IND)", reason: HCIStatus(code))
        case .rejectExtInd(let opcode, let code)?:
            kind = .linkLayerRejected(sender: sender, procedure: opcode.name, reason: HCIStatus(code), opcode: opcode)
        case .unknownRsp(let opcode)?:
            kind = .linkLayerRejected(sender: sender, procedure: "\(opcode.name) (LL_UNKNOWN_RSP)", reason: nil, opcode: opcode)
        default:
            return
        }
        var number: Int? = nil
        if let index = links.openIndex(handle: c.handle) { links.withConnection(index) { number = $0.number } }
        sink.evidence(kind, frame: c.frame, timestamp: c.timestamp, controller: controller, connection: number)
    }

    /// ` = identity AA:BB:…` when a known IRK resolves the address (key file, phone log, or SMP seen so far).
    private func identityText(_ address: UInt64) -> String {
        guard !keyStore.identities.isEmpty, IdentityResolver.isResolvable(address), let id = keyStore.identity(of: address).first else {
            return ""
        }
        return " = identity \(id)"
    }
}

extension AirLinkRouter {
    /// One finding per connection for what encryption hid: PDUs no key decrypted, PDUs whose MIC failed.
    func noteEncryption(_ e: LLConnectionEnded) {
        guard let enc = e.encryption else { return }
        let handle = e.connection.handle
        if let from = enc.firstUndecryptedFrame, e.stats.encryptedUndecrypted > 0 {
            let kind: FindingKind =
                enc.startSeen
                ? .llEncryptedNoKey(
                    e.stats.encryptedUndecrypted, bytes: e.stats.encryptedUndecryptedBytes, from: from, encryptedFrom: enc.encryptedFrom,
                    keysTried: enc.keysTried,
                    note: enc.keySearch, handle: handle, startInferred: enc.startInferred, unflagged: enc.unflagged)
                : .llEncryptionStartUnseen(
                    e.stats.encryptedUndecrypted, bytes: e.stats.encryptedUndecryptedBytes, from: from, handle: handle)
            sink.findings.append(Finding(.warning, kind, frame: from))
        }
        if let from = enc.firstMICFailureFrame, e.stats.micFailures > 0 {
            sink.findings.append(
                Finding(
                    .warning,
                    .llMICFailures(
                        e.stats.micFailures, from: from, handle: handle,
                        capturer: e.stats.decryptedByCapturer > 0), frame: from))
        }
    }

    /// Packets that fail their CRC are kept out of the decode; when they are a large share of a connection's
    /// packets, what they hid is said once: a noisy radio, a sniffer far away, or a capture rewritten without its CRCs.
    /// A connection with no empty PDU among many packets: the file kept only packets with payload (the H-Band watch
    /// capture of the Ph0wn CTF: 301 packets, every one with payload, one or two per connection event).
    func noteNoEmptyPDUs(_ e: LLConnectionEnded) {
        let s = e.stats
        guard s.emptyPDUs == 0, s.packets >= LinkLayerTracker.packetsBeforeJudgingEmpties else { return }
        sink.findings.append(
            Finding(
                .info,
                FindingKind(
                    .llNoEmptyPDUs,
                    message:
                        "connection \(hex(e.connection.handle, width: 4)): the capture kept only packets with payload (no empty PDU among \(s.packets)): acknowledgements, retransmissions and the link's silences cannot be judged"
                ),
                frame: e.connection.startFrame))
    }

    /// What of the link the sniffer did not capture (``SnifferMisses``), so the Log line says it: an air capture whose
    /// records are all whole is still not the whole link (newcap20's ADI capture: "complete" beside 31 packets of its
    /// link with a bad CRC and one the peripheral sent that the central's NESN acknowledged). Not for a file that kept
    /// only packets with payload: ``noteNoEmptyPDUs(_:)`` says that of it.
    func noteSnifferMissed(_ e: LLConnectionEnded) {
        let s = e.stats
        guard !(s.emptyPDUs == 0 && s.packets >= LinkLayerTracker.packetsBeforeJudgingEmpties) else { return }
        let unheard = s.missed.windows.filter { $0.unheard != nil }.count
        var parts: [String] = []
        if s.missed.events > 0 { parts.append(Story.plural(s.missed.events, "connection event") + " with no packet heard") }
        if unheard > 0 { parts.append(Story.plural(unheard, "packet") + " the other side acknowledged and the file does not hold") }
        if s.crcErrors > 0 { parts.append(Story.plural(s.crcErrors, "packet") + " with a bad CRC") }
        guard !parts.isEmpty else { return }
        sink.findings.append(
            Finding(
                .info,
                FindingKind(
                    .llSnifferMissed,
                    message:
                        "connection \(hex(e.connection.handle, width: 4)): the sniffer missed \(parts.joined(separator: ", ")) (first after frame \(s.missed.windows.first?.after ?? e.connection.startFrame)): what the link carried there is not in the capture"
                ),
                frame: s.missed.windows.first?.at ?? e.connection.startFrame))
    }

    func noteCRCErrors(_ e: LLConnectionEnded) {
        let s = e.stats
        guard s.crcErrors > 10, s.crcErrors * 5 > s.packets else { return }
        sink.findings.append(
            Finding(
                .warning,
                FindingKind(
                    .llCRCErrors,
                    message:
                        "\(s.crcErrors) of \(s.packets) packets on connection \(hex(e.connection.handle, width: 4)) failed their CRC and were not decoded: "
                        + "the sniffer was far from the devices or missed the hopping, or a tool rewrote the capture without recomputing CRCs"
                ),
                frame: e.connection.startFrame))
    }
}
