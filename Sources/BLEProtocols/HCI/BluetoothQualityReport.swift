import BLECore

/// A sub-event code of the Android vendor-specific HCI event (event code 0xFF, first parameter byte).
///
/// AOSP "HCI requirements" (source.android.com/docs/core/connect/bluetooth/hci_requirements) defines these
/// sub-events for Android controllers; other vendors' events under 0xFF start with their own bytes and keep
/// the generic name. Open struct: an unknown value prints as `AndroidVendorSubevent(0x42)`.
///
/// Codes checked against the Android host's own definitions: `stack/include/hcidefs.h` of Bluedroid
/// (CyanogenMod/android_external_bluetooth_bluedroid): 0x54 `HCI_VSE_SUBCODE_BLE_THRESHOLD_SUB_EVT` (batch scan
/// storage threshold), 0x55 `HCI_VSE_SUBCODE_BLE_MULTI_ADV_ST_CHG` (multi-advertising instance state change),
/// 0x56 `HCI_VSE_SUBCODE_BLE_TRACKING_SUB_EVT` (advertisement tracking); 0x57 `HCI_VSE_SUBCODE_DEBUG_INFO_SUB_EVT`
/// (controller debug info, which AOSP's `hci_layer.cc` writes to the firmware log file instead of passing up);
/// 0x58 `HCI_VSE_SUBCODE_BQR_SUB_EVT` (Bluetooth Quality Report; bumble `vendor/android/hci.py` names 0x58 only).
public struct AndroidVendorSubevent: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let storageThresholdBreach = AndroidVendorSubevent(0x54)
    public static let multiAdvertisingStateChange = AndroidVendorSubevent(0x55)
    public static let advertisementTracking = AndroidVendorSubevent(0x56)
    public static let debugInfo = AndroidVendorSubevent(0x57)
    public static let bluetoothQualityReport = AndroidVendorSubevent(0x58)

    static let names: [UInt8: String] = [
        0x54: "Storage Threshold Breach", 0x55: "LE Multi-Advertising State Change", 0x56: "LE Advertisement Tracking",
        0x57: "Controller Debug Info", 0x58: "Bluetooth Quality Report",
    ]
    public var name: String? { Self.names[rawValue] }
    public var description: String { name ?? "AndroidVendorSubevent(\(hex(rawValue)))" }
}

/// The Quality_Report_Id of a Bluetooth Quality Report: why the controller sent it (AOSP `btif_bqr.h`).
public struct BQRReportID: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    public init(_ rawValue: UInt8) { self.rawValue = rawValue }

    public static let monitorMode = BQRReportID(0x01)
    public static let approachingLSTO = BQRReportID(0x02)
    public static let a2dpAudioChoppy = BQRReportID(0x03)
    public static let scoVoiceChoppy = BQRReportID(0x04)
    public static let rootInflammation = BQRReportID(0x05)
    public static let energyMonitor = BQRReportID(0x06)
    public static let leAudioChoppy = BQRReportID(0x07)
    public static let connectFail = BQRReportID(0x08)
    public static let rfStats = BQRReportID(0x09)

    static let names: [UInt8: String] = [
        0x01: "Monitor Mode", 0x02: "Approaching LSTO", 0x03: "A2DP Audio Choppy", 0x04: "(e)SCO Voice Choppy",
        0x05: "Root Inflammation", 0x06: "Energy Monitor", 0x07: "LE Audio Choppy", 0x08: "Connect Fail",
        0x09: "RF Stats", 0x10: "Vendor Specific Quality", 0x11: "LMP/LL Message Trace", 0x12: "BT Scheduling Trace",
        0x13: "Controller Debug Info", 0x16: "LE Audio Broadcast Source", 0x17: "Channel Sounding",
        0x20: "Vendor Specific Trace",
    ]
    /// Report ids whose parameters are the link-quality layout (``BQRLinkQuality``); the others are kept as bytes.
    static let linkQualityLayout: Set<UInt8> = [0x01, 0x02, 0x03, 0x04, 0x07, 0x08]

    public var name: String? { Self.names[rawValue] }
    public var isKnown: Bool { Self.names[rawValue] != nil }
    /// The report carries the link-quality fields (monitor, approaching LSTO, choppy audio/voice, connect fail).
    public var hasLinkQuality: Bool { Self.linkQualityLayout.contains(rawValue) }
    public var description: String { name ?? "BQRReportID(\(hex(rawValue)))" }
}

