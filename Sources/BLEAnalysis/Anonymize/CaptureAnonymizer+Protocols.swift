import BLECapture
import BLECore
import BLEProtocols
import BLESecurity

/// The anonymizer's walk through the protocols that carry addresses, names and keys: HCI commands and events, the
/// link layer of air captures, and L2CAP (SMP and ATT) down to the bytes to replace.
extension CaptureAnonymizer {
    // MARK: HCI

    /// Core Spec Vol 4, Part E, 7: the parameters of the commands that carry addresses, names or keys.
    func command(_ bytes: inout [UInt8]) {
        guard let opcode = u16(bytes, 0), bytes.count >= 3 else { return }
        let p = 3
        switch opcode {
        case 0x0405, 0x0409, 0x040A, 0x040C, 0x040E, 0x0419, 0x041A, 0x042B, 0x042C, 0x042D, 0x042E, 0x042F, 0x0434,
            0x0C0D, 0x0C12:
            address(&bytes, p)  // classic commands whose first parameter is BD_ADDR
        case 0x040B: address(&bytes, p); key(&bytes, p + 6, 16, "link key")
        case 0x040D: address(&bytes, p); key(&bytes, p + 7, 16, "PIN")
        case 0x0C11:  // Write Stored Link Key: count, then (BD_ADDR, key) each
            if p < bytes.count {
                for i in 0..<Int(bytes[p]) { address(&bytes, p + 1 + 22 * i); key(&bytes, p + 7 + 22 * i, 16, "link key") }
            }
        case 0x0C13: name(&bytes, p..<(p + 248))  // Write Local Name
        case 0x0C52: advertisingData(&bytes, from: p + 1, to: bytes.count)  // Write Extended Inquiry Response
        case 0x2005: address(&bytes, p)  // LE Set Random Address
        case 0x2006: address(&bytes, p + 7)  // LE Set Advertising Parameters: peer address
        case 0x2008, 0x2009:  // LE Set Advertising / Scan Response Data
            if p < bytes.count { advertisingData(&bytes, from: p + 1, to: (p + 1 + Int(bytes[p]))) }
        case 0x200D: address(&bytes, p + 6)  // LE Create Connection
        case 0x2011, 0x2012, 0x2028, 0x202B, 0x202C, 0x204E: address(&bytes, p + 1)
        case 0x2017: key(&bytes, p, 16, "LE Encrypt key")
        case 0x2019: key(&bytes, p + 2, 10, "EDIV/Rand"); key(&bytes, p + 12, 16, "LTK")  // LE Enable Encryption
        case 0x201A: key(&bytes, p + 2, 16, "LTK")  // LE LTK Request Reply
        case 0x2027: address(&bytes, p + 1); key(&bytes, p + 7, 16, "IRK"); key(&bytes, p + 23, 16, "IRK")
        case 0x2035: address(&bytes, p + 1)  // LE Set Advertising Set Random Address
        case 0x2036: address(&bytes, p + 12)  // LE Set Extended Advertising Parameters: peer address
        case 0x2037, 0x2038:  // LE Set Extended Advertising / Scan Response Data
            if p + 3 < bytes.count { advertisingData(&bytes, from: p + 4, to: (p + 4 + Int(bytes[p + 3]))) }
        case 0x2043: address(&bytes, p + 3)  // LE Extended Create Connection
        case 0x2044, 0x2046: address(&bytes, p + 3)  // LE Periodic Advertising Create Sync / Add to list
        default: break
        }
    }

