import BLECapture
import BLECodecs
import BLECore
import BLEProtocols

/// ACL data to whole L2CAP PDUs and on through the link's channels: the packet counted on its link (``LinkMachine``),
/// the fragment reassembled, each whole PDU's ``ChannelMux`` output handed on (ATT to `Analyzer+ATT.swift`, SMP,
/// the signalling's changes, K-frames).
extension Analyzer {
    func processACL(_ record: CaptureRecord) {
        counters.aclFragments += 1
        var input = record.reader
        let header: ACLHeader
        do { header = try ACLHeader(parsing: &input) } catch {
            findings.append(Finding(.warning, .malformed("ACL header", error), frame: record.frame, offset: record.fileOffset))
            return
        }
        let cut = record.isTruncated
        let available = input.remaining
        if !cut && available != Int(header.dataLength) {
            findings.append(
                Finding(
                    .warning, .invalidSize(expected: Int(header.dataLength), got: available), frame: record.frame,
                    offset: record.fileOffset))
        }
        // The bytes the header announces, or those there are (the generic `prefix` on a raw buffer was not inlined).
        let rest = input.remainingBytes
        let payload = UnsafeRawBufferPointer(start: rest.baseAddress, count: min(rest.count, Int(header.dataLength)))
        guard
            let index = connectionIndex(
                controller: record.controllerIndex, handle: header.handle, frame: record.frame,
                timestamp: record.timestamp, infer: !Self.isVendorHandle(header.handle))
        else {
            if Self.isVendorHandle(header.handle) {
                hci.vendorTrace.count(handle: header.handle, frame: record.frame, bytes: record.originalLength)
            }
            return
        }
        let direction = record.direction
        let moment = LinkActivity.Moment(frame: record.frame, timestamp: record.timestamp)
        let canCharge = connections[index].machine.feed(acl: direction, bytes: record.originalLength, at: moment)
        if direction == .tx, let total = hci.buffers.sent(controller: record.controllerIndex, connection: index, canCharge: canCharge) {
            connections[index].machine.feed(bufferFilledWith: total, at: moment)
        }
        if cut && !truncatedACLNoted {
            truncatedACLNoted = true
            findings.append(Finding(.info, .truncatedACL(record.bytes.count), frame: record.frame, offset: record.fileOffset))
        }
        let fragment = L2CAPFragment(
            isStart: header.packetBoundary.isStart, payload: payload, frame: record.frame,
            timestamp: record.timestamp, isCut: cut, carried: cut ? Int(header.dataLength) : nil)
        feedL2CAP(fragment, connection: index, direction: direction, timestamp: record.timestamp)
    }
}

extension Analyzer {
    /// One fragment into its stream's reassembler; whole PDUs go on to L2CAP dispatch.
    func feedL2CAP(_ fragment: L2CAPFragment, connection index: Int, direction: Direction, timestamp: Timestamp) {
        // Unmanaged, used through `_withUnsafeGuaranteedRef`: the table keeps the state alive while the fragment is
        // decoded (nothing on the L2CAP path closes a connection; only HCI events, a new connection on the handle and
        // link-layer records do, between records), and a strong local cost a retain and a release per fragment
        // (see docs/performance.md#analyzer-hci).
        guard let owner = table.unmanagedState(index) else { return }
        if heldBudget.feed(fragment.payload.count) { enforceHeldBytes(frame: fragment.frame) }
        owner._withUnsafeGuaranteedRef { state in
            var reassemblyFindings: [Finding] = []
            // `state` rides along so the ATT path does not look it up (and count it) again. A PDU in one fragment (most
            // of them) comes back as a value: no closure, whose captures were retained and released per PDU even when
            // captured `unowned(unsafe)` (see docs/performance.md#l2cap-reassembler).
            switch state.feed(fragment, direction: direction, findings: &reassemblyFindings) {
            case .pending:
                break
            case .whole(let pdu):
                processL2CAP(pdu, connection: index, direction: direction, timestamp: fragment.timestamp, state: state)
            case .reassembled:
                state.deliverReassembled(direction: direction) { pdu in
                    processL2CAP(pdu, connection: index, direction: direction, timestamp: fragment.timestamp, state: state)
                }
            }
            if !reassemblyFindings.isEmpty {
                for f in reassemblyFindings { state.decode.countReassembly(f) }
                // A PDU cut by the capturer is counted (decode health) and the cut said once (hci.acl-cut-by-capturer,
                // the completeness verdict): one finding per cut PDU would bury the others in a filtered log.
                findings += reassemblyFindings.filter { $0.kind.code != "l2cap.cut-by-capturer" }
            }
        }
    }
}

extension Analyzer {
    /// One whole L2CAP PDU of an open connection, whose decoding state is `state`: the connection's ``ChannelMux`` says
    /// what it is, and this hands it on (ATT, SMP, the signalling's changes, K-frames and their SDUs) and counts it for the
    /// decode health.
    ///
    /// Kept small enough to be inlined into the reassembly loop: ATT (the bulk of every capture) is handed on here, the
    /// rest out of line (``routeChannelOutput(_:pdu:connection:direction:timestamp:state:)``). Out of line as one
    /// function it cost about 28 instructions per PDU (callgrind, `info` of a 1 M-record capture: +2.3 %).
    @inline(__always)
    func processL2CAP(_ pdu: L2CAPPDU, connection index: Int, direction: Direction, timestamp: Timestamp, state: ConnectionState) {
        counters.l2capPDUs += 1
        state.decode.l2capPDUs &+= 1
        let output = state.channels.feed(pdu, direction: direction, timestamp: timestamp)
        guard case .att(let bearer) = output else {
            routeChannelOutput(output, pdu: pdu, connection: index, direction: direction, timestamp: timestamp, state: state)
            return
        }
        deliverATT(pdu, bearer: bearer, connection: index, direction: direction, timestamp: timestamp, state: state)
    }

