import BLECodecs
import BLECore
import BLEProtocols

/// A link's L2CAP beyond the ATT fast path (`ConnectionMachine+ATT.swift`): the reassemblers, every other output of
/// its ``ChannelMux`` (SMP, the signalling's changes, K-frames, PDUs no decoder takes).
extension ConnectionMachine {
    /// One fragment into the reassembler of the L2CAP stream sent in `direction` (a switch, not a `_modify` subscript:
    /// the subscript's coroutine was not inlined).
    @inline(__always)
    func feedReassembler(_ fragment: L2CAPFragment, direction: Direction, findings: inout [Finding]) -> L2CAPReassembler.Step {
        switch direction {
        case .tx: tx.feed(fragment, findings: &findings)
        case .rx: rx.feed(fragment, findings: &findings)
        case .unknown: unknown.feed(fragment, findings: &findings)
        }
    }

    /// Hands out the PDU the stream in `direction` reassembled (``L2CAPReassembler/deliverReassembled(_:)``).
    func deliverReassembled(direction: Direction, _ body: (L2CAPPDU) -> Void) {
        switch direction {
        case .tx: tx.deliverReassembled(body)
        case .rx: rx.deliverReassembled(body)
        case .unknown: unknown.deliverReassembled(body)
        }
    }

    /// Hands out what the stream in `direction` kept of a PDU the capturer cut (``L2CAPReassembler/deliverCut(_:)``).
    func deliverCut(direction: Direction, _ body: (L2CAPPDU) -> Void) {
        switch direction {
        case .tx: tx.deliverCut(body)
        case .rx: rx.deliverCut(body)
        case .unknown: unknown.deliverCut(body)
        }
    }

    /// A link whose transport no event showed (inferred from traffic): a fixed channel only one transport has shows it
    /// (Core Spec Vol 3, Part A, 2.1: 0x0001 BR/EDR signalling, 0x0007 BR/EDR security manager; 0x0004 ATT, 0x0005 LE
    /// signalling, 0x0006 LE security manager). Dynamic channels exist on both and say nothing.
    @inline(never)
    func learnTransport(channel: UInt16, frame: Int, timestamp: Timestamp) {
        let transport: LinkTransport
        switch channel {
        case 0x0001, 0x0007: transport = .bredr
        case 0x0004, 0x0005, 0x0006: transport = .le
        default:
            if connection.link.transport.value != nil { transportKnown = true }
            return
        }
        transportKnown = true
        let what = "L2CAP \(L2CAPCID(channel).description)"
        feedLink(.transport(transport), frame: frame, timestamp: timestamp, source: .inferred(.transportShownBy(frame: frame, what: what)))
    }

    /// Every other output of the link's ``ChannelMux``: SMP, the signalling's changes, K-frames, PDUs no decoder takes.
    @inline(never)
    func routeChannelOutput(_ output: ChannelOutput, pdu: L2CAPPDU, direction: Direction, timestamp: Timestamp) {
        switch output {
        case .att(let bearer):
            // processL2CAP hands ATT on before coming here; taken the same way all the same, never a trap.
            deliverATT(pdu, bearer: bearer, direction: direction, timestamp: timestamp)
        case .signalling(let outcomes):
            decode.signalling &+= 1
            sink.counters.signallingPDUs += 1
            for outcome in outcomes { applySignal(outcome, frame: pdu.lastFrame, direction: direction, timestamp: timestamp) }
        case .malformedSignalling(let error):
            decode.signalling &+= 1
            sink.counters.signallingPDUs += 1
            sink.findings.append(Finding(.warning, .malformed("L2CAP signalling", error), frame: pdu.lastFrame))
        case .smp:
            decode.smp &+= 1
            processSMP(pdu, direction: direction, timestamp: timestamp)
        case .kframe(let outcome):
            decode.creditFrames &+= 1
            processKFrame(outcome, pdu: pdu, direction: direction, timestamp: timestamp)
        case .undecoded(let psm, let channel):
            if Self.isClassicProfile(psm) {
                decode.profilePDUs &+= 1
                processClassic(pdu, psm: psm, channel: channel, direction: direction, timestamp: timestamp)
            } else if goep(pdu, psm: psm, channel: channel, direction: direction, timestamp: timestamp) {
                decode.profilePDUs &+= 1
            } else {
                decode.countKnown(psm: psm.rawValue)
                emitUndecoded(pdu, psm: psm, direction: direction, timestamp: timestamp)
            }
        case .unknownCID:
            decode.countUnclaimed(cid: pdu.channel, bytes: pdu.bytes.count, frame: pdu.lastFrame)
            emitUndecoded(pdu, psm: nil, direction: direction, timestamp: timestamp)
        }
    }

