import BLECore
import BLEProtocols

extension ISOTracker {
    /// A declared LE Meta event: the isochronous ones open and close streams.
    mutating func event(_ d: HCIDeclared, controller: UInt16, frame: Int, timestamp: Timestamp) {
        if let e = d.as(LECISEstablished.self) {
            cisEstablished(e.cis, v2: nil, controller: controller, frame: frame, timestamp: timestamp)
        } else if let e = d.as(LECISEstablishedV2.self) {
            cisEstablished(e.cis, v2: e, controller: controller, frame: frame, timestamp: timestamp)
        } else if let e = d.as(LECISRequest.self) {
            let key = Key(controller: controller, handle: e.cisHandle & 0x0FFF)
            (cisACL[key], cisRequestFrame[key]) = (e.aclHandle & 0x0FFF, frame)
            peripheralCIS.insert(key)
            note(.cisRequested, frame: frame, timestamp: timestamp, controller: controller, handle: key.handle, cig: e.cigID)
        } else if let e = d.as(LECreateBIGComplete.self) {
            bigEstablished(
                big: e.bigHandle, status: e.status, parameters: e.big, latency: e.transportLatency, phy: e.phy, source: true,
                controller: controller, frame: frame, timestamp: timestamp)
        } else if let e = d.as(LEBIGSyncEstablished.self) {
            bigEstablished(
                big: e.bigHandle, status: e.status, parameters: e.big, latency: e.transportLatency, phy: nil, source: false,
                controller: controller, frame: frame, timestamp: timestamp)
        } else if let e = d.as(LETerminateBIGComplete.self) {
            endBIG(controller: controller, big: e.bigHandle, kind: .bigTerminated, reason: e.reason, frame: frame, timestamp: timestamp)
        } else if let e = d.as(LEBIGSyncLost.self) {
            endBIG(controller: controller, big: e.bigHandle, kind: .bigSyncLost, reason: e.reason, frame: frame, timestamp: timestamp)
        } else if let e = d.as(LEBIGInfoAdvertisingReport.self) {
            bigInfo[Self.key(controller, e.syncHandle)] = e
        }
    }

    private mutating func cisEstablished(
        _ e: CISEstablishment, v2: LECISEstablishedV2?, controller: UInt16, frame: Int, timestamp: Timestamp
    ) {
        let key = Key(controller: controller, handle: e.handle & 0x0FFF)
        let config = cisConfig[key]
        guard e.status.rawValue == 0 else {
            note(
                .cisFailed, frame: frame, timestamp: timestamp, controller: controller, handle: key.handle, cig: config?.cig,
                status: e.status)
            return
        }
        // The central configured the CIG; a CIS Request came to the peripheral. C→P is the central's tx.
        let central = !peripheralCIS.contains(key)
        var s = newStream(key, kind: .cis, role: central ? "central" : "peripheral", frame: frame, timestamp: timestamp)
        s.cigID = config?.cig
        s.cisID = config?.cis.cisID
        s.aclHandle = cisACL[key]
        s.requestFrame = cisRequestFrame.removeValue(forKey: key)
        s.isoInterval = e.isoInterval
        s.nse = e.nse
        let cToP = (latency: e.transportLatencyCToP, phy: e.phyCToP, bn: e.bnCToP, ft: e.ftCToP, pdu: e.maxPDUCToP)
        let pToC = (latency: e.transportLatencyPToC, phy: e.phyPToC, bn: e.bnPToC, ft: e.ftPToC, pdu: e.maxPDUPToC)
        let (tx, rx) = central ? (cToP, pToC) : (pToC, cToP)
        (s.transportLatencyTx, s.transportLatencyRx) = (tx.latency, rx.latency)
        (s.phyTx, s.phyRx) = (LEPHY(rawValue: tx.phy), LEPHY(rawValue: rx.phy))
        (s.burstNumberTx, s.burstNumberRx) = (tx.bn, rx.bn)
        (s.flushTimeoutTx, s.flushTimeoutRx) = (tx.ft, rx.ft)
        (s.maxPDUTx, s.maxPDURx) = (tx.pdu, rx.pdu)
        if let g = config?.group, let c = config?.cis {
            let sdu = (cToP: (g.sduIntervalCToP, c.maxSDUCToP), pToC: (g.sduIntervalPToC, c.maxSDUPToC))
            let (t, r) = central ? (sdu.cToP, sdu.pToC) : (sdu.pToC, sdu.cToP)
            (s.sduIntervalTx, s.maxSDUTx, s.sduIntervalRx, s.maxSDURx) = (t.0, t.1, r.0, r.1)
            s.framing = g.framing
        }
        if let v2 {
            let (t, r) =
                central
                ? ((v2.sduIntervalCToP, v2.maxSDUCToP), (v2.sduIntervalPToC, v2.maxSDUPToC))
                : ((v2.sduIntervalPToC, v2.maxSDUPToC), (v2.sduIntervalCToP, v2.maxSDUCToP))
            (s.sduIntervalTx, s.maxSDUTx, s.sduIntervalRx, s.maxSDURx) = (t.0, t.1, r.0, r.1)
            s.framing = v2.framing
        }
        add(s, key: key)
        note(.cisEstablished, frame: frame, timestamp: timestamp, controller: controller, handle: key.handle, cig: s.cigID)
    }