    /// An ATT PDU, the L2CAP PDU's payload, to its bearer.
    @inline(__always)
    func deliverATT(
        _ pdu: L2CAPPDU, bearer: ATTBearerSlot, connection index: Int, direction: Direction, timestamp: Timestamp, state: ConnectionState
    ) {
        state.decode.att &+= 1
        processATT(
            ATTInput(
                payload: pdu.payload, frame: pdu.lastFrame, l2capBytes: pdu.bytes.count, direction: direction,
                timestamp: timestamp, cid: pdu.channel, bearer: bearer), connection: index, state: state)
    }

    /// Every other output of the connection's ``ChannelMux``: SMP, the signalling's changes, K-frames, PDUs no decoder
    /// takes.
    @inline(never)
    func routeChannelOutput(
        _ output: ChannelOutput, pdu: L2CAPPDU, connection index: Int, direction: Direction, timestamp: Timestamp,
        state: ConnectionState
    ) {
        switch output {
        case .att(let bearer):
            // processL2CAP hands ATT on before coming here; taken the same way all the same, never a trap.
            deliverATT(pdu, bearer: bearer, connection: index, direction: direction, timestamp: timestamp, state: state)
        case .signalling(let outcomes):
            state.decode.signalling &+= 1
            counters.signallingPDUs += 1
            for outcome in outcomes {
                applySignal(outcome, frame: pdu.lastFrame, connection: index, direction: direction, timestamp: timestamp, state: state)
            }
        case .malformedSignalling(let error):
            state.decode.signalling &+= 1
            counters.signallingPDUs += 1
            findings.append(Finding(.warning, .malformed("L2CAP signalling", error), frame: pdu.lastFrame))
        case .smp:
            state.decode.smp &+= 1
            processSMP(pdu, connection: index, direction: direction, timestamp: timestamp, state: state)
        case .kframe(let outcome):
            state.decode.creditFrames &+= 1
            processKFrame(outcome, pdu: pdu, connection: index, direction: direction, timestamp: timestamp, state: state)
        case .undecoded(let psm):
            state.decode.countKnown(psm: psm.rawValue)
            emitUndecoded(pdu, psm: psm, connection: index, direction: direction, timestamp: timestamp)
        case .unknownCID:
            state.decode.countUnclaimed(cid: pdu.channel, bytes: pdu.bytes.count, frame: pdu.lastFrame)
            emitUndecoded(pdu, psm: nil, connection: index, direction: direction, timestamp: timestamp)
        }
    }

    /// A PDU of a channel known by its PSM whose protocol blescope does not decode, or of a CID no decoder claims: its
    /// timeline event (counted for the decode health by the caller).
    func emitUndecoded(_ pdu: L2CAPPDU, psm: L2CAPPSM?, connection index: Int, direction: Direction, timestamp: Timestamp) {
        guard options.timeline else { return }
        let cid = pdu.channel
        var name = L2CAPCID(cid).description
        if let psm { name += " " + psm.description }
        emit(
            TimelineEvent(
                frame: pdu.lastFrame, timestamp: timestamp, connection: connections[index].handle, direction: direction,
                layer: .l2cap, code: UInt32(cid), name: name, summary: "\(pdu.payload.count) bytes"))
    }

    /// What one signalling command changed (``ChannelEvent``), to the ATT bearers, the connection's record and the
    /// evidence; then its timeline event.
    func applySignal(
        _ outcome: SignalOutcome, frame: Int, connection index: Int, direction: Direction, timestamp: Timestamp, state: ConnectionState
    ) {
        let s = outcome.signal
        let sender: EvidenceEvent.Sender = direction == .rx ? .peer : .local
        for event in outcome.events {
            switch event {
            case .channelsChanged:
                feedLink(.channelsChanged(state.channels.channels), connection: index, frame: frame, timestamp: timestamp)
            case .bearerOpened(let b, let kind, let channel, let mtu):
                assert(b == state.bearers.count, "the mux numbers bearers in the order it opens them")
                state.bearers.append(ATTBearer(kind: kind, channel: channel, mtu: mtu))
            case .bearerMTU(let b, let mtu):
                state.bearers[b].mtu = mtu
            case .creditChannelLimit:
                noteLimit(.tooManyCreditChannels(CreditChannelTable.maxChannels), frame: frame)
            case .creditConnectionRefused(let psm, let result):
                evidence(
                    .creditConnectionRefused(psm: psm, result: result), frame: frame, timestamp: timestamp,
                    connection: connections[index].number)
            case .creditStallEnded(let stall):
                feedLink(.creditStallEnded(stall), connection: index, frame: frame, timestamp: timestamp)
            case .parameterUpdateRequest(let request):
                evidence(
                    .parameterUpdateRequest(sender: sender, identifier: s.identifier, request: request), frame: frame,
                    timestamp: timestamp, connection: connections[index].number)
            case .parameterUpdateResponse(let result):
                evidence(
                    .parameterUpdateResponse(sender: sender, identifier: s.identifier, result: result), frame: frame,
                    timestamp: timestamp, connection: connections[index].number)
            }
        }
        if options.timeline {
            emit(
                TimelineEvent(
                    frame: frame, timestamp: timestamp, connection: connections[index].handle, direction: direction,
                    layer: .l2cap, code: UInt32(s.code.rawValue), name: s.code.description, summary: s.command.summary))
        }
    }
}
