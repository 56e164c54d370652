import BLECore

/// AuxPtr of an extended header (Core Spec Vol 6, Part B, 2.3.4.5).
public struct LLAuxPointer: Hashable, Sendable {
    public var channelIndex: UInt8
    public var clockAccuracy50ppm: Bool
    /// True: offset units of 300 µs; false: 30 µs.
    public var offsetUnits300: Bool
    public var auxOffset: UInt16
    public var auxPHY: UInt8

    public init(channelIndex: UInt8, clockAccuracy50ppm: Bool = false, offsetUnits300: Bool = false, auxOffset: UInt16, auxPHY: UInt8 = 0) {
        self.channelIndex = channelIndex
        self.clockAccuracy50ppm = clockAccuracy50ppm
        self.offsetUnits300 = offsetUnits300
        self.auxOffset = auxOffset
        self.auxPHY = auxPHY
    }

    /// Offset in µs to the auxiliary packet.
    public var offsetMicroseconds: Int { Int(auxOffset) * (offsetUnits300 ? 300 : 30) }
}

/// AdvDataInfo (ADI): advertising set id and data id.
public struct LLAdvDataInfo: Hashable, Sendable {
    public var dataID: UInt16
    public var setID: UInt8
    public init(dataID: UInt16, setID: UInt8) {
        self.dataID = dataID & 0x0FFF
        self.setID = setID & 0x0F
    }
}

/// The Common Extended Advertising Payload Format (Core Spec Vol 6, Part B, 2.3.4): used by
/// ADV_EXT_IND, AUX_ADV_IND, AUX_SCAN_RSP, AUX_SYNC_IND, AUX_CHAIN_IND and AUX_CONNECT_RSP.
///
/// ```
/// ext header length:6 | AdvMode:2 | [flags | AdvA 6 | TargetA 6 | CTEInfo 1 | ADI 2 | AuxPtr 3 | SyncInfo 18 | TxPower 1 | ACAD …] | AdvData …
/// ```
public struct LLExtendedAdvertisingPayload: Hashable, Sendable {
    /// 0 non-connectable non-scannable, 1 connectable, 2 scannable.
    public var advMode: UInt8
    public var advertiser: LLDeviceAddress?
    public var target: LLDeviceAddress?
    public var cteInfo: UInt8?
    public var adi: LLAdvDataInfo?
    public var auxPointer: LLAuxPointer?
    /// SyncInfo, kept raw (18 bytes).
    public var syncInfo: [UInt8]?
    public var txPower: Int8?
    /// Additional Controller Advertising Data, raw.
    public var acad: [UInt8]
    /// AD structures, raw (decoded elsewhere).
    public var advData: [UInt8]
    /// The extended header is a lone flags byte of 0 (no field present); kept so it round-trips.
    public var hasFlagsByte: Bool

    public init(
        advMode: UInt8 = 0, advertiser: LLDeviceAddress? = nil, target: LLDeviceAddress? = nil, cteInfo: UInt8? = nil,
        adi: LLAdvDataInfo? = nil, auxPointer: LLAuxPointer? = nil, syncInfo: [UInt8]? = nil, txPower: Int8? = nil,
        acad: [UInt8] = [], advData: [UInt8] = [], hasFlagsByte: Bool = false
    ) {
        self.advMode = advMode
        self.advertiser = advertiser
        self.target = target
        self.cteInfo = cteInfo
        self.adi = adi
        self.auxPointer = auxPointer
        self.syncInfo = syncInfo
        self.txPower = txPower
        self.acad = acad
        self.advData = advData
        self.hasFlagsByte = hasFlagsByte
    }

    /// Parses the payload; `txAdd`/`rxAdd` give the address types from the PDU header.
    /// - Throws: ``DecodeError/truncated(needed:available:offset:)`` when the extended header length exceeds the payload
    ///   or the flagged fields do not fit in it.
    public init(parsing input: inout ByteReader, txAddRandom: Bool, rxAddRandom: Bool) throws(DecodeError) {
        let b = try UInt8(parsing: &input)
        advMode = b >> 6
        let headerLength = Int(b & 0x3F)
        var h = try input.slice(headerLength)
        acad = []
        hasFlagsByte = false
        if headerLength > 0 {
            let flags = try UInt8(parsing: &h)
            hasFlagsByte = flags == 0
            advertiser = flags & 0x01 != 0 ? try LLDeviceAddress(parsing: &h, isRandom: txAddRandom) : nil
            target = flags & 0x02 != 0 ? try LLDeviceAddress(parsing: &h, isRandom: rxAddRandom) : nil
            cteInfo = flags & 0x04 != 0 ? try UInt8(parsing: &h) : nil
            if flags & 0x08 != 0 {
                let v = try UInt16(parsingLittleEndian: &h)
                adi = LLAdvDataInfo(dataID: v & 0x0FFF, setID: UInt8(v >> 12))
            } else {
                adi = nil
            }
            if flags & 0x10 != 0 {
                let a = try UInt8(parsing: &h), v = try UInt16(parsingLittleEndian: &h)
                auxPointer = LLAuxPointer(
                    channelIndex: a & 0x3F, clockAccuracy50ppm: a & 0x40 != 0, offsetUnits300: a & 0x80 != 0,
                    auxOffset: v & 0x1FFF, auxPHY: UInt8(v >> 13))
            } else {
                auxPointer = nil
            }
            syncInfo = flags & 0x20 != 0 ? try h.readArray(18) : nil
            txPower = flags & 0x40 != 0 ? Int8(bitPattern: try UInt8(parsing: &h)) : nil
            acad = h.readRemaining()
        } else {
            advertiser = nil; target = nil; cteInfo = nil; adi = nil; auxPointer = nil; syncInfo = nil; txPower = nil
        }
        advData = input.readRemaining()
    }

    public func encode(into writer: inout ByteWriter) {
        var h = ByteWriter()
        if hasFlagsByte || advertiser != nil || target != nil || cteInfo != nil || adi != nil || auxPointer != nil || syncInfo != nil
            || txPower != nil || !acad.isEmpty
        {
            var flags: UInt8 = 0
            if advertiser != nil { flags |= 0x01 }
            if target != nil { flags |= 0x02 }
            if cteInfo != nil { flags |= 0x04 }
            if adi != nil { flags |= 0x08 }
            if auxPointer != nil { flags |= 0x10 }
            if syncInfo != nil { flags |= 0x20 }
            if txPower != nil { flags |= 0x40 }
            h.write(flags)
            advertiser?.encode(into: &h)
            target?.encode(into: &h)
            if let cteInfo { h.write(cteInfo) }
            if let adi { h.write(littleEndian: adi.dataID & 0x0FFF | UInt16(adi.setID) << 12) }
            if let p = auxPointer {
                h.write(p.channelIndex & 0x3F | (p.clockAccuracy50ppm ? 0x40 : 0) | (p.offsetUnits300 ? 0x80 : 0))
                h.write(littleEndian: p.auxOffset & 0x1FFF | UInt16(p.auxPHY & 7) << 13)
            }
            if let syncInfo { h.write(contentsOf: syncInfo) }
            if let txPower { h.write(UInt8(bitPattern: txPower)) }
            h.write(contentsOf: acad)
        }
        writer.write(UInt8(truncatingIfNeeded: h.count) & 0x3F | advMode << 6)
        writer.write(contentsOf: h.bytes)
        writer.write(contentsOf: advData)
    }
}
