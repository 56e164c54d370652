import BLECore

/// One Link Manager Protocol PDU (Core Spec 5.4 Vol 2, Part C, 5): the opcode in the first byte's upper seven bits
/// with the transaction ID in its lowest (0: a transaction the central started, 1: the peripheral's), the escape
/// opcode 127 followed by an extended opcode, then the parameters. LMP never crosses HCI; some controllers log it
/// to their vendor's tools (an iPhone's PacketLogger).
public struct LMPPDU: Hashable, Sendable {
    /// 1–127; 127 is the escape to ``extendedOpcode``.
    public var opcode: UInt8
    public var extendedOpcode: UInt8?
    /// The transaction ID: true when the peripheral started the transaction.
    public var peripheralTransaction: Bool
    public var parameters: [UInt8]

    /// The escape opcode (5.1: escape 4) that an extended opcode follows.
    public static let escape: UInt8 = 127

    /// Reads a PDU from its first byte. `length`, when the record states it, must be the opcode's own (Tables 5.1,
    /// 5.2); without it the table's length is read. Nil for an opcode the tables do not hold or a PDU cut short.
    public init?(_ bytes: ArraySlice<UInt8>, length: Int? = nil) {
        guard let first = bytes.first else { return nil }
        opcode = first >> 1
        peripheralTransaction = first & 1 == 1
        if opcode == Self.escape {
            guard bytes.count >= 2 else { return nil }
            extendedOpcode = bytes[bytes.startIndex + 1]
        }
        guard let expected = Self.length(opcode: opcode, extended: extendedOpcode), length.map({ $0 == expected }) ?? true,
            bytes.count >= expected
        else { return nil }
        let header = extendedOpcode == nil ? 1 : 2
        parameters = Array(bytes[(bytes.startIndex + header)..<(bytes.startIndex + expected)])
    }

    /// A PDU's length in bytes, opcode(s) included (Tables 5.1 and 5.2); nil for an opcode they do not hold.
    public static func length(opcode: UInt8, extended: UInt8?) -> Int? {
        if opcode == escape { return extended.flatMap { extendedTable[$0]?.length } }
        return table[opcode]?.length
    }

    /// `LMP_encryption_key_size_req`, `LMP_IO_capability_req`.
    public var name: String {
        if let e = extendedOpcode { return "LMP_" + (Self.extendedTable[e]?.name ?? "extended_\(e)") }
        return "LMP_" + (Self.table[opcode]?.name ?? "opcode_\(opcode)")
    }

    /// The opcode an LMP_accepted, LMP_not_accepted (or their extended forms) answers: its name.
    public var answers: String? {
        switch (opcode, extendedOpcode) {
        case (3, nil), (4, nil):
            return parameters.first.map { LMPPDU.name(opcode: $0, extended: nil) }
        case (Self.escape, 1?), (Self.escape, 2?):
            guard parameters.count >= 2 else { return nil }
            return LMPPDU.name(opcode: parameters[0], extended: parameters[0] == Self.escape ? parameters[1] : nil)
        default:
            return nil
        }
    }

    /// An LMP_not_accepted(_ext)'s error code.
    public var refusal: HCIStatus? {
        switch (opcode, extendedOpcode) {
        case (4, nil): parameters.count >= 2 ? HCIStatus(rawValue: parameters[1]) : nil
        case (Self.escape, 2?): parameters.count >= 3 ? HCIStatus(rawValue: parameters[2]) : nil
        default: nil
        }
    }

    /// LMP_encryption_key_size_req's key size in bytes (5.2: 1–16).
    public var proposedKeySize: Int? { opcode == 16 && extendedOpcode == nil ? parameters.first.map(Int.init) : nil }

    static func name(opcode: UInt8, extended: UInt8?) -> String {
        if opcode == escape, let e = extended { return "LMP_" + (extendedTable[e]?.name ?? "extended_\(e)") }
        return "LMP_" + (table[opcode]?.name ?? "opcode_\(opcode)")
    }