    func event(_ bytes: inout [UInt8]) {
        guard bytes.count >= 2 else { return }
        let p = 2
        switch bytes[0] {
        case 0x03: address(&bytes, p + 3)  // Connection Complete
        case 0x04, 0x16, 0x17, 0x31, 0x32, 0x33, 0x34, 0x3D, 0x3C: address(&bytes, p)
        case 0x12, 0x36: address(&bytes, p + 1)  // Role Change, Simple Pairing Complete
        case 0x07: address(&bytes, p + 1); name(&bytes, (p + 7)..<(p + 7 + 248))  // Remote Name Request Complete
        case 0x18: address(&bytes, p); key(&bytes, p + 6, 16, "link key")  // Link Key Notification
        case 0x15:  // Return Link Keys
            if p < bytes.count {
                for i in 0..<Int(bytes[p]) { address(&bytes, p + 1 + 22 * i); key(&bytes, p + 7 + 22 * i, 16, "link key") }
            }
        case 0x02:  // Inquiry Result: count, then the addresses
            if p < bytes.count { for i in 0..<Int(bytes[p]) { address(&bytes, p + 1 + 6 * i) } }
        case 0x22:  // Inquiry Result with RSSI: 14 bytes each
            if p < bytes.count { for i in 0..<Int(bytes[p]) { address(&bytes, p + 1 + 14 * i) } }
        case 0x2F: address(&bytes, p + 1); advertisingData(&bytes, from: p + 15, to: bytes.count)  // Extended Inquiry Result
        case 0x0E: commandComplete(&bytes)
        case 0x3E: leMeta(&bytes)
        default: break
        }
    }

    func commandComplete(_ bytes: inout [UInt8]) {
        guard let opcode = u16(bytes, 3) else { return }
        let r = 5  // return parameters; r = status
        switch opcode {
        case 0x1009, 0x202B, 0x202C: address(&bytes, r + 1)  // Read BD_ADDR, Read Peer/Local Resolvable Address
        case 0x0C14: name(&bytes, (r + 1)..<(r + 1 + 248))  // Read Local Name
        case 0x2017: key(&bytes, r + 1, 16, "LE Encrypt result")
        default: break
        }
    }

    func leMeta(_ bytes: inout [UInt8]) {
        guard bytes.count >= 3 else { return }
        let p = 2
        switch bytes[p] {
        case 0x01: address(&bytes, p + 6)
        case 0x0A, 0x29: address(&bytes, p + 6); address(&bytes, p + 12); address(&bytes, p + 18)
        case 0x02:  // Advertising Report: type, address type, address, length, data, RSSI each
            guard p + 1 < bytes.count else { return }
            var q = p + 2
            for _ in 0..<Int(bytes[p + 1]) {
                guard q + 9 <= bytes.count else { return }
                address(&bytes, q + 2)
                let length = Int(bytes[q + 8])
                advertisingData(&bytes, from: q + 9, to: (q + 9 + length))
                q += 10 + length
            }
        case 0x0D:  // Extended Advertising Report
            guard p + 1 < bytes.count else { return }
            var q = p + 2
            for _ in 0..<Int(bytes[p + 1]) {
                guard q + 24 <= bytes.count else { return }
                address(&bytes, q + 3)
                address(&bytes, q + 17)
                let length = Int(bytes[q + 23])
                advertisingData(&bytes, from: q + 24, to: (q + 24 + length))
                q += 24 + length
            }
        case 0x0B:  // Directed Advertising Report: 16 bytes each
            guard p + 1 < bytes.count else { return }
            for i in 0..<Int(bytes[p + 1]) { address(&bytes, p + 2 + 16 * i + 2); address(&bytes, p + 2 + 16 * i + 9) }
        case 0x13: address(&bytes, p + 3)  // Scan Request Received
        case 0x0E, 0x24: address(&bytes, p + 6)  // Periodic Advertising Sync Established (v1/v2)
        default: break
        }
    }

    func acl(_ bytes: inout [UInt8], direction: Direction) {
        guard let header = u16(bytes, 0), let length = u16(bytes, 2) else { return }
        let handle = UInt64(header & 0x0FFF)
        let pb = (header >> 12) & 0x3
        let data = 4..<min(bytes.count, 4 + length)
        let key = handle << 2 | (direction == .rx ? 1 : 0)
        if pb == 0x1 {
            continuation(&bytes, data, key: key)
        } else {
            l2capStart(&bytes, data, key: key, connection: handle)
        }
    }

    // MARK: Link layer

