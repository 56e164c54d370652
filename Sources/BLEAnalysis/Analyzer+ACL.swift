import BLECapture
import BLECodecs
import BLECore
import BLEProtocols

/// ACL data to its link: the packet counted on its link (``LinkMachine``) and its controller's buffers, the fragment
/// handed to the link's ``ConnectionMachine`` (reassembly, channels, ATT, SMP: `ConnectionMachine+ATT.swift`).
extension Analyzer {
    func processACL(_ record: CaptureRecord) {
        counters.aclFragments += 1
        var input = record.reader
        let header: ACLHeader
        do { header = try ACLHeader(parsing: &input) } catch {
            findings.append(Finding(.warning, .malformed("ACL header", error), frame: record.frame, offset: record.fileOffset))
            return
        }
        let cut = record.isTruncated
        let available = input.remaining
        if !cut && available != Int(header.dataLength) {
            findings.append(
                Finding(
                    .warning, .invalidSize(expected: Int(header.dataLength), got: available), frame: record.frame,
                    offset: record.fileOffset))
        }
        // The bytes the header announces, or those there are (the generic `prefix` on a raw buffer was not inlined).
        let rest = input.remainingBytes
        let payload = UnsafeRawBufferPointer(start: rest.baseAddress, count: min(rest.count, Int(header.dataLength)))
        guard
            let index = table.link(
                controller: record.controllerIndex, handle: header.handle, frame: record.frame,
                timestamp: record.timestamp, infer: !VendorTrace.isVendorHandle(header.handle))
        else {
            if VendorTrace.isVendorHandle(header.handle) {
                hci.vendorTrace.count(handle: header.handle, frame: record.frame, bytes: record.originalLength)
            }
            return
        }
        let direction = record.direction
        let moment = LinkActivity.Moment(frame: record.frame, timestamp: record.timestamp)
        let canCharge = table[index].machine.feed(acl: direction, bytes: record.originalLength, at: moment)
        if direction == .tx, let total = hci.buffers.sent(controller: record.controllerIndex, connection: index, canCharge: canCharge) {
            table[index].machine.feed(bufferFilledWith: total, at: moment)
        }
        if cut && !truncatedACLNoted {
            truncatedACLNoted = true
            findings.append(Finding(.info, .truncatedACL(record.bytes.count), frame: record.frame, offset: record.fileOffset))
        }
        let fragment = L2CAPFragment(
            isStart: header.packetBoundary.isStart, payload: payload, frame: record.frame,
            timestamp: record.timestamp, isCut: cut, carried: cut ? Int(header.dataLength) : nil)
        table.feedL2CAP(fragment, connection: index, direction: direction)
    }
}