/// The link-quality fields of a Bluetooth Quality Report, as many versions as the controller sent.
///
/// AOSP "HCI requirements", Bluetooth Quality Report sub-event; bumble `vendor/android/hci.py`. All fields
/// little-endian. The v1 part is always present (a shorter report does not decode); later versions
/// appended groups, read only when the whole group is there:
/// ```
///  v1 (48 bytes after the sub-event code):
///  id(1) packet type(1) handle(2) role(1) tx power(i8) rssi(i8) snr(1) unused AFH(1) unideal AFH(1) lsto(2)
///  piconet clock(4) retransmissions(4) no-rx(4) nak(4) last tx ack(4) flow-off(4) last flow-on(4)
///  buffer overflow bytes(4) buffer underflow bytes(4)
///  v5 (+7): remote BD_ADDR(6) calibration failed items(1)
///  v6 (+28): tx total(4) tx unacked(4) tx flushed(4) tx last subevent(4) crc errors(4) rx duplicates(4)
///            rx unreceived(4)
///  then vendor-specific parameters (kept as bytes)
/// ```
/// Counters are per reporting interval (they fall back to 0 between reports in real captures).
public struct BQRLinkQuality: Hashable, Sendable {
    public var packetType: UInt8
    public var handle: UInt16
    /// 0 central, 1 peripheral.
    public var role: UInt8
    /// dBm.
    public var txPowerLevel: Int8
    /// dBm.
    public var rssi: Int8
    /// dB.
    public var snr: UInt8
    public var unusedAFHChannelCount: UInt8
    public var afhSelectUnidealChannelCount: UInt8
    /// Link supervision timeout in 0.625 ms slots.
    public var lsto: UInt16
    /// Piconet clock (units of 0.3125 ms).
    public var piconetClock: UInt32
    public var retransmissionCount: UInt32
    public var noRxCount: UInt32
    public var nakCount: UInt32
    public var lastTxAckTimestamp: UInt32
    public var flowOffCount: UInt32
    public var lastFlowOnTimestamp: UInt32
    public var bufferOverflowBytes: UInt32
    public var bufferUnderflowBytes: UInt32
    /// v5 fields, when present.
    public var v5: V5?
    /// v6 fields, when present (only after v5).
    public var v6: V6?

    public struct V5: Hashable, Sendable {
        public var remoteAddress: BDAddress
        public var calibrationFailedItemCount: UInt8
        public init(remoteAddress: BDAddress, calibrationFailedItemCount: UInt8) {
            self.remoteAddress = remoteAddress; self.calibrationFailedItemCount = calibrationFailedItemCount
        }
    }
    public struct V6: Hashable, Sendable {
        public var txTotalPackets: UInt32
        public var txUnackedPackets: UInt32
        public var txFlushedPackets: UInt32
        public var txLastSubeventPackets: UInt32
        public var crcErrorPackets: UInt32
        public var rxDuplicatePackets: UInt32
        public var rxUnreceivedPackets: UInt32
        public init(
            txTotalPackets: UInt32, txUnackedPackets: UInt32, txFlushedPackets: UInt32, txLastSubeventPackets: UInt32,
            crcErrorPackets: UInt32, rxDuplicatePackets: UInt32, rxUnreceivedPackets: UInt32
        ) {
            self.txTotalPackets = txTotalPackets; self.txUnackedPackets = txUnackedPackets; self.txFlushedPackets = txFlushedPackets
            self.txLastSubeventPackets = txLastSubeventPackets; self.crcErrorPackets = crcErrorPackets
            self.rxDuplicatePackets = rxDuplicatePackets; self.rxUnreceivedPackets = rxUnreceivedPackets
        }
    }

    /// Bytes of the v1 fields after the report id; the v5 and v6 groups.
    public static let v1Size = 47, v5Size = 7, v6Size = 28

    public init(
        packetType: UInt8 = 0, handle: UInt16, role: UInt8 = 0, txPowerLevel: Int8 = 0, rssi: Int8, snr: UInt8 = 0,
        unusedAFHChannelCount: UInt8 = 0, afhSelectUnidealChannelCount: UInt8 = 0, lsto: UInt16 = 0,
        piconetClock: UInt32 = 0, retransmissionCount: UInt32 = 0, noRxCount: UInt32 = 0, nakCount: UInt32 = 0,
        lastTxAckTimestamp: UInt32 = 0, flowOffCount: UInt32 = 0, lastFlowOnTimestamp: UInt32 = 0,
        bufferOverflowBytes: UInt32 = 0, bufferUnderflowBytes: UInt32 = 0, v5: V5? = nil, v6: V6? = nil
    ) {
        self.packetType = packetType; self.handle = handle; self.role = role; self.txPowerLevel = txPowerLevel
        self.rssi = rssi; self.snr = snr; self.unusedAFHChannelCount = unusedAFHChannelCount
        self.afhSelectUnidealChannelCount = afhSelectUnidealChannelCount; self.lsto = lsto; self.piconetClock = piconetClock
        self.retransmissionCount = retransmissionCount; self.noRxCount = noRxCount; self.nakCount = nakCount
        self.lastTxAckTimestamp = lastTxAckTimestamp; self.flowOffCount = flowOffCount
        self.lastFlowOnTimestamp = lastFlowOnTimestamp; self.bufferOverflowBytes = bufferOverflowBytes
        self.bufferUnderflowBytes = bufferUnderflowBytes; self.v5 = v5; self.v6 = v6
    }