    func linkLayer(_ bytes: inout [UInt8], linkType: UInt32) {
        let parsed:
            (
                offset: Int, payload: Int, length: Int, header0: UInt8, advertising: Bool, direction: Direction,
                encryptedUnreadable: Bool, aa: UInt32
            )? = bytes.withUnsafeBytes { raw in
                guard let air = try? LLAirPacket(linkType: linkType, bytes: raw) else { return nil }
                // A packet whose CRC fails is noise: its "addresses" and "names" are random bytes (learning them would make
                // the whole-record replacement rewrite the same bytes in good packets). Advertising CRCs are checked here
                // here where the pseudo-header does not say (a header saying "valid" is trusted: some capturers zero the CRC).
                if air.crc == .invalid { return nil }
                if air.crc == .notChecked, !air.isDataChannel,
                    LLCRC.compute(crcInit: 0x55_5555, over: air.packet.pdu) != air.packet.crc
                {
                    return nil
                }
                let payload = air.packet.offset + 4 + (air.packet.pdu.count - air.packet.payload.count)
                return (
                    air.packet.offset, payload, air.packet.payload.count, air.packet.header0, !air.isDataChannel, air.direction,
                    air.encrypted && air.mic != .valid, air.packet.accessAddress.rawValue
                )
            }
        guard let ll = parsed else { return }
        let pl = ll.payload
        let end = pl + ll.length
        if ll.advertising {
            switch ll.header0 & 0x0F {
            case 0, 2, 4, 6: address(&bytes, pl); advertisingData(&bytes, from: pl + 6, to: end)
            case 1, 3: address(&bytes, pl); address(&bytes, pl + 6)
            case 5:  // CONNECT_IND: InitA, AdvA, LLData (access address, CRCInit, …)
                address(&bytes, pl); address(&bytes, pl + 6)
                if pl + 19 <= bytes.count {
                    let aa =
                        UInt32(bytes[pl + 12]) | UInt32(bytes[pl + 13]) << 8 | UInt32(bytes[pl + 14]) << 16 | UInt32(bytes[pl + 15]) << 24
                    state.crcInit[aa] = UInt32(bytes[pl + 16]) | UInt32(bytes[pl + 17]) << 8 | UInt32(bytes[pl + 18]) << 16
                }
            case 7, 8:  // Common Extended Advertising Payload Format (Vol 6, Part B, 2.3.4)
                guard pl < end else { return }
                let headerLength = Int(bytes[pl] & 0x3F)
                if headerLength > 0, pl + 1 < end {
                    let flags = bytes[pl + 1]
                    var q = pl + 2
                    if flags & 0x01 != 0 { address(&bytes, q); q += 6 }
                    if flags & 0x02 != 0 { address(&bytes, q) }
                }
                advertisingData(&bytes, from: pl + 1 + headerLength, to: end)
            default: break
            }
            return
        }
        guard !ll.encryptedUnreadable else { return }
        let llid = ll.header0 & 0x03
        let key = UInt64(ll.aa) << 2 | (ll.direction == .rx ? 1 : 0)
        if llid == 2 {
            l2capStart(&bytes, pl..<end, key: key, connection: UInt64(ll.aa) | 1 << 40)
        } else if llid == 1 && ll.length > 0 {
            continuation(&bytes, pl..<end, key: key)
        }
    }

    // MARK: L2CAP, SMP, ATT

    func l2capStart(_ bytes: inout [UInt8], _ data: Range<Int>, key: UInt64, connection: UInt64) {
        state.pending[key] = nil
        guard data.count >= 4, let length = u16(bytes, data.lowerBound), let cid = u16(bytes, data.lowerBound + 2) else { return }
        let sdu = Array(bytes[(data.lowerBound + 4)..<data.upperBound])
        let actions: [Action]
        switch cid {
        case 0x0006, 0x0007: actions = smp(sdu, length: length)
        case 0x0004: actions = att(sdu, length: length, connection: connection)
        default: return
        }
        guard !actions.isEmpty else { return }
        var pending = Pending(remaining: length, sduOffset: 0, actions: actions)
        apply(&bytes, (data.lowerBound + 4)..<data.upperBound, &pending)
        if pending.remaining > 0 { state.pending[key] = pending }
    }

    func continuation(_ bytes: inout [UInt8], _ data: Range<Int>, key: UInt64) {
        guard var pending = state.pending[key] else { return }
        apply(&bytes, data, &pending)
        state.pending[key] = pending.remaining > 0 ? pending : nil
    }

