import BLECore

/// The CtrData of LL_CIS_REQ, LL_CIS_RSP and LL_CIS_IND (Core Spec Vol 6, Part B, 2.4.2.29–2.4.2.31), read for the
/// timeline of an air capture that follows a CIS setup. The PDUs stay ``LLControlPDU/other(_:_:)`` (raw) values; this
/// names their fields.
///
/// ```
/// LL_CIS_REQ (35): CIG_ID CIS_ID PHY_C_To_P PHY_P_To_C Max_SDU_C_To_P(12 bits, bit 15 Framed) Max_SDU_P_To_C(12)
///   SDU_Interval_C_To_P(20 of 24) SDU_Interval_P_To_C(20 of 24) Max_PDU_C_To_P(2) Max_PDU_P_To_C(2) NSE
///   Sub_Interval(3) BN_C_To_P(4 bits) BN_P_To_C(4) FT_C_To_P FT_P_To_C ISO_Interval(2) CIS_Offset_Min(3)
///   CIS_Offset_Max(3) connEventCount(2)
/// LL_CIS_RSP (8): CIS_Offset_Min(3) CIS_Offset_Max(3) connEventCount(2)
/// LL_CIS_IND (15): AA(4) CIS_Offset(3) CIG_Sync_Delay(3) CIS_Sync_Delay(3) connEventCount(2)
/// ```
/// A CtrData of the wrong size gives nil (the summary then shows the bytes).
public enum LLCISFields {
    public static let opcodes: ClosedRange<UInt8> = 0x1F...0x21

    public static func summary(_ opcode: LLControlOpcode, _ d: [UInt8]) -> String? {
        func u16(_ i: Int) -> Int { Int(d[i]) | Int(d[i + 1]) << 8 }
        func u24(_ i: Int) -> Int { u16(i) | Int(d[i + 2]) << 16 }
        switch (opcode.rawValue, d.count) {
        case (0x1F, 35):
            let framed = d[5] & 0x80 != 0
            return "CIG \(d[0]) CIS \(d[1]) PHY C→P \(hex(d[2])) P→C \(hex(d[3])) max SDU \(u16(4) & 0x0FFF)/\(u16(6) & 0x0FFF)"
                + " SDU interval \(u24(8) & 0xFFFFF)/\(u24(11) & 0xFFFFF) µs max PDU \(u16(14))/\(u16(16)) NSE \(d[18])"
                + " sub-interval \(u24(19)) µs BN \(d[22] & 0x0F)/\(d[22] >> 4) FT \(d[23])/\(d[24])"
                + " ISO interval \(String(fractionDigits: 2, Double(u16(25)) * 1.25)) ms offset \(u24(27))–\(u24(30)) µs"
                + " event \(u16(33))" + (framed ? " framed" : "")
        case (0x20, 8):
            return "offset \(u24(0))–\(u24(3)) µs event \(u16(6))"
        case (0x21, 15):
            let aa = UInt32(u16(0)) | UInt32(u16(2)) << 16
            return "AA \(hex(aa)) offset \(u24(4)) µs CIG sync delay \(u24(7)) µs CIS sync delay \(u24(10)) µs event \(u16(13))"
        default:
            return nil
        }
    }
}
