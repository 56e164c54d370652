/// The controllers' ACL data buffers (Core Spec Vol 4, Part E, 4.1.1): their size from (LE) Read Buffer Size, the packets
/// handed to each controller and not yet completed (Number Of Completed Packets) across its connections, and the
/// connection whose send filled a buffer, while it stays full.
struct ControllerBuffers {
    /// What is known of one controller's buffer.
    struct Controller {
        /// (packet length, packets), once (LE) Read Buffer Size answered.
        var size: (length: Int, packets: Int)?
        /// Packets handed to the controller and not yet reported completed.
        var inFlight = 0
        /// The connection whose send filled the buffer, while it stays full.
        var filledBy: Int?
    }

    /// Controllers with an index below this are kept in an array by index; captures name a few, numbered from 0.
    /// Three dictionaries keyed by controller cost two to four hashes per host → controller ACL packet
    /// (docs/performance.md#controller-buffers). Higher indices (a Linux monitor may number its
    /// controllers up to 65,535) go to `sparse`.
    static let denseLimit = 64
    private var dense: [Controller] = []
    private var sparse: [UInt16: Controller] = [:]

    /// (packet length, packets) per controller.
    var sizes: [UInt16: (length: Int, packets: Int)] {
        var all: [UInt16: (length: Int, packets: Int)] = [:]
        for (i, c) in dense.enumerated() { if let size = c.size { all[UInt16(i)] = size } }
        for (key, c) in sparse { if let size = c.size { all[key] = size } }
        return all
    }

    /// The state of `controller`, changed in place (created empty the first time).
    @inline(__always)
    private mutating func withController<R>(_ controller: UInt16, _ body: (inout Controller) -> R) -> R {
        let i = Int(controller)
        if i < Self.denseLimit {
            if i >= dense.count { dense.append(contentsOf: repeatElement(Controller(), count: i + 1 - dense.count)) }
            return body(&dense[i])
        }
        return body(&sparse[controller, default: Controller()])
    }

    /// LE Read Buffer Size (v1 or v2): the buffer LE links use. A length of 0 means LE shares the BR/EDR buffer.
    mutating func leBufferSize(controller: UInt16, length: Int, packets: Int) {
        if length > 0 { withController(controller) { $0.size = (length, packets) } }
    }

    /// Read Buffer Size: the BR/EDR buffer, used when no LE buffer is known.
    mutating func bufferSize(controller: UInt16, length: Int, packets: Int) {
        withController(controller) { if $0.size == nil { $0.size = (length, packets) } }
    }

    /// One ACL packet handed to `controller` on connection `connection`. Returns the packets in flight when this one
    /// filled the buffer: a full period starts, charged to the connection (only when `canCharge`, i.e. the connection
    /// keeps room for another period); nil otherwise.
    mutating func sent(controller: UInt16, connection: Int, canCharge: Bool) -> Int? {
        withController(controller) { c in
            c.inFlight += 1
            guard let capacity = c.size?.packets, c.inFlight >= capacity, c.filledBy == nil, canCharge else { return nil }
            c.filledBy = connection
            return c.inFlight
        }
    }

    /// Packets the controller reports completed.
    mutating func completed(controller: UInt16, packets: Int) {
        withController(controller) { $0.inFlight = max(0, $0.inFlight - packets) }
    }

    /// After completions: the connection whose full period ended, when the buffer that was full has room again.
    mutating func roomAgain(controller: UInt16) -> Int? {
        withController(controller) { c in
            guard let connection = c.filledBy, let capacity = c.size?.packets, c.inFlight < capacity else { return nil }
            c.filledBy = nil
            return connection
        }
    }
}