    private mutating func bigEstablished(
        big: UInt8, status: HCIStatus, parameters p: BIGParameters, latency: UInt32, phy: UInt8?, source: Bool,
        controller: UInt16, frame: Int, timestamp: Timestamp
    ) {
        let bigKey = Self.key(controller, UInt16(big))
        guard status.rawValue == 0 else {
            note(source ? .bigFailed : .bigSyncFailed, frame: frame, timestamp: timestamp, controller: controller, big: big, status: status)
            return
        }
        let create = source ? bigRequests[bigKey] : nil
        let sync = source ? nil : bigSyncRequests[bigKey]
        let info = sync.flatMap { bigInfo[Self.key(controller, $0.syncHandle)] }
        let handles = p.bisHandles.map { $0 & 0x0FFF }
        bigHandles[bigKey] = handles
        for (i, handle) in handles.enumerated() {
            let key = Key(controller: controller, handle: handle)
            var s = newStream(key, kind: .bis, role: source ? "source" : "receiver", frame: frame, timestamp: timestamp)
            s.bigHandle = big
            s.bisIndex = sync.map { i < $0.bis.count ? $0.bis[i] : UInt8(i + 1) } ?? UInt8(truncatingIfNeeded: i + 1)
            s.isoInterval = p.isoInterval
            s.nse = p.nse
            let interval = create?.sduInterval ?? info?.sduInterval
            let maxSDU = create?.maxSDU ?? info?.maxSDU
            let phy = phy.map { LEPHY(rawValue: $0) } ?? info.map { LEPHY(rawValue: $0.phy) }
            if source {
                (s.sduIntervalTx, s.maxSDUTx, s.transportLatencyTx, s.phyTx) = (interval, maxSDU, latency, phy)
                (s.burstNumberTx, s.maxPDUTx) = (p.bn, p.maxPDU)
            } else {
                (s.sduIntervalRx, s.maxSDURx, s.transportLatencyRx, s.phyRx) = (interval, maxSDU, latency, phy)
                (s.burstNumberRx, s.maxPDURx) = (p.bn, p.maxPDU)
            }
            s.framing = create?.framing ?? info?.framing
            add(s, key: key)
        }
        note(source ? .bigCreated : .bigSyncEstablished, frame: frame, timestamp: timestamp, controller: controller, big: big)
    }

    /// A BIG terminated (source) or its sync lost or terminated (receiver): every BIS of it ends.
    mutating func endBIG(
        controller: UInt16, big: UInt8, kind: ISOLifecycleEvent.Kind, reason: HCIStatus, frame: Int, timestamp: Timestamp
    ) {
        for handle in bigHandles.removeValue(forKey: Self.key(controller, UInt16(big))) ?? [] {
            close(Key(controller: controller, handle: handle), reason: reason, frame: frame, timestamp: timestamp)
        }
        note(kind, frame: frame, timestamp: timestamp, controller: controller, big: big, status: reason)
    }

    /// Disconnection Complete on a handle: a CIS ends with its reason.
    mutating func disconnection(handle: UInt16, status: HCIStatus, reason: HCIStatus, controller: UInt16, frame: Int, timestamp: Timestamp)
    {
        let key = Key(controller: controller, handle: handle & 0x0FFF)
        guard status.rawValue == 0, let i = open[key], streams[i].kind == .cis else { return }
        close(key, reason: reason, frame: frame, timestamp: timestamp)
        note(
            .cisDisconnected, frame: frame, timestamp: timestamp, controller: controller, handle: key.handle, cig: streams[i].cigID,
            status: reason)
    }

    /// This side's HCI Reset on `controller`: every CIS and BIS open on it ends there, by the reset (Core Spec Vol 4,
    /// Part E, 7.3.2), and its groups and pending requests go with them.
    mutating func reset(controller: UInt16, frame: Int, timestamp: Timestamp) {
        for (key, i) in open where key.controller == controller {
            open[key] = nil
            streams[i].endFrame = frame
            streams[i].endTime = timestamp
            streams[i].endedByReset = true
        }
        for key in bigHandles.keys where key >> 16 == UInt32(controller) { bigHandles[key] = nil }
        pendingCreateCIS[controller] = nil
    }

    private mutating func close(_ key: Key, reason: HCIStatus, frame: Int, timestamp: Timestamp) {
        guard let i = open.removeValue(forKey: key) else { return }
        streams[i].endFrame = frame
        streams[i].endTime = timestamp
        streams[i].endReason = reason
    }

    private func newStream(_ key: Key, kind: ISOStreamKind, role: String, frame: Int, timestamp: Timestamp) -> ISOStream {
        ISOStream(
            number: streams.count + 1, controller: key.controller, handle: key.handle, kind: kind, role: role,
            establishedFrame: frame, establishedTime: timestamp, isoInterval: 0, nse: 0)
    }

    private mutating func add(_ stream: ISOStream, key: Key) {
        guard streams.count < Self.maxStreams else { return }
        if open[key] != nil { close(key, reason: .success, frame: stream.establishedFrame, timestamp: stream.establishedTime) }
        open[key] = streams.count
        isoHandles.insert(key)
        streams.append(stream)
        data.established(stream)
    }
}
