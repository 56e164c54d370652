/// The controllers' ACL data buffers (Core Spec Vol 4, Part E, 4.1.1): their size from (LE) Read Buffer Size, the packets
/// handed to each controller and not yet completed (Number Of Completed Packets) across its connections, and the
/// connection whose send filled a buffer, while it stays full.
struct ControllerBuffers {
    /// (packet length, packets) per controller.
    private(set) var sizes: [UInt16: (length: Int, packets: Int)] = [:]
    private var inFlight: [UInt16: Int] = [:]
    private var filledBy: [UInt16: Int] = [:]

    /// LE Read Buffer Size (v1 or v2): the buffer LE links use. A length of 0 means LE shares the BR/EDR buffer.
    mutating func leBufferSize(controller: UInt16, length: Int, packets: Int) {
        if length > 0 { sizes[controller] = (length, packets) }
    }

    /// Read Buffer Size: the BR/EDR buffer, used when no LE buffer is known.
    mutating func bufferSize(controller: UInt16, length: Int, packets: Int) {
        if sizes[controller] == nil { sizes[controller] = (length, packets) }
    }

    /// One ACL packet handed to `controller` on connection `connection`. Returns the packets in flight when this one
    /// filled the buffer: a full period starts, charged to the connection (only when `canCharge`, i.e. the connection
    /// keeps room for another period); nil otherwise.
    mutating func sent(controller: UInt16, connection: Int, canCharge: Bool) -> Int? {
        let total = (inFlight[controller] ?? 0) + 1
        inFlight[controller] = total
        guard let capacity = sizes[controller]?.packets, total >= capacity, filledBy[controller] == nil, canCharge else { return nil }
        filledBy[controller] = connection
        return total
    }

    /// Packets the controller reports completed.
    mutating func completed(controller: UInt16, packets: Int) {
        inFlight[controller] = max(0, (inFlight[controller] ?? 0) - packets)
    }

    /// After completions: the connection whose full period ended, when the buffer that was full has room again.
    mutating func roomAgain(controller: UInt16) -> Int? {
        guard let connection = filledBy[controller], let capacity = sizes[controller]?.packets,
            (inFlight[controller] ?? 0) < capacity
        else { return nil }
        filledBy.removeValue(forKey: controller)
        return connection
    }
}
