import BLECapture
import BLECore
import BLEProtocols

/// Where an ATT PDU travels, for fixtures: the LE fixed channel, a BR/EDR channel to PSM 0x001F, or an enhanced
/// ATT bearer (credit-based channel to PSM 0x0027) whose SDUs are cut into K-frames of at most `mps` bytes.
public enum TestBearer: Hashable, Sendable {
    case leFixed
    /// `cid`: the CID in the L2CAP header, i.e. the receiving side's endpoint.
    case bredr(cid: UInt16)
    case eatt(cid: UInt16, mps: Int)

    /// Encoder: the L2CAP PDUs (basic header included) that carry `pdu` on this bearer (Core Spec Vol 3, Part A,
    /// 3.1 B-frames; 3.4 K-frames, the first with the 2-byte SDU length).
    public func l2capPDUs(_ pdu: ATTPDU) -> [[UInt8]] {
        let sdu = pdu.bytes
        switch self {
        case .leFixed: return [HCIBuild.l2cap(cid: 0x0004, payload: sdu)]
        case .bredr(let cid): return [HCIBuild.l2cap(cid: cid, payload: sdu)]
        case .eatt(let cid, let mps):
            let size = max(3, mps)
            var frames: [[UInt8]] = []
            var start = 0
            repeat {
                let room = start == 0 ? size - 2 : size
                let end = min(sdu.count, start + room)
                let k = L2CAPKFrame(sduLength: start == 0 ? UInt16(sdu.count) : nil, payload: Array(sdu[start..<end]))
                frames.append(HCIBuild.l2cap(cid: cid, payload: k.bytes))
                start = end
            } while start < sdu.count
            return frames
        }
    }

    /// Decoder: the ATT PDU back from the L2CAP PDUs ``l2capPDUs(_:)`` made (checks the CIDs and the SDU length).
    public func decode(_ l2capPDUs: [[UInt8]]) throws(DecodeError) -> ATTPDU {
        var sdu: [UInt8] = []
        var expected: Int? = nil
        for (i, bytes) in l2capPDUs.enumerated() {
            let frame = try L2CAPBasicFrame(bytes: bytes)
            let wanted: UInt16 =
                switch self {
                case .leFixed: 0x0004
                case .bredr(let cid), .eatt(let cid, _): cid
                }
            guard frame.cid.rawValue == wanted else { throw .invalidValue(field: "CID", value: Int(frame.cid.rawValue), offset: 2) }
            if case .eatt = self {
                let k = try withByteReader(frame.payload) { (r: inout ByteReader) throws(DecodeError) in
                    try L2CAPKFrame(parsing: &r, isFirstOfSDU: i == 0)
                }
                if let n = k.sduLength { expected = Int(n) }
                sdu += k.payload
            } else {
                sdu += frame.payload
            }
        }
        if let expected, expected != sdu.count { throw .invalidSize(expected: expected, got: sdu.count) }
        return try ATTPDU(bytes: sdu)
    }
}

extension HCIBuild {
    /// BR/EDR Connection Complete (Core Spec Vol 4, Part E, 7.7.3): status, handle, BD_ADDR, link type (1 ACL), encryption.
    public static func connectionComplete(handle: UInt16, peer: BDAddress, status: HCIStatus = .success, encrypted: Bool = false) -> [UInt8]
    {
        var w = ByteWriter()
        w.write(status.rawValue)
        w.write(littleEndian: handle)
        var address = peer.value
        for _ in 0..<6 { w.write(UInt8(truncatingIfNeeded: address)); address >>= 8 }
        w.write(UInt8(0x01))
        w.write(UInt8(encrypted ? 0x01 : 0x00))
        return event(HCIEventCode(0x03), parameters: w.bytes)
    }
}

extension CaptureBuilder {
    /// BR/EDR Connection Complete for `handle`.
    public func connectBREDR(handle: UInt16, peer: BDAddress = BDAddress(0x00_1A_7D_DA_71_13), encrypted: Bool = false) -> CaptureBuilder {
        event(HCIBuild.connectionComplete(handle: handle, peer: peer, encrypted: encrypted))
    }

