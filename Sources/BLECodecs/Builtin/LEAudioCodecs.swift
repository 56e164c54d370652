import BLECore

// The audio profiles' characteristics (PACS 1.0 3, ASCS 1.0 4–5, BASS 1.0 3), decoded with the tables of
// ``LEAudioTables``. Each value's fields come out in wire order; lists of records (PAC records, ASEs in a control point
// operation, subgroups) as `.list` of `.nested` fields.

private typealias T = LEAudioTables

private func u8(_ r: inout ByteReader) throws(DecodeError) -> Int64 { Int64(try r.readUInt8()) }
private func u16(_ r: inout ByteReader) throws(DecodeError) -> Int64 { Int64(try UInt16(parsingLittleEndian: &r)) }
private func u24(_ r: inout ByteReader) throws(DecodeError) -> Int64 {
    Int64(try r.readUInt8()) | Int64(try r.readUInt8()) << 8 | Int64(try r.readUInt8()) << 16
}
private func u32(_ r: inout ByteReader) throws(DecodeError) -> Int64 { Int64(try UInt32(parsingLittleEndian: &r)) }

private func flags(_ v: Int64, _ names: [String?]) -> FieldValue {
    var set: [String] = []
    for (bit, n) in names.enumerated() where v & (1 << bit) != 0 { set.append(n ?? "bit\(bit)") }
    for bit in names.count..<63 where v & (1 << bit) != 0 { set.append("bit\(bit)") }
    return .flags(v, set)
}

private func named(_ v: Int64, _ names: [Int64: String]) -> FieldValue { .named(v, names[v]) }

/// Codec_ID (Assigned Numbers 2.11): coding format, company ID, vendor codec ID.
private func codecID(_ r: inout ByteReader, _ s: inout FieldSink) throws(DecodeError) {
    let at = r.offset
    let format = try u8(&r)
    let company = try u16(&r), vendor = try u16(&r)
    s.add("codecId", named(format, T.codingFormats), at: at)
    if format == 0xFF {
        s.add("companyId", .int(company), at: at + 1)
        s.add("vendorCodecId", .int(vendor), at: at + 3)
    }
}

/// A length-prefixed run of LTV structures (length, type, value), decoded by `decodeLTV`.
private func ltvs(
    _ r: inout ByteReader, _ s: inout FieldSink, _ name: String, _ value: (Int64, inout ByteReader) throws(DecodeError) -> DecodedField
) throws(DecodeError) {
    let at = r.offset
    var block = try r.slice(Int(try r.readUInt8()))
    var items: [DecodedField] = []
    while !block.isAtEnd {
        let length = Int(try block.readUInt8())
        guard length >= 1 else { continue }
        let type = try u8(&block)
        var v = try block.slice(length - 1)
        items.append(try value(type, &v))
    }
    s.add(name, .list(items), at: at)
}

/// One Codec_Specific_Configuration LTV (6.12.5): LC3 figures in units people read (Hz, µs, octets).
private func configurationLTV(_ type: Int64, _ v: inout ByteReader) throws(DecodeError) -> DecodedField {
    let name = T.configurationTypes[type] ?? "type\(type)"
    switch type {
    case 0x01:
        let raw = try u8(&v)
        return T.samplingFrequencies[raw].map { DecodedField(name, .int($0), unit: "Hz") } ?? DecodedField(name, .named(raw, nil))
    case 0x02:
        let raw = try u8(&v)
        return T.frameDurations[raw].map { DecodedField(name, .int($0), unit: "µs") } ?? DecodedField(name, .named(raw, nil))
    case 0x03: return DecodedField(name, flags(try u32(&v), T.locationBits))
    case 0x04: return DecodedField(name, .int(try u16(&v)), unit: "octets")
    case 0x05: return DecodedField(name, .int(try u8(&v)))
    default: return DecodedField(name, .bytes(v.readRemaining()))
    }
}

