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
/// policy to ATT values, replaces GATT Device Name values, replaces every learned address in the address fields it walks
/// and every occurrence of a distinctive one (``isDistinctive(_:)``: either byte order, and as `AA:BB:…` text) and of a
/// learned name (3 bytes or longer) anywhere in any record. A pseudonym is a
/// keyed hash (SHA-256 of the salt and the original), so the same device gets the same pseudonym throughout the file and,
/// with the same salt, across files; the two most significant bits of an address are kept so that the random address
/// sub-type (static, resolvable, non-resolvable) survives. Lengths never change, so every record keeps its structure.
/// Link-layer CRCs are recomputed where the original checked. Bad input: fields cut by the end of a record are skipped.
public final class CaptureAnonymizer {
    public let values: AnonymizedValues
    public internal(set) var report = AnonymizationReport()
    let salt: [UInt8]

    /// Addresses as 48-bit numbers of their little-endian (wire) bytes.
    private var learnedAddresses: Set<UInt64> = []
    private var learnedNames: Set<[UInt8]> = []
    var learning = true
    /// Client Characteristic Configuration handles per connection, learned in pass 1 (``att(_:length:connection:)``):
    /// their values are kept.
    var cccdHandles: [UInt64: Set<UInt16>] = [:]
    // Per pass.
    var state = WalkState()
    // Built after learning.
    /// Every learned address (wire order) → its pseudonym, for the address fields the walk finds.
    private var fieldReplacement: [UInt64: UInt64] = [:]
    /// The distinctive ones (``isDistinctive(_:)``), in both byte orders, for the whole-record scan.
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
        } else {
            replaceLearnedTextAddresses(&bytes)
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
            fieldReplacement[a] = p
            guard Self.isDistinctive(a) else { continue }
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
        forEachTextAddress(bytes, boundaries: true) { range, address in
            if address == 0 || address == 0xFFFF_FFFF_FFFF { return true }
            if learning {
                learnedAddresses.insert(address)
            } else {
                writeText(of: pseudonym(address: address), over: range, in: &bytes)
            }
            return true
        }
    }

    /// A distinctive learned address written as text inside any other record, which only the device's own protocol
    /// knows to be text (the corpus: a printer's SPP status line, a headset app's RFCOMM device list, an advertiser's
    /// service data): replaced like its bytes are, by the whole-record scan's pseudonym. Text no field names is left
    /// (blescope cannot know it to be an address); so are placeholders, as in the binary scan. A known address needs
    /// no boundary: the headset app's list runs a name into it (`Nexus 564:C2:DE:DA:55:5B`, the Sony log).
    private func replaceLearnedTextAddresses(_ bytes: inout [UInt8]) {
        guard bytes.count >= 17, !addressReplacement.isEmpty else { return }
        forEachTextAddress(bytes, boundaries: false) { range, address in
            guard let p = addressReplacement[address] else { return false }
            writeText(of: p, over: range, in: &bytes)
            return true
        }
    }

    /// `address` (most significant byte first) over the 17 characters of `range`, in their case and separator.
    private func writeText(of address: UInt64, over range: Range<Int>, in bytes: inout [UInt8]) {
        let lower = bytes[range].contains { (0x61...0x66).contains($0) }
        let separator = bytes[range.lowerBound + 2]
        let text = (0..<6).reversed().map { i -> String in
            let s = String((address >> (8 * UInt64(i))) & 0xFF, radix: 16, uppercase: !lower)
            return s.count == 1 ? "0" + s : s
        }.joined(separator: String(UnicodeScalar(separator)))
        bytes.replaceSubrange(range, with: Array(text.utf8))
        report.textAddressReplacements += 1
    }

    /// Calls `body` with each `AA:BB:CC:DD:EE:FF` (or `-`) text's range and value; with `boundaries`, only where no hex
    /// digit or separator runs on either side. `body` says whether it took the text (the scan then goes on after it).
    private func forEachTextAddress(_ bytes: [UInt8], boundaries: Bool, _ body: (Range<Int>, UInt64) -> Bool) {
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
            var ok = !boundaries || i == 0 || hex(bytes[i - 1]) == nil
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
            if ok, boundaries, i + 17 < bytes.count, hex(bytes[i + 17]) != nil || bytes[i + 17] == separator { ok = false }
            // Text is most significant byte first, as is the 48-bit number.
            if ok, body(i..<(i + 17), value) {
                i += 17
            } else {
                i += 1
            }
        }
    }

    // MARK: Structure

    struct Pending {
        var remaining: Int
        var sduOffset: Int
        var actions: [Action]
        var hashes: [Int: SHA256] = [:]
    }

    enum Kind: Hashable { case zero(String), value, name }
    struct Action {
        var range: Range<Int>
        var kind: Kind
        /// An empty range where the wire's lengths contradict each other (never a trap).
        init(range lower: Int, _ upper: Int, kind: Kind) {
            range = lower..<max(lower, upper)
            self.kind = kind
        }
    }

    struct WalkState {
        /// Partial L2CAP PDUs by (connection, direction).
        var pending: [UInt64: Pending] = [:]
        var deviceNameHandles: [UInt64: Set<UInt16>] = [:]
        /// Service Changed (0x2A05) value handles: their values are the handle range the server changed, the GATT
        /// cache's structure rather than anyone's data, and stay as captured (the analysis forgets handles by them).
        var serviceChangedHandles: [UInt64: Set<UInt16>] = [:]
        var lastRead: [UInt64: UInt16] = [:]
        var lastReadByType: [UInt64: UInt16] = [:]
        /// Writes of a CCCD-shaped value (01 00, 02 00, 03 00) per connection and handle, waiting for a notification
        /// or indication of the handle before it (pass 1).
        var cccdWrites: [UInt64: [UInt16: UInt8]] = [:]
        /// CRCInit of each link-layer connection (access address), from CONNECT_IND.
        var crcInit: [UInt32: UInt32] = [:]
    }

    struct CRCCheck { var pdu: Range<Int>; var crcInit: UInt32; var matched: Bool }

    func linkLayerCRC(_ linkType: UInt32, _ kind: RecordKind, _ bytes: [UInt8]) -> CRCCheck? {
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
            if record.rawType == 0 { address(&bytes, 2) } else if record.rawType == 10 { address(&bytes, 0) }
        case .other: lmpTraceAddress(record, &bytes)
        default: break
        }
    }

    /// A controller's LMP trace record (``BroadcomLMPTrace``) names its peer by the low 4 bytes of its address, most
    /// significant first, at byte 5 of the trace: replaced by the pseudonym's (pass 2), so the trace neither leaks the
    /// address nor stops naming the link its pseudonym names.
    private func lmpTraceAddress(_ record: CaptureRecord, _ bytes: inout [UInt8]) {
        guard !learning, let payload = BroadcomLMPTrace.payload(record), payload.first.map({ $0 <= 1 }) == true,
            payload.count >= 9
        else { return }
        let at = bytes.count - payload.count + 5
        let low = BroadcomLMPTrace.low32(bytes, at: at)
        guard let (_, p) = fieldReplacement.first(where: { UInt32(truncatingIfNeeded: $0.key) == low }) else { return }
        for k in 0..<4 { bytes[at + k] = UInt8(truncatingIfNeeded: p >> (8 * UInt64(3 - k))) }
        report.addressReplacements += 1
    }

    /// A BD_ADDR field the walk found by the protocol's layout: learned (pass 1), or replaced in place by its pseudonym
    /// (pass 2), whatever the address looks like, placeholders included.
    func address(_ bytes: inout [UInt8], _ offset: Int) {
        guard offset >= 0, offset + 6 <= bytes.count else { return }
        if learning { return learnAddress(bytes, offset) }
        var v: UInt64 = 0
        for k in 0..<6 { v |= UInt64(bytes[offset + k]) << (8 * UInt64(k)) }
        guard let p = fieldReplacement[v] else { return }
        for k in 0..<6 { bytes[offset + k] = UInt8((p >> (8 * UInt64(k))) & 0xFF) }
        report.addressReplacements += 1
    }

    /// A BD_ADDR in bytes the walk cannot write back (an SDU gathered from fragments): learned only; pass 2's
    /// whole-record scan replaces it where it is distinctive.
    func learnAddress(_ bytes: [UInt8], _ offset: Int) {
        guard learning, offset >= 0, offset + 6 <= bytes.count else { return }
        var v: UInt64 = 0
        for k in 0..<6 { v |= UInt64(bytes[offset + k]) << (8 * UInt64(k)) }
        if v != 0 && v != 0xFFFF_FFFF_FFFF { learnedAddresses.insert(v) }
    }

    /// Whether an address is distinctive enough to be searched for in any bytes: at least 3 of its 6 bytes are
    /// neither 0x00 nor 0xFF. A stack's placeholder such as 00:00:00:00:00:06 (Samsung's resolving-list entries) is
    /// also the bytes of a length, a status and a handle followed by zeros: searched for anywhere, it rewrote a Command
    /// Complete's opcode and a command's length (corpus yeelock log, frames 65 and 68). It is replaced where the walk
    /// finds it in an address field, and nowhere else; a placeholder names no device.
    static func isDistinctive(_ address: UInt64) -> Bool {
        (0..<6).filter { i in
            let b = (address >> (8 * UInt64(i))) & 0xFF
            return b != 0 && b != 0xFF
        }.count >= 3
    }

    /// A name field (NUL-terminated or padded): learned, or replaced by its pseudonym.
    func name(_ bytes: inout [UInt8], _ range: Range<Int>) {
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

    func key(_ bytes: inout [UInt8], _ offset: Int, _ length: Int, _ kind: String) {
        guard !learning, offset >= 0, offset + length <= bytes.count else { return }
        if bytes[offset..<(offset + length)].contains(where: { $0 != 0 }) {
            for i in offset..<(offset + length) { bytes[i] = 0 }
        }
        report.keys[kind, default: 0] += 1
    }

    /// Advertising / EIR data: names (shortened 0x08, complete 0x09) and addresses (0x17, 0x18 target, 0x1B LE address).
    func advertisingData(_ bytes: inout [UInt8], from start: Int, to limit: Int) {
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
                while a + 6 <= data.upperBound { address(&bytes, a); a += 6 }
            case 0x1B: address(&bytes, data.lowerBound + Self.leDeviceAddressOffset(bytes[data]))
            default: break
            }
            i += 1 + length
        }
    }

    /// Where the address starts in an LE Bluetooth Device Address structure (AD type 0x1B, 7 octets). The Supplement
    /// to the Core Specification (Part A, 1.16) puts the 6-octet address first and the type octet last (bit 0; bits 1–7
    /// reserved); Wireshark, and devices in the field, read the type octet first (the corpus novax log's scooter
    /// advertises `00 87 32 0c 26 8d 60`, type 0 then the 60:8d:26:0c:32:87 it connects with over BR/EDR). The
    /// layout whose type octet has its reserved bits clear wins; the address read at the wrong offset would be a
    /// "device" made of a type byte and five address bytes, and replacing it everywhere corrupted a status byte before
    /// the real address (frames 2765, 2770 of that log).
    static func leDeviceAddressOffset(_ data: ArraySlice<UInt8>) -> Int {
        guard data.count >= 7 else { return 0 }
        let first = data[data.startIndex], last = data[data.startIndex + 6]
        return last & 0xFE != 0 && first & 0xFE == 0 ? 1 : 0
    }

    func u16(_ bytes: [UInt8], _ offset: Int) -> Int? {
        offset >= 0 && offset + 2 <= bytes.count ? Int(bytes[offset]) | Int(bytes[offset + 1]) << 8 : nil
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
