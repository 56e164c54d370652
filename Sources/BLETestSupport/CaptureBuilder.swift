import BLECapture
import BLECore
import BLEProtocols

/// Builds a capture from typed packets: `CaptureBuilder().connect(handle: 0x40).notify(...).btsnoopBytes()`.
///
/// Each packet gets the next timestamp (`step` µs apart unless `at(_:)` says otherwise); frame
/// numbers are the records' positions, 1-based, as every reader numbers them.
public struct CaptureBuilder {
    public private(set) var records: [OwnedRecord] = []
    public var time: Int64
    public var step: Int64

    public init(start: Int64 = 1_700_000_000_000_000, step: Int64 = 1_000) {
        time = start
        self.step = step
    }

    /// The next record's frame number.
    public var nextFrame: Int { records.count + 1 }

    public func at(microsecondsFromStart us: Int64) -> CaptureBuilder {
        var b = self
        b.time = (records.first?.timestamp.microseconds ?? time) + us
        return b
    }

    public func record(_ kind: RecordKind, _ direction: Direction, _ bytes: [UInt8], originalLength: Int? = nil) -> CaptureBuilder {
        var b = self
        b.records.append(
            OwnedRecord(
                frame: records.count + 1, timestamp: Timestamp(microseconds: time), direction: direction,
                kind: kind, originalLength: originalLength, bytes: bytes))
        b.time += step
        return b
    }

    public func command(_ bytes: [UInt8]) -> CaptureBuilder { record(.command, .tx, bytes) }
    public func event(_ bytes: [UInt8]) -> CaptureBuilder { record(.event, .rx, bytes) }

    /// LE Connection Complete for `handle` (the capturing side is central).
    public func connect(handle: UInt16, peer: BDAddress = BDAddress(0xC0_11_22_33_44_55), interval: UInt16 = 24) -> CaptureBuilder {
        event(HCIBuild.leConnectionComplete(handle: handle, peer: peer, interval: interval))
    }

    public func disconnect(handle: UInt16, reason: HCIStatus = .remoteUserTerminatedConnection) -> CaptureBuilder {
        event(HCIBuild.disconnectionComplete(handle: handle, reason: reason))
    }

    /// An ATT PDU on `handle`, fragmented into ACL packets of at most `fragmentSize` bytes.
    public func att(_ pdu: ATTPDU, handle: UInt16, _ direction: Direction, fragmentSize: Int = 251) -> CaptureBuilder {
        l2cap(cid: 0x0004, payload: pdu.bytes, handle: handle, direction, fragmentSize: fragmentSize)
    }

    public func l2cap(cid: UInt16, payload: [UInt8], handle: UInt16, _ direction: Direction, fragmentSize: Int = 251) -> CaptureBuilder {
        var b = self
        let first: ACLPacketBoundary = direction == .tx ? .firstNonFlushable : .firstFlushable
        for fragment in HCIBuild.aclFragments(
            handle: handle, l2capPDU: HCIBuild.l2cap(cid: cid, payload: payload),
            fragmentSize: fragmentSize, firstBoundary: first)
        {
            b = b.record(.acl, direction, fragment)
        }
        return b
    }

    /// A notification from the peer (the device is the GATT server).
    public func notify(handle attribute: UInt16, _ value: [UInt8], connection: UInt16, fragmentSize: Int = 251) -> CaptureBuilder {
        att(.handleValueNotification(handle: attribute, value: value), handle: connection, .rx, fragmentSize: fragmentSize)
    }

    public func btsnoopBytes() -> [UInt8] { CaptureWriter.btsnoop(records) }

    /// The capture opened through the ordinary reader (format sniffing included).
    public func captureFile(name: String = "built.btsnoop") throws -> CaptureFile {
        try CaptureFile.open(bytes: btsnoopBytes(), name: name)
    }
}

extension CaptureBuilder {
    /// A Bluetooth Quality Report: Android vendor event 0xFF, sub-event 0x58, parameters from the typed value.
    public func qualityReport(_ report: BluetoothQualityReport) -> CaptureBuilder {
        event(HCIEventPacket(.bluetoothQualityReport(report)).bytes)
    }
}

extension CaptureBuilder {
    /// Read Local Version Information and its Command Complete naming `manufacturer` (two records): what tells the
    /// analysis, and tshark, who made the controller.
    public func localVersion(
        manufacturer: ControllerManufacturer, hciVersion: UInt8 = 0x09, lmpSubversion: UInt16 = 0x0100
    ) -> CaptureBuilder {
        let version = ReadLocalVersionInformationReturn(
            hciVersion: hciVersion, hciSubversion: 0x0100, lmpVersion: hciVersion, manufacturer: manufacturer,
            lmpSubversion: lmpSubversion)
        return command(HCIBuild.command(.readLocalVersionInformation))
            .event(
                HCIBuild.event(
                    .commandComplete(CommandComplete(opcode: .readLocalVersionInformation, .readLocalVersionInformation(version)))))
    }

    /// A vendor-specific command and its Command Complete with `returnParameters` (two records).
    public func vendorCommand(_ opcode: HCICommand, _ parameters: [UInt8] = [], returning returnParameters: [UInt8] = [0x00])
        -> CaptureBuilder
    {
        command(HCIBuild.command(opcode, parameters: parameters))
            .event(HCIBuild.event(.commandComplete(CommandComplete(opcode: opcode, returnParameters: returnParameters))))
    }
}
