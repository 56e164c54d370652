import BLECapture
import BLECodecs
import BLECore
import BLEProtocols

/// ACL data to its link: the packet counted on its link (``LinkMachine``) and its controller's buffers, the fragment
/// handed to the link's ``ConnectionMachine`` (reassembly, channels, ATT, SMP: `ConnectionMachine+ATT.swift`).
extension Analyzer {
    /// `replayed`: ACL held after a reset until its Connection Complete (``EarlyACLAfterReset``), counted when it came.
    func processACL(_ record: CaptureRecord, replayed: Bool = false) {
        if !replayed { counters.aclFragments += 1 }
        var input = record.reader
        let header: ACLHeader
        do { header = try ACLHeader(parsing: &input) } catch {
            findings.append(Finding(.warning, .malformed("ACL header", error), frame: record.frame, offset: record.fileOffset))
            return
        }
        // Shorter than its own header says: cut by the logger where the headers hold together (counted as a capturer's
        // cut, its handle as sure as a whole record's), damaged where they do not (it names no link, so it makes none):
        // ``RecordShortfall``. A cut one logged just before its link's Connection Complete (BTVS logs a Security Request
        // 3 ms ahead) opens the link that event adopts (``LinkAdoption``).
        let shortfall = RecordShortfall.of(record)
        let cut = record.isTruncated || shortfall == .cutByLogger
        let damaged = shortfall == .damaged
        let available = input.remaining
        if !cut && !replayed && available != Int(header.dataLength) {
            findings.append(
                Finding(
                    .warning, .invalidSize(expected: Int(header.dataLength), got: available), frame: record.frame,
                    offset: record.fileOffset))
        }
        // The bytes the header announces, or those there are (the generic `prefix` on a raw buffer was not inlined).
        let rest = input.remainingBytes
        let payload = UnsafeRawBufferPointer(start: rest.baseAddress, count: min(rest.count, Int(header.dataLength)))
        // Whether a reset forbids inferring is asked only when no open link holds the handle: on the hot path (every
        // ACL record of a log that begins with a reset, as most do) the lookup alone.
        let controller = record.controllerIndex
        guard
            let index = table.link(
                controller: controller, handle: header.handle, frame: record.frame, timestamp: record.timestamp, infer: false)
                ?? table.link(
                    controller: controller, handle: header.handle, frame: record.frame, timestamp: record.timestamp,
                    infer: !VendorTrace.isVendorHandle(header.handle) && !damaged && hci.infersLinks(controller: controller))
        else {
            if VendorTrace.isVendorHandle(header.handle) {
                hci.vendorTrace.count(handle: header.handle, frame: record.frame, bytes: record.originalLength)
            } else if !damaged, !replayed {
                earlyACL.hold(record, handle: header.handle)
            }
            return
        }
        let direction = record.direction
        let moment = LinkActivity.Moment(frame: record.frame, timestamp: record.timestamp)
        let canCharge = table.withLinkMachine(index) { $0.feed(acl: direction, bytes: record.originalLength, at: moment) }
        if direction == .tx, let total = hci.buffers.sent(controller: record.controllerIndex, connection: index, canCharge: canCharge) {
            table.withLinkMachine(index) { $0.feed(bufferFilledWith: total, at: moment) }
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

extension ConnectionTable {
    /// One fragment of link `index` to its ``ConnectionMachine`` (held bytes counted first: past the bound the
    /// largest holders' partial work is dropped, with one `limit.held-bytes` finding).
    func feedL2CAP(_ fragment: L2CAPFragment, connection index: Int, direction: Direction) {
        // Unmanaged, used through `_withUnsafeGuaranteedRef`: the table keeps the machine alive while the fragment is
        // decoded (nothing on the L2CAP path closes a connection; only HCI events, a new connection on the handle and
        // link-layer records do, between records), and a strong local cost a retain and a release per fragment
        // (see docs/performance.md#analyzer-hci).
        guard let owner = unmanagedMachine(index) else { return }
        if heldBudget.feed(fragment.payload.count), let shedding = heldBudget.check(held: heldBytes, holders: { holders() }) {
            sink.noteLimit(.heldBytes(heldBudget.limit), frame: fragment.frame)
            heldBudget.droppedElsewhere(shed(shedding))
        }
        owner._withUnsafeGuaranteedRef { $0.feed(fragment, direction: direction, now: now) }
    }
}