    /// Reads v1, then v5 and v6 when their whole group remains; what is left stays in `input`.
    /// Throws `.truncated` when the v1 part is incomplete.
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        guard input.remaining >= Self.v1Size else {
            throw DecodeError.truncated(needed: Self.v1Size, available: input.remaining, offset: input.offset)
        }
        packetType = try input.readUInt8()
        handle = try UInt16(parsingLittleEndian: &input)
        role = try input.readUInt8()
        txPowerLevel = Int8(bitPattern: try input.readUInt8())
        rssi = Int8(bitPattern: try input.readUInt8())
        snr = try input.readUInt8()
        unusedAFHChannelCount = try input.readUInt8()
        afhSelectUnidealChannelCount = try input.readUInt8()
        lsto = try UInt16(parsingLittleEndian: &input)
        piconetClock = try UInt32(parsingLittleEndian: &input)
        retransmissionCount = try UInt32(parsingLittleEndian: &input)
        noRxCount = try UInt32(parsingLittleEndian: &input)
        nakCount = try UInt32(parsingLittleEndian: &input)
        lastTxAckTimestamp = try UInt32(parsingLittleEndian: &input)
        flowOffCount = try UInt32(parsingLittleEndian: &input)
        lastFlowOnTimestamp = try UInt32(parsingLittleEndian: &input)
        bufferOverflowBytes = try UInt32(parsingLittleEndian: &input)
        bufferUnderflowBytes = try UInt32(parsingLittleEndian: &input)
        v5 = nil
        v6 = nil
        guard input.remaining >= Self.v5Size else { return }
        v5 = V5(remoteAddress: try BDAddress(parsing: &input), calibrationFailedItemCount: try input.readUInt8())
        guard input.remaining >= Self.v6Size else { return }
        v6 = V6(
            txTotalPackets: try UInt32(parsingLittleEndian: &input), txUnackedPackets: try UInt32(parsingLittleEndian: &input),
            txFlushedPackets: try UInt32(parsingLittleEndian: &input),
            txLastSubeventPackets: try UInt32(parsingLittleEndian: &input),
            crcErrorPackets: try UInt32(parsingLittleEndian: &input), rxDuplicatePackets: try UInt32(parsingLittleEndian: &input),
            rxUnreceivedPackets: try UInt32(parsingLittleEndian: &input))
    }

    public func encode(into w: inout ByteWriter) {
        w.write(packetType); w.write(littleEndian: handle); w.write(role)
        w.write(UInt8(bitPattern: txPowerLevel)); w.write(UInt8(bitPattern: rssi)); w.write(snr)
        w.write(unusedAFHChannelCount); w.write(afhSelectUnidealChannelCount); w.write(littleEndian: lsto)
        for v in [
            piconetClock, retransmissionCount, noRxCount, nakCount, lastTxAckTimestamp, flowOffCount,
            lastFlowOnTimestamp, bufferOverflowBytes, bufferUnderflowBytes,
        ] { w.write(littleEndian: v) }
        guard let v5 else { return }
        v5.remoteAddress.encode(into: &w)
        w.write(v5.calibrationFailedItemCount)
        guard let v6 else { return }
        for v in [
            v6.txTotalPackets, v6.txUnackedPackets, v6.txFlushedPackets, v6.txLastSubeventPackets, v6.crcErrorPackets,
            v6.rxDuplicatePackets, v6.rxUnreceivedPackets,
        ] { w.write(littleEndian: v) }
    }

    /// Link supervision timeout in milliseconds.
    public var lstoMilliseconds: Double { Double(lsto) * 0.625 }
    public var roleName: String { role == 0 ? "central" : role == 1 ? "peripheral" : hex(role) }

    /// `handle=0x0004 role=central tx_power=10 dBm rssi=-53 dBm snr=0 dB …`.
    public var summary: String {
        var s =
            "handle=\(hex(handle)) role=\(roleName) packet_type=\(hex(packetType)) tx_power=\(txPowerLevel) dBm"
            + " rssi=\(rssi) dBm snr=\(snr) dB unused_afh_channels=\(unusedAFHChannelCount)"
            + " unideal_afh_channels=\(afhSelectUnidealChannelCount) lsto=\(formatMilliseconds(lstoMilliseconds))"
            + " retransmissions=\(retransmissionCount) no_rx=\(noRxCount) nak=\(nakCount) flow_off=\(flowOffCount)"
            + " buffer_overflow=\(bufferOverflowBytes) buffer_underflow=\(bufferUnderflowBytes)"
            + " piconet_clock=\(hex(piconetClock)) last_tx_ack=\(hex(lastTxAckTimestamp)) last_flow_on=\(hex(lastFlowOnTimestamp))"
        if let v5 { s += " peer=\(v5.remoteAddress) cal_failed=\(v5.calibrationFailedItemCount)" }
        if let v6 {
            s +=
                " tx_total=\(v6.txTotalPackets) tx_unacked=\(v6.txUnackedPackets) tx_flushed=\(v6.txFlushedPackets)"
                + " tx_last_subevent=\(v6.txLastSubeventPackets) crc_errors=\(v6.crcErrorPackets)"
                + " rx_duplicates=\(v6.rxDuplicatePackets) rx_unreceived=\(v6.rxUnreceivedPackets)"
        }
        return s
    }

    /// The fields as (JSON key, value) pairs, in wire order; what timelines and reports print.
    public var fields: [(String, Int64)] {
        var f: [(String, Int64)] = [
            ("packet_type", Int64(packetType)), ("handle", Int64(handle)), ("role", Int64(role)),
            ("tx_power_dbm", Int64(txPowerLevel)), ("rssi_dbm", Int64(rssi)), ("snr_db", Int64(snr)),
            ("unused_afh_channels", Int64(unusedAFHChannelCount)), ("unideal_afh_channels", Int64(afhSelectUnidealChannelCount)),
            ("lsto", Int64(lsto)), ("piconet_clock", Int64(piconetClock)), ("retransmissions", Int64(retransmissionCount)),
            ("no_rx", Int64(noRxCount)), ("nak", Int64(nakCount)), ("last_tx_ack", Int64(lastTxAckTimestamp)),
            ("flow_off", Int64(flowOffCount)), ("last_flow_on", Int64(lastFlowOnTimestamp)),
            ("buffer_overflow_bytes", Int64(bufferOverflowBytes)), ("buffer_underflow_bytes", Int64(bufferUnderflowBytes)),
        ]
        if let v5 { f.append(("cal_failed_items", Int64(v5.calibrationFailedItemCount))) }
        if let v6 {
            f += [
                ("tx_total", Int64(v6.txTotalPackets)), ("tx_unacked", Int64(v6.txUnackedPackets)),
                ("tx_flushed", Int64(v6.txFlushedPackets)), ("tx_last_subevent", Int64(v6.txLastSubeventPackets)),
                ("crc_errors", Int64(v6.crcErrorPackets)), ("rx_duplicates", Int64(v6.rxDuplicatePackets)),
                ("rx_unreceived", Int64(v6.rxUnreceivedPackets)),
            ]
        }
        return f
    }
}