    /// One signalling command on the BR/EDR (0x0001) or LE (0x0005) signalling channel.
    public func signal(
        _ command: L2CAPSignalCommand, identifier: UInt8, handle: UInt16, _ direction: Direction,
        cid: UInt16 = 0x0001
    ) -> CaptureBuilder {
        l2cap(cid: cid, payload: L2CAPSignal(identifier: identifier, command: command).bytes, handle: handle, direction)
    }

    /// Opens a BR/EDR channel from this side (tx) to `psm` as Core Spec Vol 3, Part A, 6 does: Connection Request
    /// and Response, then a Configure Request each way with the MTU its sender can receive, each answered.
    public func openBREDRChannel(
        handle: UInt16, psm: UInt16 = 0x001F, localCID: UInt16, remoteCID: UInt16,
        localMTU: UInt16?, remoteMTU: UInt16?, identifier: UInt8 = 1
    ) -> CaptureBuilder {
        func options(_ mtu: UInt16?) -> [UInt8] { mtu.map { [0x01, 0x02, UInt8($0 & 0xFF), UInt8($0 >> 8)] } ?? [] }
        return signal(.connectionRequest(psm: psm, sourceCID: localCID), identifier: identifier, handle: handle, .tx)
            .signal(
                .connectionResponse(destinationCID: remoteCID, sourceCID: localCID, result: 0, status: 0), identifier: identifier,
                handle: handle, .rx
            )
            .signal(
                .configureRequest(destinationCID: remoteCID, flags: 0, options: options(localMTU)), identifier: identifier &+ 1,
                handle: handle, .tx
            )
            .signal(
                .configureRequest(destinationCID: localCID, flags: 0, options: options(remoteMTU)), identifier: identifier &+ 2,
                handle: handle, .rx
            )
            .signal(
                .configureResponse(sourceCID: remoteCID, flags: 0, result: 0, options: []), identifier: identifier &+ 1,
                handle: handle, .rx
            )
            .signal(
                .configureResponse(sourceCID: localCID, flags: 0, result: 0, options: []), identifier: identifier &+ 2,
                handle: handle, .tx)
    }

    /// Opens enhanced ATT bearers from this side (tx): one Credit Based Connection Request to PSM 0x0027 for every
    /// pair's local CID, answered with the remote CIDs (0 refuses one) (Core Spec Vol 3, Part A, 4.25–4.26).
    public func openEATT(
        handle: UInt16, cids: [(local: UInt16, remote: UInt16)], localMTU: UInt16, remoteMTU: UInt16,
        mps: UInt16 = 64, credits: UInt16 = 100, identifier: UInt8 = 5, signallingCID: UInt16 = 0x0005
    ) -> CaptureBuilder {
        signal(
            .creditBasedConnectionRequest(spsm: 0x0027, mtu: localMTU, mps: mps, initialCredits: credits, sourceCIDs: cids.map(\.local)),
            identifier: identifier, handle: handle, .tx, cid: signallingCID
        )
        .signal(
            .creditBasedConnectionResponse(
                mtu: remoteMTU, mps: mps, initialCredits: credits, result: 0,
                destinationCIDs: cids.map(\.remote)),
            identifier: identifier, handle: handle, .rx, cid: signallingCID)
    }

    /// An ATT PDU on a bearer, each of its L2CAP PDUs fragmented into ACL packets of at most `fragmentSize` bytes.
    public func att(_ pdu: ATTPDU, handle: UInt16, _ direction: Direction, bearer: TestBearer, fragmentSize: Int = 251) -> CaptureBuilder {
        var b = self
        let first: ACLPacketBoundary = direction == .tx ? .firstNonFlushable : .firstFlushable
        for l2cap in bearer.l2capPDUs(pdu) {
            for fragment in HCIBuild.aclFragments(handle: handle, l2capPDU: l2cap, fragmentSize: fragmentSize, firstBoundary: first) {
                b = b.record(.acl, direction, fragment)
            }
        }
        return b
    }
}