/// One Codec_Specific_Capabilities LTV (6.12.4).
private func capabilityLTV(_ type: Int64, _ v: inout ByteReader) throws(DecodeError) -> DecodedField {
    let name = T.capabilityTypes[type] ?? "type\(type)"
    switch type {
    case 0x01: return DecodedField(name, flags(try u16(&v), T.supportedFrequencyBits))
    case 0x02: return DecodedField(name, flags(try u8(&v), T.supportedDurationBits))
    case 0x03: return DecodedField(name, flags(try u8(&v), (1...8).map { "\($0)ch" }))
    case 0x04:
        let lo = try u16(&v), hi = try u16(&v)
        return DecodedField(name, .nested([DecodedField("min", .int(lo)), DecodedField("max", .int(hi))]), unit: "octets")
    case 0x05: return DecodedField(name, .int(try u8(&v)))
    default: return DecodedField(name, .bytes(v.readRemaining()))
    }
}

/// One Metadata LTV (6.12.6).
private func metadataLTV(_ type: Int64, _ v: inout ByteReader) throws(DecodeError) -> DecodedField {
    let name = T.metadataTypes[type] ?? "type\(type)"
    switch type {
    case 0x01, 0x02: return DecodedField(name, flags(try u16(&v), T.contextBits))
    case 0x03, 0x04, 0x07, 0x0B: return DecodedField(name, .string(String(decoding: v.readRemaining(), as: UTF8.self)))
    default: return DecodedField(name, .bytes(v.readRemaining()))
    }
}

/// PAC records (PACS 3.1): Number_of_PAC_records, then Codec_ID, capabilities, metadata per record.
private func pacRecords(_ r: inout ByteReader, _ s: inout FieldSink) throws(DecodeError) {
    let n = try u8(&r)
    s.add("records", .int(n), at: 0)
    var records: [DecodedField] = []
    for i in 0..<n {
        var inner = FieldSink()
        try codecID(&r, &inner)
        try ltvs(&r, &inner, "capabilities", capabilityLTV)
        try ltvs(&r, &inner, "metadata", metadataLTV)
        records.append(DecodedField("record\(i)", .nested(inner.fields)))
    }
    s.add("pac", .list(records))
}

/// Available or Supported Audio Contexts (PACS 3.5, 3.6): sink contexts, then source contexts.
private func contexts(_ r: inout ByteReader, _ s: inout FieldSink) throws(DecodeError) {
    s.add("sink", flags(try u16(&r), T.contextBits), at: 0)
    s.add("source", flags(try u16(&r), T.contextBits), at: 2)
}

extension SIGCodec {
    /// The LE Audio characteristics: PACS, ASCS (``LEAudioASCS``), BASS (``LEAudioBASS``).
    static let leAudio: [SIGCodec] = [
        SIGCodec(0x2BC9, "Sink PAC") { r, s throws(DecodeError) in try pacRecords(&r, &s) },
        SIGCodec(0x2BCB, "Source PAC") { r, s throws(DecodeError) in try pacRecords(&r, &s) },
        SIGCodec(0x2BCA, "Sink Audio Locations") { r, s throws(DecodeError) in s.add("locations", flags(try u32(&r), T.locationBits), at: 0)
        },
        SIGCodec(0x2BCC, "Source Audio Locations") { r, s throws(DecodeError) in
            s.add("locations", flags(try u32(&r), T.locationBits), at: 0)
        },
        SIGCodec(0x2BCD, "Available Audio Contexts") { r, s throws(DecodeError) in try contexts(&r, &s) },
        SIGCodec(0x2BCE, "Supported Audio Contexts") { r, s throws(DecodeError) in try contexts(&r, &s) },
        SIGCodec(0x2BC4, "Sink ASE") { r, s throws(DecodeError) in try aseValue(&r, &s) },
        SIGCodec(0x2BC5, "Source ASE") { r, s throws(DecodeError) in try aseValue(&r, &s) },
        SIGCodec(
            0x2BC6, "ASE Control Point",
            contextual: { r, s, context throws(DecodeError) in
                if context.operation.isServerInitiated { try aseResponse(&r, &s) } else { try aseOperation(&r, &s) }
            }),
        SIGCodec(0x2BC7, "Broadcast Audio Scan Control Point") { r, s throws(DecodeError) in try bassOperation(&r, &s) },
        SIGCodec(0x2BC8, "Broadcast Receive State") { r, s throws(DecodeError) in try receiveState(&r, &s) },
    ]
}