    /// What the timeline shows after the name: what the parameters say where they are few and read (empty otherwise).
    public var summary: String {
        var text = ""
        if let a = answers { text += a }
        if let r = refusal { text += ": \(hex(r.rawValue)) \(r)" }
        switch (opcode, extendedOpcode) {
        case (7, nil): if let r = parameters.first { text += ": \(hex(r)) \(HCIStatus(rawValue: r))" }
        case (15, nil): if let m = parameters.first { text += m == 0 ? ": no encryption" : ": encryption" }
        case (16, nil): if let s = parameters.first { text += ": \(s) bytes" }
        case (37, nil), (38, nil):
            if parameters.count >= 5 {
                let company = UInt16(parameters[1]) | UInt16(parameters[2]) << 8
                let version = ReadLocalVersionInformationReturn.versionName(parameters[0])
                text += ": Bluetooth \(version) (\(hex(parameters[0]))), company \(hex(company, width: 4))"
            }
        case (55, nil):
            if parameters.count >= 2 {
                let slots = Int(parameters[0]) | Int(parameters[1]) << 8
                text += ": \(slots * 625 / 1000) ms"
            }
        case (Self.escape, 25?), (Self.escape, 26?):
            if parameters.count >= 3 {
                text += ": IO capability \(parameters[0]), OOB \(parameters[1] == 0 ? "not present" : "present")"
                text += ", authentication requirements \(hex(parameters[2]))"
            }
        default: break
        }
        return text.hasPrefix(": ") ? String(text.dropFirst(2)) : text
    }

    /// Table 5.1: opcode → name and length (opcode included).
    static let table: [UInt8: (name: String, length: Int)] = [
        1: ("name_req", 2), 2: ("name_res", 17), 3: ("accepted", 2), 4: ("not_accepted", 3), 5: ("clkoffset_req", 1),
        6: ("clkoffset_res", 3), 7: ("detach", 2), 8: ("in_rand", 17), 9: ("comb_key", 17), 10: ("unit_key", 17),
        11: ("au_rand", 17), 12: ("sres", 5), 13: ("temp_rand", 17), 14: ("temp_key", 17), 15: ("encryption_mode_req", 2),
        16: ("encryption_key_size_req", 2), 17: ("start_encryption_req", 17), 18: ("stop_encryption_req", 1),
        19: ("switch_req", 5), 20: ("hold", 7), 21: ("hold_req", 7), 23: ("sniff_req", 10), 24: ("unsniff_req", 1),
        31: ("incr_power_req", 2), 32: ("decr_power_req", 2), 33: ("max_power", 1), 34: ("min_power", 1),
        35: ("auto_rate", 1), 36: ("preferred_rate", 2), 37: ("version_req", 6), 38: ("version_res", 6),
        39: ("features_req", 9), 40: ("features_res", 9), 41: ("quality_of_service", 4), 42: ("quality_of_service_req", 4),
        43: ("SCO_link_req", 7), 44: ("remove_SCO_link_req", 3), 45: ("max_slot", 2), 46: ("max_slot_req", 2),
        47: ("timing_accuracy_req", 1), 48: ("timing_accuracy_res", 3), 49: ("setup_complete", 1),
        50: ("use_semi_permanent_key", 1), 51: ("host_connection_req", 1), 52: ("slot_offset", 9), 53: ("page_mode_req", 3),
        54: ("page_scan_mode_req", 3), 55: ("supervision_timeout", 3), 56: ("test_activate", 1), 57: ("test_control", 10),
        58: ("encryption_key_size_mask_req", 1), 59: ("encryption_key_size_mask_res", 3), 60: ("set_AFH", 16),
        61: ("encapsulated_header", 4), 62: ("encapsulated_payload", 17), 63: ("simple_pairing_confirm", 17),
        64: ("simple_pairing_number", 17), 65: ("DHkey_check", 17), 66: ("pause_encryption_aes_req", 17),
    ]

    /// Table 5.2: extended opcode (after escape 127) → name and length (both opcodes included).
    static let extendedTable: [UInt8: (name: String, length: Int)] = [
        1: ("accepted_ext", 4), 2: ("not_accepted_ext", 5), 3: ("features_req_ext", 12), 4: ("features_res_ext", 12),
        5: ("clk_adj", 15), 6: ("clk_adj_ack", 3), 7: ("clk_adj_req", 6), 11: ("packet_type_table_req", 3),
        12: ("eSCO_link_req", 16), 13: ("remove_eSCO_link_req", 4), 16: ("channel_classification_req", 7),
        17: ("channel_classification", 12), 21: ("sniff_subrating_req", 9), 22: ("sniff_subrating_res", 9),
        23: ("pause_encryption_req", 2), 24: ("resume_encryption_req", 2), 25: ("IO_capability_req", 5),
        26: ("IO_capability_res", 5), 27: ("numeric_comparison_failed", 2), 28: ("passkey_failed", 2), 29: ("oob_failed", 2),
        30: ("keypress_notification", 3), 31: ("power_control_req", 3), 32: ("power_control_res", 3), 33: ("ping_req", 2),
        34: ("ping_res", 2),
    ]
}
