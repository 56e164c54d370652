import BLECapture
import BLECore
import BLEProtocols
import BLESecurity

/// What `convert --anonymize` does with attribute values.
public enum AnonymizedValues: String, Sendable, CaseIterable {
    /// Values stay as captured (device names are replaced all the same).
    case keep
    /// Every value byte becomes 0x00 (lengths kept).
    case blank
    /// Every value byte becomes a keyed hash of the value up to and including it: equal values stay equal, values
    /// with a common prefix share the prefix, lengths are kept; not reversible without the salt.
    case hash
}

/// What was replaced, for the report on stderr.
public struct AnonymizationReport: Sendable, Hashable {
    public var records = 0
    public var recordsChanged = 0
    /// Distinct device addresses and names found, and how many occurrences were replaced.
    public var addresses = 0
    public var addressReplacements = 0
    public var textAddressReplacements = 0
    public var names = 0
    public var nameReplacements = 0
    /// Keys zeroed, by kind (`LTK`, `IRK`, `CSRK`, `EDIV/Rand`, `link key`, `PIN`).
    public var keys: [String: Int] = [:]
    public var values = 0
    public var valueBytes = 0
    /// Link-layer CRCs written again after a change (only where the original CRC checked), and CRCs left as they were
    /// because they did not check before (already bad, or a connection whose CRCInit the capture does not show).
    public var crcsRecomputed = 0
    public var crcsNotRecomputed = 0

    public var summary: String {
        let keyText = keys.isEmpty ? "none" : keys.sorted { $0.key < $1.key }.map { "\($0.value) \($0.key)" }.joined(separator: ", ")
        return "anonymized \(records) records (\(recordsChanged) changed): \(addresses) device addresses "
            + "(\(addressReplacements) replaced in binary fields, \(textAddressReplacements) in text), "
            + "\(names) device names (\(nameReplacements) replaced), keys zeroed: \(keyText); "
            + "\(values) attribute values (\(valueBytes) bytes) changed; "
            + "link-layer CRCs recomputed: \(crcsRecomputed), left unchanged (did not check before): \(crcsNotRecomputed)"
    }
}

/// Replaces what identifies people and devices in a capture, keeping everything else byte for byte.
///
/// Two passes over the records: ``learn(_:)`` collects every device address and device name from the fields that carry
/// them (HCI commands, events and their completions, advertising reports and data, SMP identity address information,
/// link-layer advertising PDUs and CONNECT_IND, Linux monitor index records, addresses written as text in notes);
/// ``anonymize(_:)`` then zeroes keys (LTK, IRK, CSRK, EDIV/Rand in SMP and in HCI, link keys, PINs), applies the value
/// policy to ATT values, replaces GATT Device Name values, and replaces every occurrence of a learned address (either
/// byte order, and as `AA:BB:…` text) and of a learned name (3 bytes or longer) anywhere in any record. A pseudonym is a
/// keyed hash (SHA-256 of the salt and the original), so the same device gets the same pseudonym throughout the file and,
/// with the same salt, across files; the two most significant bits of an address are kept so that the random address
/// sub-type (static, resolvable, non-resolvable) survives. Lengths never change, so every record keeps its structure.
/// Link-layer CRCs are recomputed where the original checked. Bad input: fields cut by the end of a record are skipped.
public final class CaptureAnonymizer {
    public let values: AnonymizedValues
    public private(set) var report = AnonymizationReport()
    private let salt: [UInt8]

    /// Addresses as 48-bit numbers of their little-endian (wire) bytes.
    private var learnedAddresses: Set<UInt64> = []
    private var learnedNames: Set<[UInt8]> = []
    private var learning = true
    // Per pass.
    private var state = WalkState()
    // Built after learning.
    private var addressReplacement: [UInt64: UInt64] = [:]
    private var namesByFirstByte: [UInt8: [[UInt8]]] = [:]
    private var nameCache: [[UInt8]: [UInt8]] = [:]

    public init(salt: [UInt8], values: AnonymizedValues) {
        self.salt = salt
        self.values = values
    }