// MARK: - ASCS

/// An ASE characteristic (ASCS 4.1): ASE_ID, ASE_State, then the state's parameters (4.2–4.4).
private func aseValue(_ r: inout ByteReader, _ s: inout FieldSink) throws(DecodeError) {
    s.add("aseId", .int(try u8(&r)), at: 0)
    let state = try u8(&r)
    s.add("state", named(state, T.aseStates), at: 1)
    switch state {
    case 1:
        s.add("framing", named(try u8(&r), [0: "unframed supported", 1: "unframed not supported"]), at: 2)
        s.add("preferredPhy", flags(try u8(&r), ["1M", "2M", "Coded"]), at: 3)
        s.add("preferredRetransmissionNumber", .int(try u8(&r)), at: 4)
        s.add("maxTransportLatency", .int(try u16(&r)), unit: "ms", at: 5)
        s.add("presentationDelayMin", .int(try u24(&r)), unit: "µs", at: 7)
        s.add("presentationDelayMax", .int(try u24(&r)), unit: "µs", at: 10)
        s.add("preferredPresentationDelayMin", .int(try u24(&r)), unit: "µs", at: 13)
        s.add("preferredPresentationDelayMax", .int(try u24(&r)), unit: "µs", at: 16)
        try codecID(&r, &s)
        try ltvs(&r, &s, "codecConfiguration", configurationLTV)
    case 2:
        try qosFields(&r, &s, withTarget: false)
    case 3, 4, 5:
        s.add("cigId", .int(try u8(&r)), at: 2)
        s.add("cisId", .int(try u8(&r)), at: 3)
        try ltvs(&r, &s, "metadata", metadataLTV)
    default:
        break
    }
}

/// The QoS parameters (ASCS 4.3, 5.2): CIG_ID, CIS_ID, SDU_Interval, Framing, PHY, Max_SDU, Retransmission_Number,
/// Max_Transport_Latency, Presentation_Delay.
private func qosFields(_ r: inout ByteReader, _ s: inout FieldSink, withTarget: Bool) throws(DecodeError) {
    s.add("cigId", .int(try u8(&r)), at: r.offset - 1)
    s.add("cisId", .int(try u8(&r)))
    s.add("sduInterval", .int(try u24(&r)), unit: "µs")
    s.add("framing", named(try u8(&r), [0: "unframed", 1: "framed"]))
    s.add("phy", flags(try u8(&r), ["1M", "2M", "Coded"]))
    s.add("maxSdu", .int(try u16(&r)), unit: "octets")
    s.add("retransmissionNumber", .int(try u8(&r)))
    s.add("maxTransportLatency", .int(try u16(&r)), unit: "ms")
    s.add("presentationDelay", .int(try u24(&r)), unit: "µs")
}

/// An ASE Control Point operation (ASCS 5.1–5.8): opcode, Number_of_ASEs, then each ASE's parameters.
private func aseOperation(_ r: inout ByteReader, _ s: inout FieldSink) throws(DecodeError) {
    let op = try u8(&r)
    s.add("opcode", named(op, T.aseOpcodes), at: 0)
    let n = try u8(&r)
    var ases: [DecodedField] = []
    for _ in 0..<n {
        var a = FieldSink()
        a.add("aseId", .int(try u8(&r)))
        switch op {
        case 1:
            a.add("targetLatency", named(try u8(&r), T.targetLatencies))
            a.add("targetPhy", flags(try u8(&r), ["1M", "2M", "Coded"]))
            try codecID(&r, &a)
            try ltvs(&r, &a, "codecConfiguration", configurationLTV)
        case 2: try qosFields(&r, &a, withTarget: false)
        case 3, 7: try ltvs(&r, &a, "metadata", metadataLTV)
        default: break
        }
        ases.append(DecodedField("ase", .nested(a.fields)))
    }
    s.add("ases", .list(ases), at: 1)
}