/// One Bluetooth Quality Report (Android vendor event 0xFF, sub-event 0x58): the report id, the link-quality
/// fields when the id has that layout, and every byte after what was read.
///
/// Parameters (after the event header): `58 id …`. A link-quality report shorter than the v1 fields throws
/// `.truncated` (the analyzer turns it into a finding with frame and offset); other ids keep their bytes.
public struct BluetoothQualityReport: HCICarriedParameters {
    /// The Android vendor event; its sub-event byte (0x58) comes before these parameters.
    public static let carrier = HCICarrier.event(.vendor)
    public var reportID: BQRReportID
    public var linkQuality: BQRLinkQuality?
    /// Bytes after the fields read: vendor-specific parameters, or the whole body of a report without the
    /// link-quality layout.
    public var remaining: [UInt8]

    public init(reportID: BQRReportID, linkQuality: BQRLinkQuality?, remaining: [UInt8] = []) {
        self.reportID = reportID; self.linkQuality = linkQuality; self.remaining = remaining
    }

    /// Parses from the byte after the sub-event code (the report id).
    public init(parsing input: inout ByteReader) throws(DecodeError) {
        reportID = BQRReportID(try input.readUInt8())
        linkQuality = reportID.hasLinkQuality ? try BQRLinkQuality(parsing: &input) : nil
        remaining = input.readRemaining()
    }

    public func encode(into w: inout ByteWriter) {
        w.write(reportID.rawValue)
        linkQuality?.encode(into: &w)
        w.write(contentsOf: remaining)
    }

    public var summary: String {
        var s = "report=\(reportID)"
        if let q = linkQuality { s += " " + q.summary }
        if !remaining.isEmpty { s += (linkQuality == nil ? " params=" : " vendor=") + hexString(remaining) }
        return s
    }
}

func formatMilliseconds(_ ms: Double) -> String {
    ms == ms.rounded() ? "\(Int(ms)) ms" : "\(ms) ms"
}