    /// Pass 1: collects the addresses and names of one record.
    public func learn(_ record: CaptureRecord) {
        precondition(learning, "learn(_:) after anonymize(_:)")
        var bytes = Array(record.bytes)
        walk(record, &bytes)
    }

    /// Pass 1 over a record already rewritten (decrypted, for instance).
    public func learn(_ record: OwnedRecord) {
        record.withRecord { learn($0) }
    }

    /// Pass 2 over a record already rewritten (decrypted, for instance).
    public func anonymize(_ record: OwnedRecord) -> OwnedRecord {
        record.withRecord { anonymize($0) }
    }

    /// The addresses learned so far (wire byte order), for tests and reports.
    public var addresses: [[UInt8]] { learnedAddresses.sorted().map(Self.bytes(of:)) }
    /// The names learned so far.
    public var names: [[UInt8]] { learnedNames.sorted { $0.lexicographicallyPrecedes($1) } }

    /// Pass 2: the record with keys zeroed, values treated, addresses and names replaced.
    public func anonymize(_ record: CaptureRecord) -> OwnedRecord {
        if learning { finishLearning() }
        var owned = OwnedRecord(record)
        var bytes = owned.bytes
        let crcCheck = linkLayerCRC(record.linkType, record.kind, bytes)
        walk(record, &bytes)
        if record.kind == .text {
            replaceTextAddresses(&bytes)
        }
        replaceAddresses(&bytes)
        replaceNames(&bytes)
        if let crcCheck, bytes != owned.bytes {
            if crcCheck.matched {
                let crc = LLCRC.compute(crcInit: crcCheck.crcInit, over: bytes[crcCheck.pdu])
                bytes[crcCheck.pdu.upperBound] = UInt8(crc & 0xFF)
                bytes[crcCheck.pdu.upperBound + 1] = UInt8((crc >> 8) & 0xFF)
                bytes[crcCheck.pdu.upperBound + 2] = UInt8((crc >> 16) & 0xFF)
                report.crcsRecomputed += 1
            } else {
                report.crcsNotRecomputed += 1
            }
        }
        report.records += 1
        if bytes != owned.bytes { report.recordsChanged += 1 }
        owned.bytes = bytes
        return owned
    }

    private func finishLearning() {
        learning = false
        state = WalkState()
        report.addresses = learnedAddresses.count
        report.names = learnedNames.count
        for a in learnedAddresses {
            let p = pseudonym(address: a)
            addressReplacement[a] = p
            addressReplacement[Self.reversed48(a)] = Self.reversed48(p)
        }
        for n in learnedNames where n.count >= 3 {
            namesByFirstByte[n[0], default: []].append(n)
        }
        for k in namesByFirstByte.keys { namesByFirstByte[k]!.sort { $0.count > $1.count } }
    }

    // MARK: Pseudonyms

    /// The pseudonym of an address (48-bit number of its wire bytes); the two top bits of its most significant byte kept.
    public func pseudonym(address: UInt64) -> UInt64 {
        var h = SHA256()
        h.update(salt)
        h.update(Array("address".utf8))
        h.update(Self.bytes(of: address))
        let d = h.finalize()
        var p: UInt64 = 0
        for i in 0..<6 { p |= UInt64(d[i]) << (8 * UInt64(i)) }
        let keep: UInt64 = 0xC0 << 40
        return (p & ~keep) | (address & keep)
    }