    /// A PDU of a channel known by its PSM whose protocol blescope does not decode, or of a CID no decoder claims: its
    /// timeline event (counted for the decode health by the caller).
    func emitUndecoded(_ pdu: L2CAPPDU, psm: L2CAPPSM?, direction: Direction, timestamp: Timestamp) {
        guard sink.timeline else { return }
        let cid = pdu.channel
        var name = L2CAPCID(cid).description
        if let psm { name += " " + psm.description }
        emit(
            TimelineEvent(
                frame: pdu.lastFrame, timestamp: timestamp, connection: self.handle, direction: direction,
                layer: .l2cap, code: UInt32(cid), name: name, summary: "\(pdu.payload.count) bytes"))
    }

    /// What one signalling command changed (``ChannelEvent``), to the ATT bearers, the link's facts and the evidence;
    /// then its timeline event.
    func applySignal(_ outcome: SignalOutcome, frame: Int, direction: Direction, timestamp: Timestamp) {
        let s = outcome.signal
        let sender: EvidenceEvent.Sender = direction == .rx ? .peer : .local
        if s.code == .echoRequest { connection.machine.feedEchoRequest() }
        for event in outcome.events {
            switch event {
            case .channelsChanged:
                feedLink(.channelsChanged(channels.channels), frame: frame, timestamp: timestamp)
            case .bearerOpened(let b, let kind, let channel, let mtu):
                assert(b == bearers.count, "the mux numbers bearers in the order it opens them")
                bearers.append(ATTBearer(kind: kind, channel: channel, mtu: mtu))
            case .bearerMTU(let b, let mtu):
                bearers[b].mtu = mtu
            case .creditChannelLimit:
                sink.noteLimit(.tooManyCreditChannels(CreditChannelTable.maxChannels), frame: frame)
            case .creditConnectionRefused(let psm, let result):
                sink.evidence(.creditConnectionRefused(psm: psm, result: result), frame: frame, timestamp: timestamp, connection: number)
            case .connectionRefused(let r):
                sink.evidence(.channelRefused(r), frame: frame, timestamp: timestamp, connection: number)
            case .creditStallEnded(let stall):
                feedLink(.creditStallEnded(stall), frame: frame, timestamp: timestamp)
            case .parameterUpdateRequest(let request):
                sink.evidence(
                    .parameterUpdateRequest(sender: sender, identifier: s.identifier, request: request), frame: frame,
                    timestamp: timestamp, connection: number)
            case .parameterUpdateResponse(let result):
                sink.evidence(
                    .parameterUpdateResponse(sender: sender, identifier: s.identifier, result: result), frame: frame,
                    timestamp: timestamp, connection: number)
            }
        }
        if sink.timeline {
            emit(
                TimelineEvent(
                    frame: frame, timestamp: timestamp, connection: self.handle, direction: direction,
                    layer: .l2cap, code: UInt32(s.code.rawValue), name: s.code.description, summary: s.command.summary))
        }
    }

    /// One SMP PDU of the link: the key store learns from it (air captures decrypt with what it derives), the link's
    /// security tracker follows the pairing (``LinkMachine/feed(smp:sender:)``), its verdict goes to the evidence.
    func processSMP(_ pdu: L2CAPPDU, direction: Direction, timestamp: Timestamp) {
        sink.counters.smpPDUs += 1
        var reader = ByteReader(pdu.payload)
        do {
            let smp = try SMPPDU(parsing: &reader)
            capture.keyStore.smp(
                smp, raw: pdu.payload, handle: handle, centralToPeripheral: connection.centralToPeripheral(direction),
                frame: pdu.lastFrame, central: connection.centralAddressValue, peripheral: connection.peripheralAddressValue)
            // On the BR/EDR Security Manager channel the features are not a legacy or SC feature exchange (Vol 3, Part H,
            // 3.5.1): cross-transport key derivation, said by the link's record alone.
            let overBREDR = pdu.channel == L2CAPCID.smpBREDR.rawValue
            if !overBREDR {
                recordPairingFeatures(smp, sender: direction == .rx ? .peer : .local, frame: pdu.lastFrame, timestamp: timestamp)
            }
            if let output = connection.machine.feed(
                smp: smp, sender: direction == .rx ? .peer : .local, frame: pdu.lastFrame, overBREDR: overBREDR),
                let kind = output.evidence
            {
                sink.evidence(kind, frame: pdu.lastFrame, timestamp: timestamp, connection: number)
            }
            if sink.timeline {
                var e = TimelineEvent(
                    frame: pdu.lastFrame, timestamp: timestamp, connection: self.handle, direction: direction,
                    layer: .smp, code: UInt32(smp.code.rawValue), name: smp.code.description, summary: smp.summary)
                if case .pairingFailed = smp { e.status = smp.summary }
                emit(e)
            }
        } catch {
            sink.findings.append(Finding(.warning, .malformed("SMP PDU", error), frame: pdu.lastFrame))
        }
    }
}