/// An ASE Control Point notification (ASCS 5, Table 5.1): opcode, Number_of_ASEs (0xFF for an unsupported opcode or
/// a bad length), then ASE_ID, Response_Code, Reason per ASE.
private func aseResponse(_ r: inout ByteReader, _ s: inout FieldSink) throws(DecodeError) {
    s.add("opcode", named(try u8(&r), T.aseOpcodes), at: 0)
    let n = try u8(&r)
    var responses: [DecodedField] = []
    for _ in 0..<(n == 0xFF ? 1 : n) {
        let id = try u8(&r), code = try u8(&r), reason = try u8(&r)
        responses.append(
            DecodedField(
                "response",
                .nested([
                    DecodedField("aseId", .int(id)), DecodedField("code", named(code, T.aseResponseCodes)),
                    DecodedField("reason", named(reason, T.aseReasons)),
                ])))
    }
    s.add("responses", .list(responses), at: 1)
}

// MARK: - BASS

/// Subgroups of Add/Modify Source and of a Broadcast Receive State (BASS 3.1.1.4, 3.2): Num_Subgroups, then BIS_Sync
/// (a bit per BIS index; 0xFFFFFFFF "no preference") and metadata per subgroup.
private func subgroups(_ r: inout ByteReader, _ s: inout FieldSink, syncName: String) throws(DecodeError) {
    let n = try u8(&r)
    var items: [DecodedField] = []
    for _ in 0..<n {
        var g = FieldSink()
        let bis = try u32(&r)
        g.add(syncName, bis == 0xFFFF_FFFF ? .named(bis, "no preference") : flags(bis, (1...31).map { "BIS\($0)" }))
        try ltvs(&r, &g, "metadata", metadataLTV)
        items.append(DecodedField("subgroup", .nested(g.fields)))
    }
    s.add("subgroups", .list(items))
}

private func address(_ r: inout ByteReader, _ s: inout FieldSink, _ name: String) throws(DecodeError) {
    s.add(name + "Type", named(try u8(&r), T.addressTypes))
    s.add(name, .string(try BDAddress(parsing: &r).description))
}

/// A Broadcast Audio Scan Control Point operation (BASS 3.1).
private func bassOperation(_ r: inout ByteReader, _ s: inout FieldSink) throws(DecodeError) {
    let op = try u8(&r)
    s.add("opcode", named(op, T.bassOpcodes), at: 0)
    switch op {
    case 2:
        try address(&r, &s, "advertiserAddress")
        s.add("advertisingSid", .int(try u8(&r)))
        s.add("broadcastId", .int(try u24(&r)))
        s.add("paSync", named(try u8(&r), T.paSyncRequests))
        s.add("paInterval", .int(try u16(&r)))
        try subgroups(&r, &s, syncName: "bisSync")
    case 3:
        s.add("sourceId", .int(try u8(&r)))
        s.add("paSync", named(try u8(&r), T.paSyncRequests))
        s.add("paInterval", .int(try u16(&r)))
        try subgroups(&r, &s, syncName: "bisSync")
    case 4:
        s.add("sourceId", .int(try u8(&r)))
        _ = try r.readArray(16)  // the Broadcast_Code is a secret: read, not shown
    case 5:
        s.add("sourceId", .int(try u8(&r)))
    default:
        break
    }
}

/// A Broadcast Receive State (BASS 3.2): empty when no source is added; else Source_ID, address, SID, Broadcast_ID,
/// PA_Sync_State, BIG_Encryption, [Bad_Code], subgroups with their BIS_Sync_State.
private func receiveState(_ r: inout ByteReader, _ s: inout FieldSink) throws(DecodeError) {
    guard !r.isAtEnd else {
        s.add("empty", .bool(true), at: 0)
        return
    }
    s.add("sourceId", .int(try u8(&r)), at: 0)
    try address(&r, &s, "sourceAddress")
    s.add("sourceAdvSid", .int(try u8(&r)))
    s.add("broadcastId", .int(try u24(&r)))
    s.add("paSyncState", named(try u8(&r), T.paSyncStates))
    let encryption = try u8(&r)
    s.add("bigEncryption", named(encryption, T.bigEncryption))
    if encryption == 3 { _ = try r.readArray(16) }
    try subgroups(&r, &s, syncName: "bisSyncState")
}