    /// The pseudonym of a name: `anon-` and hex digits of a keyed hash, exactly as long as the name.
    public func pseudonym(name: [UInt8]) -> [UInt8] {
        if let cached = nameCache[name] { return cached }
        var h = SHA256()
        h.update(salt)
        h.update(Array("name".utf8))
        h.update(name)
        let hex = Array(h.finalize().map { String($0, radix: 16) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined().utf8)
        let body = name.count >= 8 ? Array("anon-".utf8) + hex : hex
        var out: [UInt8] = []
        while out.count < name.count { out += body }
        out = Array(out.prefix(name.count))
        nameCache[name] = out
        return out
    }

    static func bytes(of address: UInt64) -> [UInt8] { (0..<6).map { UInt8((address >> (8 * UInt64($0))) & 0xFF) } }
    static func reversed48(_ v: UInt64) -> UInt64 {
        var out: UInt64 = 0
        for i in 0..<6 { out |= ((v >> (8 * UInt64(i))) & 0xFF) << (8 * UInt64(5 - i)) }
        return out
    }

    // MARK: Whole-record replacement (pass 2)

    private func replaceAddresses(_ bytes: inout [UInt8]) {
        guard bytes.count >= 6, !addressReplacement.isEmpty else { return }
        let original = bytes
        var i = 0
        while i + 6 <= original.count {
            var v: UInt64 = 0
            for k in 0..<6 { v |= UInt64(original[i + k]) << (8 * UInt64(k)) }
            if let p = addressReplacement[v] {
                for k in 0..<6 { bytes[i + k] = UInt8((p >> (8 * UInt64(k))) & 0xFF) }
                report.addressReplacements += 1
                i += 6
            } else {
                i += 1
            }
        }
    }

    private func replaceNames(_ bytes: inout [UInt8]) {
        guard !namesByFirstByte.isEmpty else { return }
        let original = bytes
        var i = 0
        next: while i < original.count {
            if let candidates = namesByFirstByte[original[i]] {
                for n in candidates where i + n.count <= original.count && original[i..<(i + n.count)].elementsEqual(n) {
                    let p = pseudonym(name: n)
                    bytes.replaceSubrange(i..<(i + n.count), with: p)
                    report.nameReplacements += 1
                    i += n.count
                    continue next
                }
            }
            i += 1
        }
    }

    /// `AA:BB:CC:DD:EE:FF` (either case, `:` or `-`) in text: learned, or replaced by the pseudonym in the same case.
    /// 00:00:… and FF:FF:… are placeholders, not devices (learning them would rewrite every run of six zero bytes).
    private func replaceTextAddresses(_ bytes: inout [UInt8]) {
        forEachTextAddress(bytes) { range, address in
            if address == 0 || address == 0xFFFF_FFFF_FFFF { return }
            if learning {
                learnedAddresses.insert(address)
            } else {
                let p = pseudonym(address: address)
                let lower = bytes[range].contains { (0x61...0x66).contains($0) }
                let separator = bytes[range.lowerBound + 2]
                let text = (0..<6).reversed().map { i -> String in
                    let s = String((p >> (8 * UInt64(i))) & 0xFF, radix: 16, uppercase: !lower)
                    return s.count == 1 ? "0" + s : s
                }.joined(separator: String(UnicodeScalar(separator)))
                bytes.replaceSubrange(range, with: Array(text.utf8))
                report.textAddressReplacements += 1
            }
        }
    }

    private func forEachTextAddress(_ bytes: [UInt8], _ body: (Range<Int>, UInt64) -> Void) {
        func hex(_ c: UInt8) -> UInt64? {
            switch c {
            case 0x30...0x39: UInt64(c - 0x30)
            case 0x41...0x46: UInt64(c - 0x41 + 10)
            case 0x61...0x66: UInt64(c - 0x61 + 10)
            default: nil
            }
        }
        var i = 0
        while i + 17 <= bytes.count {
            var value: UInt64 = 0
            var ok = i == 0 || hex(bytes[i - 1]) == nil
            let separator = bytes[i + 2]
            if separator != 0x3A && separator != 0x2D { ok = false }
            var k = 0
            while ok && k < 6 {
                let p = i + 3 * k
                if let h = hex(bytes[p]), let l = hex(bytes[p + 1]), k == 5 || bytes[p + 2] == separator {
                    value = value << 8 | (h << 4 | l)
                } else {
                    ok = false
                }
                k += 1
            }
            if ok, i + 17 < bytes.count, hex(bytes[i + 17]) != nil || bytes[i + 17] == separator { ok = false }
            if ok {
                body(i..<(i + 17), value)  // text is most significant byte first, as is the 48-bit number
                i += 17
            } else {
                i += 1
            }
        }
    }

    // MARK: Structure

    private struct Pending {
        var remaining: Int
        var sduOffset: Int
        var actions: [Action]
        var hashes: [Int: SHA256] = [:]
    }

    private enum Kind: Hashable { case zero(String), value, name }
    private struct Action {
        var range: Range<Int>
        var kind: Kind
        /// An empty range where the wire's lengths contradict each other (never a trap).
        init(range lower: Int, _ upper: Int, kind: Kind) {
            range = lower..<max(lower, upper)
            self.kind = kind
        }
    }

    private struct WalkState {
        /// Partial L2CAP PDUs by (connection, direction).
        var pending: [UInt64: Pending] = [:]
        var deviceNameHandles: [UInt64: Set<UInt16>] = [:]
        /// Service Changed (0x2A05) value handles: their values are the handle range the server changed, the GATT
        /// cache's structure rather than anyone's data, and stay as captured (the analysis forgets handles by them).
        var serviceChangedHandles: [UInt64: Set<UInt16>] = [:]
        var lastRead: [UInt64: UInt16] = [:]
        var lastReadByType: [UInt64: UInt16] = [:]
        /// CRCInit of each link-layer connection (access address), from CONNECT_IND.
        var crcInit: [UInt32: UInt32] = [:]
    }

    private struct CRCCheck { var pdu: Range<Int>; var crcInit: UInt32; var matched: Bool }

    private func linkLayerCRC(_ linkType: UInt32, _ kind: RecordKind, _ bytes: [UInt8]) -> CRCCheck? {
        guard kind == .linkLayer else { return nil }
        return bytes.withUnsafeBytes { raw -> CRCCheck? in
            guard let air = try? LLAirPacket(linkType: linkType, bytes: raw) else { return nil }
            let start = air.packet.offset + 4
            let pdu = start..<(start + air.packet.pdu.count)
            guard pdu.upperBound + 3 <= bytes.count else { return nil }
            let crcInit: UInt32? =
                air.packet.accessAddress.isAdvertising
                ? 0x55_5555
                : state.crcInit[air.packet.accessAddress.rawValue]
            guard let crcInit else { return CRCCheck(pdu: pdu, crcInit: 0, matched: false) }
            return CRCCheck(pdu: pdu, crcInit: crcInit, matched: LLCRC.compute(crcInit: crcInit, over: bytes[pdu]) == air.packet.crc)
        }
    }

    private func walk(_ record: CaptureRecord, _ bytes: inout [UInt8]) {
        switch record.kind {
        case .command: command(&bytes)
        case .event: event(&bytes)
        case .acl: acl(&bytes, direction: record.direction)
        case .linkLayer: linkLayer(&bytes, linkType: record.linkType)
        case .text: if learning { replaceTextAddresses(&bytes) }
        case .monitor:
            // Linux monitor New Index (0): type, bus, address, name; Index Info (10): address, manufacturer.
            if record.rawType == 0 { address(bytes, 2) } else if record.rawType == 10 { address(bytes, 0) }
        default: break
        }
    }

    private func address(_ bytes: [UInt8], _ offset: Int) {
        guard learning, offset >= 0, offset + 6 <= bytes.count else { return }
        var v: UInt64 = 0
        for k in 0..<6 { v |= UInt64(bytes[offset + k]) << (8 * UInt64(k)) }
        if v != 0 && v != 0xFFFF_FFFF_FFFF { learnedAddresses.insert(v) }
    }

    /// A name field (NUL-terminated or padded): learned, or replaced by its pseudonym.
    private func name(_ bytes: inout [UInt8], _ range: Range<Int>) {
        let r = range.clamped(to: 0..<bytes.count)
        guard !r.isEmpty else { return }
        let end = bytes[r].firstIndex(of: 0) ?? r.upperBound
        guard end > r.lowerBound else { return }
        let n = Array(bytes[r.lowerBound..<end])
        if learning {
            learnedNames.insert(n)
        } else {
            let p = pseudonym(name: n)
            if p != n { bytes.replaceSubrange(r.lowerBound..<end, with: p); report.nameReplacements += 1 }
        }
    }

    private func key(_ bytes: inout [UInt8], _ offset: Int, _ length: Int, _ kind: String) {
        guard !learning, offset >= 0, offset + length <= bytes.count else { return }
        if bytes[offset..<(offset + length)].contains(where: { $0 != 0 }) {
            for i in offset..<(offset + length) { bytes[i] = 0 }
        }
        report.keys[kind, default: 0] += 1
    }

    /// Advertising / EIR data: names (shortened 0x08, complete 0x09) and addresses (0x17, 0x18 target, 0x1B LE address).
    private func advertisingData(_ bytes: inout [UInt8], from start: Int, to limit: Int) {
        var i = max(start, 0)
        let end = min(limit, bytes.count)
        while i < end {
            let length = Int(bytes[i])
            // A structure longer than what is left (a bad-CRC packet, a cut record) is read as far as it goes:
            // decoders such as tshark show what is there, so it is anonymized too.
            guard length > 0, i + 2 <= end else { break }
            let type = bytes[i + 1]
            let data = (i + 2)..<min(i + 1 + length, end)
            switch type {
            case 0x08, 0x09: name(&bytes, data)
            case 0x17, 0x18:
                var a = data.lowerBound
                while a + 6 <= data.upperBound { address(bytes, a); a += 6 }
            case 0x1B: address(bytes, data.lowerBound)
            default: break
            }
            i += 1 + length
        }
    }

    private func u16(_ bytes: [UInt8], _ offset: Int) -> Int? {
        offset >= 0 && offset + 2 <= bytes.count ? Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 : nil
    }

    // MARK: HCI

    /// Core Spec Vol 4, Part E, 7: the parameters of the commands that carry addresses, names or keys.
    private func command(_ bytes: inout [UInt8]) {
        guard let opcode = u16(bytes, 0), bytes.count >= 3 else { return }
        let p = 3
        switch opcode {
        case 0x0405, 0x0409, 0x040A, 0x040C, 0x040E, 0x0419, 0x041A, 0x042B, 0x042C, 0x042D, 0x042E, 0x042F, 0x0434,
            0x0C0D, 0x0C12:
            address(bytes, p)  // classic commands whose first parameter is BD_ADDR
        case 0x040B: address(bytes, p); key(&bytes, p + 6, 16, "link key")
        case 0x040D: address(bytes, p); key(&bytes, p + 7, 16, "PIN")
        case 0x0C11:  // Write Stored Link Key: count, then (BD_ADDR, key) each
            if p < bytes.count {
                for i in 0..<Int(bytes[p]) { address(bytes, p + 1 + 22 * i); key(&bytes, p + 7 + 22 * i, 16, "link key") }
            }
        case 0x0C13: name(&bytes, p..<(p + 248))  // Write Local Name
        case 0x0C52: advertisingData(&bytes, from: p + 1, to: bytes.count)  // Write Extended Inquiry Response
        case 0x2005: address(bytes, p)  // LE Set Random Address
        case 0x2006: address(bytes, p + 7)  // LE Set Advertising Parameters: peer address
        case 0x2008, 0x2009:  // LE Set Advertising / Scan Response Data
            if p < bytes.count { advertisingData(&bytes, from: p + 1, to: (p + 1 + Int(bytes[p]))) }
        case 0x200D: address(bytes, p + 6)  // LE Create Connection
        case 0x2011, 0x2012, 0x2028, 0x202B, 0x202C, 0x204E: address(bytes, p + 1)
        case 0x2017: key(&bytes, p, 16, "LE Encrypt key")
        case 0x2019: key(&bytes, p + 2, 10, "EDIV/Rand"); key(&bytes, p + 12, 16, "LTK")  // LE Enable Encryption
        case 0x201A: key(&bytes, p + 2, 16, "LTK")  // LE LTK Request Reply
        case 0x2027: address(bytes, p + 1); key(&bytes, p + 7, 16, "IRK"); key(&bytes, p + 23, 16, "IRK")
        case 0x2035: address(bytes, p + 1)  // LE Set Advertising Set Random Address
        case 0x2036: address(bytes, p + 12)  // LE Set Extended Advertising Parameters: peer address
        case 0x2037, 0x2038:  // LE Set Extended Advertising / Scan Response Data
            if p + 3 < bytes.count { advertisingData(&bytes, from: p + 4, to: (p + 4 + Int(bytes[p + 3]))) }
        case 0x2043: address(bytes, p + 3)  // LE Extended Create Connection
        case 0x2044, 0x2046: address(bytes, p + 3)  // LE Periodic Advertising Create Sync / Add to list
        default: break
        }
    }

    private func event(_ bytes: inout [UInt8]) {
        guard bytes.count >= 2 else { return }
        let p = 2
        switch bytes[0] {
        case 0x03: address(bytes, p + 3)  // Connection Complete
        case 0x04, 0x16, 0x17, 0x31, 0x32, 0x33, 0x34, 0x3D, 0x3C: address(bytes, p)
        case 0x12, 0x36: address(bytes, p + 1)  // Role Change, Simple Pairing Complete
        case 0x07: address(bytes, p + 1); name(&bytes, (p + 7)..<(p + 7 + 248))  // Remote Name Request Complete
        case 0x18: address(bytes, p); key(&bytes, p + 6, 16, "link key")  // Link Key Notification
        case 0x15:  // Return Link Keys
            if p < bytes.count {
                for i in 0..<Int(bytes[p]) { address(bytes, p + 1 + 22 * i); key(&bytes, p + 7 + 22 * i, 16, "link key") }
            }
        case 0x02:  // Inquiry Result: count, then the addresses
            if p < bytes.count { for i in 0..<Int(bytes[p]) { address(bytes, p + 1 + 6 * i) } }
        case 0x22:  // Inquiry Result with RSSI: 14 bytes each
            if p < bytes.count { for i in 0..<Int(bytes[p]) { address(bytes, p + 1 + 14 * i) } }
        case 0x2F: address(bytes, p + 1); advertisingData(&bytes, from: p + 15, to: bytes.count)  // Extended Inquiry Result
        case 0x0E: commandComplete(&bytes)
        case 0x3E: leMeta(&bytes)
        default: break
        }
    }

    private func commandComplete(_ bytes: inout [UInt8]) {
        guard let opcode = u16(bytes, 3) else { return }
        let r = 5  // return parameters; r = status
        switch opcode {
        case 0x1009, 0x202B, 0x202C: address(bytes, r + 1)  // Read BD_ADDR, Read Peer/Local Resolvable Address
        case 0x0C14: name(&bytes, (r + 1)..<(r + 1 + 248))  // Read Local Name
        case 0x2017: key(&bytes, r + 1, 16, "LE Encrypt result")
        default: break
        }
    }

    private func leMeta(_ bytes: inout [UInt8]) {
        guard bytes.count >= 3 else { return }
        let p = 2
        switch bytes[p] {
        case 0x01: address(bytes, p + 6)
        case 0x0A, 0x29: address(bytes, p + 6); address(bytes, p + 12); address(bytes, p + 18)
        case 0x02:  // Advertising Report: type, address type, address, length, data, RSSI each
            guard p + 1 < bytes.count else { return }
            var q = p + 2
            for _ in 0..<Int(bytes[p + 1]) {
                guard q + 9 <= bytes.count else { return }
                address(bytes, q + 2)
                let length = Int(bytes[q + 8])
                advertisingData(&bytes, from: q + 9, to: (q + 9 + length))
                q += 10 + length
            }
        case 0x0D:  // Extended Advertising Report
            guard p + 1 < bytes.count else { return }
            var q = p + 2
            for _ in 0..<Int(bytes[p + 1]) {
                guard q + 24 <= bytes.count else { return }
                address(bytes, q + 3)
                address(bytes, q + 17)
                let length = Int(bytes[q + 23])
                advertisingData(&bytes, from: q + 24, to: (q + 24 + length))
                q += 24 + length
            }
        case 0x0B:  // Directed Advertising Report: 16 bytes each
            guard p + 1 < bytes.count else { return }
            for i in 0..<Int(bytes[p + 1]) { address(bytes, p + 2 + 16 * i + 2); address(bytes, p + 2 + 16 * i + 9) }
        case 0x13: address(bytes, p + 3)  // Scan Request Received
        case 0x0E, 0x24: address(bytes, p + 6)  // Periodic Advertising Sync Established (v1/v2)
        default: break
        }
    }

    private func acl(_ bytes: inout [UInt8], direction: Direction) {
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

    private func linkLayer(_ bytes: inout [UInt8], linkType: UInt32) {
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
            case 0, 2, 4, 6: address(bytes, pl); advertisingData(&bytes, from: pl + 6, to: end)
            case 1, 3: address(bytes, pl); address(bytes, pl + 6)
            case 5:  // CONNECT_IND: InitA, AdvA, LLData (access address, CRCInit, …)
                address(bytes, pl); address(bytes, pl + 6)
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
                    if flags & 0x01 != 0 { address(bytes, q); q += 6 }
                    if flags & 0x02 != 0 { address(bytes, q) }
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

    private func l2capStart(_ bytes: inout [UInt8], _ data: Range<Int>, key: UInt64, connection: UInt64) {
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

    private func continuation(_ bytes: inout [UInt8], _ data: Range<Int>, key: UInt64) {
        guard var pending = state.pending[key] else { return }
        apply(&bytes, data, &pending)
        state.pending[key] = pending.remaining > 0 ? pending : nil
    }

    /// Applies the actions to the part of the SDU that is in `data`.
    private func apply(_ bytes: inout [UInt8], _ data: Range<Int>, _ pending: inout Pending) {
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
    private func smp(_ sdu: [UInt8], length: Int) -> [Action] {
        guard let code = sdu.first else { return [] }
        switch code {
        case 0x06: return [Action(range: 1, 17, kind: .zero("LTK"))]
        case 0x07: return [Action(range: 1, 11, kind: .zero("EDIV/Rand"))]
        case 0x08: return [Action(range: 1, 17, kind: .zero("IRK"))]
        case 0x0A: return [Action(range: 1, 17, kind: .zero("CSRK"))]
        case 0x09:
            address(sdu, 2)  // Identity Address Information: type, address (learned; replaced with the others)
            return []
        default: return []
        }
    }

    /// Core Spec Vol 3, Part F, 3.4: where a PDU carries attribute values; Device Name (0x2A00) values are names.
    private func att(_ sdu: [UInt8], length: Int, connection: UInt64) -> [Action] {
        guard let opcode = sdu.first else { return [] }
        let all = 0..<length
        func valueFrom(_ start: Int, handle: UInt16? = nil) -> [Action] {
            guard start < length else { return [] }
            if let handle, state.serviceChangedHandles[connection]?.contains(handle) == true { return [] }
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
            return valueFrom(3, handle: u16(sdu, 1).map(UInt16.init))
        case 0xD2: return length > 15 ? [Action(range: 3, (length - 12), kind: .value)] : []
        case 0x16, 0x17: return valueFrom(5)
        case 0x1B, 0x1D: return valueFrom(3, handle: u16(sdu, 1).map(UInt16.init))
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

extension OwnedRecord {
    /// The record as a ``CaptureRecord`` borrowing its bytes (same original length).
    func withRecord<R>(_ body: (CaptureRecord) -> R) -> R {
        bytes.withUnsafeBytes { raw in
            body(
                CaptureRecord(
                    frame: frame, timestamp: timestamp, direction: direction, kind: kind, controllerIndex: controllerIndex,
                    originalLength: max(originalLength, raw.count), includedLength: raw.count, fileOffset: 0,
                    rawType: rawType, linkType: linkType, bytes: raw))
        }
    }
}
