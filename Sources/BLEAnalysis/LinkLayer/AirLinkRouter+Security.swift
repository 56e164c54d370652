import BLECore
import BLEProtocols

/// What an air capture's LL control PDUs say of a link's security record: the key LL_ENC_REQ names by EDIV and Rand
/// (Core Spec Vol 6, Part B, 2.4.2.4, 5.1.3.1) and a pause to change it (LL_PAUSE_ENC_RSP, 5.1.3.2); and the PDUs out
/// of the specification's bounds (``LLNonCompliance``) as evidence for the link-layer compliance rules.
extension AirLinkRouter {
    func securityControl(_ c: LLControlEvent) {
        complianceControl(c)
        let input: SecurityInput
        switch c.pdu {
        case let .encReq(rand, ediv, _, _)?: input = .encryptionStarted(ediv: ediv, rand: rand)
        case .pauseEncRsp?: input = .paused
        default: return
        }
        guard let index = links.openIndex(handle: c.handle) else { return }
        links.feed(.security(input), link: index, frame: c.frame, timestamp: c.timestamp)
    }

    /// A procedure run again that may run once per link and direction; a channel map or a connection update out of
    /// bounds.
    private func complianceControl(_ c: LLControlEvent) {
        let sender: EvidenceEvent.Sender = c.direction == .rx ? .peer : .local
        switch c.pdu {
        case .channelMapInd(let map, _)?:
            let used = (map & 0x1F_FFFF_FFFF).nonzeroBitCount
            if used < 2 {
                noteCompliance(.channelMap(pdu: "LL_CHANNEL_MAP_IND", used: used, map: map), handle: c.handle, c.frame, c.timestamp)
            }
        case .connectionUpdateInd(let u)?:
            for (field, value, allowed) in LLTimingRanges.violations(
                interval: u.interval, latency: u.latency, timeout: u.timeout, windowSize: u.windowSize, windowOffset: u.windowOffset,
                hop: nil)
            {
                noteCompliance(
                    .parameter(pdu: "LL_CONNECTION_UPDATE_IND", field: field, value: value, allowed: allowed), handle: c.handle, c.frame,
                    c.timestamp)
            }
        case .lengthReq?, .lengthRsp?:
            lengthLimits.lengthProcedure(handle: c.handle)
        case nil:
            // Parameters not the opcode's size (Vol 6, Part B, 2.4.2): a defined opcode whose CtrData is too long or short.
            guard let info = c.opcode.info, info.fixed ? c.unreadParameters.count != info.size : c.unreadParameters.count < info.size
            else { break }
            noteCompliance(
                .controlLength(
                    sender: sender, opcode: c.opcode, length: c.unreadParameters.count + 1, expected: info.size + 1, fixed: info.fixed),
                handle: c.handle, c.frame, c.timestamp)
        default:
            break
        }
        // A PDU its receiver takes as resent (same SN, not acknowledged) is the same run, not a second one.
        guard LLProcedureCounts.oncePerLink.contains(c.opcode), !c.resentToReceiver else { return }
        let (count, first) = procedureCounts.note(.init(handle: c.handle, opcode: c.opcode, sender: sender), frame: c.frame)
        if count == 2 {
            noteCompliance(.repeated(opcode: c.opcode, sender: sender, count: 2, firstFrame: first), handle: c.handle, c.frame, c.timestamp)
        }
    }

    /// CONNECT_IND's channel map and timing (Vol 6, Part B, 2.3.3.1).
    func complianceConnect(_ info: LLConnectionInfo) {
        lengthLimits.started(info)
        guard let p = info.connectParameters else { return }
        let frame = info.startFrame, time = info.startTimestamp
        if p.usedChannels < 2 {
            noteCompliance(.channelMap(pdu: "CONNECT_IND", used: p.usedChannels, map: p.channelMap), handle: info.handle, frame, time)
        }
        for (field, value, allowed) in LLTimingRanges.violations(
            interval: p.interval, latency: p.latency, timeout: p.timeout, windowSize: p.windowSize, windowOffset: p.windowOffset, hop: p.hop
        ) {
            noteCompliance(.parameter(pdu: "CONNECT_IND", field: field, value: value, allowed: allowed), handle: info.handle, frame, time)
        }
    }