    /// Applies the actions to the part of the SDU that is in `data`.
    func apply(_ bytes: inout [UInt8], _ data: Range<Int>, _ pending: inout Pending) {
        let count = min(data.count, pending.remaining)
        let window = pending.sduOffset..<(pending.sduOffset + count)
        for (index, action) in pending.actions.enumerated() {
            let overlap = action.range.clamped(to: window)
            guard !overlap.isEmpty else { continue }
            let r = (data.lowerBound + overlap.lowerBound - window.lowerBound)..<(data.lowerBound + overlap.upperBound - window.lowerBound)
            switch action.kind {
            case let .zero(kind):
                if overlap.lowerBound == action.range.lowerBound { key(&bytes, r.lowerBound, 0, kind) }
                if !learning { for i in r { bytes[i] = 0 } }
            case .name:
                name(&bytes, r)
            case .value:
                guard !learning, values != .keep else { continue }
                if overlap.lowerBound == action.range.lowerBound { report.values += 1 }
                report.valueBytes += r.count
                if values == .blank {
                    for i in r { bytes[i] = 0 }
                } else {
                    var h =
                        pending.hashes[index]
                        ?? {
                            var s = SHA256(); s.update(salt); s.update(Array("value".utf8)); return s
                        }()
                    for i in r {
                        h.update(CollectionOfOne(bytes[i]))
                        var copy = h
                        bytes[i] = copy.finalize()[0]
                    }
                    pending.hashes[index] = h
                }
            }
        }
        pending.sduOffset += count
        pending.remaining -= count
    }

    /// Core Spec Vol 3, Part H, 3.6: the key distribution PDUs.
    func smp(_ sdu: [UInt8], length: Int) -> [Action] {
        guard let code = sdu.first else { return [] }
        switch code {
        case 0x06: return [Action(range: 1, 17, kind: .zero("LTK"))]
        case 0x07: return [Action(range: 1, 11, kind: .zero("EDIV/Rand"))]
        case 0x08: return [Action(range: 1, 17, kind: .zero("IRK"))]
        case 0x0A: return [Action(range: 1, 17, kind: .zero("CSRK"))]
        case 0x09:
            learnAddress(sdu, 2)  // Identity Address Information: type, address (learned; replaced by the whole-record scan)
            return []
        default: return []
        }
    }

    /// Pass 1: the Client Characteristic Configuration handles (Core Spec Vol 3, Part G, 3.3.3.3), as the analysis tells
    /// them (``GATTDatabase/learnedTypes``): named 0x2902 by a Find Information Response, or written 01 00, 02 00 or
    /// 03 00 and then followed by a notification (bit 0) or indication (bit 1) of the handle before it. Their values are
    /// the link's configuration, not data, and what tells blescope a CCCD where discovery is not in the capture.
    func learnCCCD(_ sdu: [UInt8], length: Int, connection: UInt64) {
        guard learning, let opcode = sdu.first else { return }
        switch opcode {
        case 0x05 where sdu.count >= 2 && sdu[1] == 0x01:  // format 1: (handle, 16-bit UUID) entries
            for q in stride(from: 2, to: sdu.count - 3, by: 4) where u16(sdu, q + 2) == 0x2902 {
                if let h = u16(sdu, q) { cccdHandles[connection, default: []].insert(UInt16(h)) }
            }
        case 0x12, 0x52:
            guard length == 5, sdu.count >= 5, sdu[4] == 0, (1...3).contains(sdu[3]), let h = u16(sdu, 1) else { return }
            state.cccdWrites[connection, default: [:]][UInt16(h)] = sdu[3]
        case 0x1B, 0x1D:
            guard let h = u16(sdu, 1), let bits = state.cccdWrites[connection]?[UInt16(h) &+ 1],
                bits & (opcode == 0x1B ? 1 : 2) != 0
            else { return }
            cccdHandles[connection, default: []].insert(UInt16(h) &+ 1)
        default: return
        }
    }