    /// A data PDU of a shape no conforming Link Layer sends (the reserved LLID); a record shorter than its Length, whose
    /// Length is checked against the link's maximum.
    func complianceMalformed(_ m: LLMalformedPDU) {
        let sender: EvidenceEvent.Sender = m.direction == .rx ? .peer : .local
        switch m.shape {
        case .reservedLLID(let length):
            noteCompliance(.reservedLLID(sender: sender, length: length), handle: m.handle, m.frame, m.timestamp)
        case let .longerThanRecord(llid, declared, carried):
            guard let over = lengthLimits.exceeded(handle: m.handle, direction: m.direction, length: declared, withMIC: true) else {
                return
            }
            noteCompliance(
                .lengthOverMaximum(
                    sender: sender, llid: llid, length: declared, maximum: over.maximum, negotiated: over.negotiated, carried: carried),
                handle: m.handle, m.frame, m.timestamp)
        case let .crcCut(llid, payload):
            // Read as plaintext only on a link followed from its CONNECT_IND and not encrypted.
            guard let limit = lengthLimits.limits[m.handle], !limit.encrypted else { return }
            switch llid {
            case 0: noteCompliance(.reservedLLID(sender: sender, length: payload.count), handle: m.handle, m.frame, m.timestamp)
            case 3:
                guard let info = LLControlOpcode(rawValue: payload.first ?? 0xFF).info, !payload.isEmpty,
                    info.fixed ? payload.count - 1 != info.size : payload.count - 1 < info.size
                else { return }
                noteCompliance(
                    .controlLength(
                        sender: sender, opcode: LLControlOpcode(rawValue: payload[0]), length: payload.count, expected: info.size + 1,
                        fixed: info.fixed), handle: m.handle, m.frame, m.timestamp)
            default:
                guard let over = lengthLimits.exceeded(handle: m.handle, direction: m.direction, length: payload.count, withMIC: false)
                else { return }
                noteCompliance(
                    .lengthOverMaximum(
                        sender: sender, llid: llid, length: payload.count, maximum: over.maximum, negotiated: over.negotiated, carried: nil),
                    handle: m.handle, m.frame, m.timestamp)
            }
        }
    }

    /// An L2CAP fragment longer than the link's maximum its way (only fragments over 27 octets are looked up).
    func complianceFragment(_ f: LLL2CAPFragment) {
        guard f.payload.count > 27,
            let over = lengthLimits.exceeded(handle: f.handle, direction: f.direction, length: f.payload.count, withMIC: false)
        else { return }
        noteCompliance(
            .lengthOverMaximum(
                sender: f.direction == .rx ? .peer : .local, llid: f.isStart ? 2 : 1, length: f.payload.count, maximum: over.maximum,
                negotiated: over.negotiated, carried: nil),
            handle: f.handle, f.frame, f.timestamp)
    }

    /// A link ended: how often each once-only procedure ran on it, when more than twice.
    func complianceEnded(handle: UInt16, frame: Int, timestamp: Timestamp) {
        lengthLimits.ended(handle: handle)
        for (key, v) in procedureCounts.take(handle: handle) where v.count > 2 {
            noteCompliance(
                .repeated(opcode: key.opcode, sender: key.sender, count: v.count, firstFrame: v.first), handle: handle, v.last, timestamp)
        }
    }

    private func noteCompliance(_ kind: LLNonCompliance.Kind, handle: UInt16, _ frame: Int, _ timestamp: Timestamp) {
        var number: Int? = nil
        if let index = links.openIndex(handle: handle) { links.withConnection(index) { number = $0.number } }
        sink.evidence(.linkLayerNonCompliance(LLNonCompliance(kind)), frame: frame, timestamp: timestamp, connection: number)
    }
}