    /// A two-byte value of a known CCCD: bits 0-1 (notify, indicate) and nothing else set (Vol 3, Part G, 3.3.3.3).
    func isCCCDValue(_ sdu: [UInt8], from start: Int, length: Int, handle: UInt16, connection: UInt64) -> Bool {
        length - start == 2 && start + 1 < sdu.count && sdu[start] <= 3 && sdu[start + 1] == 0
            && cccdHandles[connection]?.contains(handle) == true
    }

    /// Core Spec Vol 3, Part F, 3.4: where a PDU carries attribute values; Device Name (0x2A00) values are names.
    func att(_ sdu: [UInt8], length: Int, connection: UInt64) -> [Action] {
        guard let opcode = sdu.first else { return [] }
        let all = 0..<length
        func valueFrom(_ start: Int, handle: UInt16? = nil) -> [Action] {
            guard start < length else { return [] }
            if let handle, state.serviceChangedHandles[connection]?.contains(handle) == true { return [] }
            if let handle, isCCCDValue(sdu, from: start, length: length, handle: handle, connection: connection) { return [] }
            let isName = handle.map { state.deviceNameHandles[connection]?.contains($0) ?? false } ?? false
            return [Action(range: start, all.upperBound, kind: isName ? .name : .value)]
        }
        switch opcode {
        case 0x0A, 0x0C:  // Read / Read Blob Request
            if let h = u16(sdu, 1) { state.lastRead[connection] = UInt16(h) }
            return []
        case 0x08:  // Read By Type Request: start, end, type
            state.lastReadByType[connection] = sdu.count >= 7 ? u16(sdu, 5).map(UInt16.init) : nil
            return []
        case 0x0B, 0x0D:
            return valueFrom(1, handle: state.lastRead[connection])
        case 0x0F: return valueFrom(1)
        case 0x12, 0x52:
            learnCCCD(sdu, length: length, connection: connection)
            return valueFrom(3, handle: u16(sdu, 1).map(UInt16.init))
        case 0x05:  // Find Information Response
            learnCCCD(sdu, length: length, connection: connection)
            return []
        case 0xD2: return length > 15 ? [Action(range: 3, (length - 12), kind: .value)] : []
        case 0x16, 0x17: return valueFrom(5)
        case 0x1B, 0x1D:
            learnCCCD(sdu, length: length, connection: connection)
            return valueFrom(3, handle: u16(sdu, 1).map(UInt16.init))
        case 0x09:  // Read By Type Response: length, then (handle, value) entries
            guard sdu.count >= 2, sdu[1] >= 2 else { return [] }
            let entry = Int(sdu[1])
            let type = state.lastReadByType[connection]
            var actions: [Action] = []
            var q = 2
            while q + entry <= length {
                if type == GATTAttributeType.characteristic, q + entry <= sdu.count, entry == 7 || entry == 21 {
                    // Characteristic declaration: properties, value handle, UUID.
                    if entry == 7, u16(sdu, q + 5) == 0x2A00, let h = u16(sdu, q + 3) {
                        state.deviceNameHandles[connection, default: []].insert(UInt16(h))
                    }
                    if entry == 7, u16(sdu, q + 5) == 0x2A05, let h = u16(sdu, q + 3) {
                        state.serviceChangedHandles[connection, default: []].insert(UInt16(h))
                    }
                } else if type == 0x2A00 {
                    actions.append(Action(range: q + 2, q + entry, kind: .name))
                } else if let type, !GATTAttributeType.declarations.contains(type) {
                    actions.append(Action(range: q + 2, q + entry, kind: .value))
                }
                q += entry
            }
            return actions
        case 0x23:  // Multiple Handle Value Notification: (handle, length, value) entries
            var actions: [Action] = []
            var q = 1
            while q + 4 <= sdu.count, let n = u16(sdu, q + 2) {
                actions.append(Action(range: q + 4, min(q + 4 + n, length), kind: .value))
                q += 4 + n
            }
            return actions
        case 0x21:  // Read Multiple Variable Response: (length, value) entries
            var actions: [Action] = []
            var q = 1
            while q + 2 <= sdu.count, let n = u16(sdu, q) {
                actions.append(Action(range: q + 2, min(q + 2 + n, length), kind: .value))
                q += 2 + n
            }
            return actions
        default: return []
        }
    }
}
