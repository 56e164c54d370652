import BLECodecs
import BLECore
import BLEProtocols

extension ConnectionMachine {
    /// `declarations`: the request asked for characteristic declarations (0x2803); nil when the
    /// request is not in the capture, then guessed from the item length (5 or 19 bytes).
    /// The handles a list-carrying response names, in the order Wireshark lists them: group
    /// start handles, Find Information handles, Read By Type item handles (plus the value handle of
    /// a characteristic declaration).
    static func listedHandles(_ pdu: ATTPDU, declarations: Bool?) -> [UInt16]? {
        switch pdu {
        case .readByGroupTypeResponse(let groups): return groups.map(\.start)
        case .findInformationResponse(let info): return info.entries.map(\.handle)
        case .findByTypeValueResponse(let ranges): return ranges.map(\.start)
        case .readByTypeResponse(let items):
            return items.flatMap { item -> [UInt16] in
                if declarations ?? (item.value.count == 5 || item.value.count == 19), item.value.count >= 3 {
                    return [item.handle, UInt16(item.value[1]) | UInt16(item.value[2]) << 8]
                }
                return [item.handle]
            }
        case .multipleHandleValueNotification(let items): return items.map(\.handle)
        case .readMultipleRequest(let handles), .readMultipleVariableRequest(let handles): return handles
        default: return nil
        }
    }

    /// The attribute values a list-carrying response holds (Read By Group Type: service UUIDs;
    /// Read By Type of anything but characteristic declarations; Read Multiple Variable).
    static func listedValues(_ pdu: ATTPDU, declarations: Bool?) -> [[UInt8]]? {
        switch pdu {
        case .readByGroupTypeResponse(let groups): return groups.map(\.value)
        case .readByTypeResponse(let items):
            if declarations ?? items.allSatisfy({ $0.value.count == 5 || $0.value.count == 19 }) { return nil }
            return items.map(\.value)
        case .readMultipleVariableResponse(let items): return items.map(\.value)
        case .multipleHandleValueNotification(let items): return items.map(\.value)
        default: return nil
        }
    }

    /// Both sides of a connection may be GATT servers (phones are too): the peer's database answers
    /// what this side sends as a client (requests, commands, confirmations → tx) and what the peer
    /// sends as a server (responses, notifications, indications → rx); the local one the reverse.
    static func serverDatabase(_ method: ATTMethodType, _ direction: Direction) -> GATTSide {
        let clientToServer = method == .request || method == .command || method == .confirmation
        let sentByUs = direction != .rx
        return clientToServer == sentByUs ? .peer : .local
    }

    /// The one-line decode. Value-carrying PDUs say only their handle: the value is in the event
    /// (`value`), and rendering it twice would double the cost of a timeline of notifications.
    static func summary(_ typed: ATTPDU?, opcode: ATTOpcode, payload: UnsafeRawBufferPointer) -> String {
        guard let typed else { return "malformed: " + hexString(payload) }
        if let h = summaryHandle(typed) { return "handle=" + hex(h, width: 4) }
        return strip(typed.summary, prefix: opcode.description)
    }

    /// The handle of a value-carrying PDU, whose summary is only `handle=0x002a` (``TimelineEvent/summaryHandle``).
    @inline(__always)
    static func summaryHandle(_ typed: ATTPDU?) -> UInt16? {
        switch typed {
        case .handleValueNotification(let h, _)?, .handleValueIndication(let h, _)?, .writeCommand(let h, _)?, .writeRequest(let h, _)?:
            h
        default: nil
        }
    }

    /// ``ATTOpcode/description`` of every opcode, for the timeline's `name`: an array index instead of the opcode table's
    /// dictionary lookup per event.
    static let opcodeNames: [String] = (0...255).map { ATTOpcode(rawValue: UInt8($0)).description }

    static func strip(_ summary: String, prefix: String) -> String {
        guard summary.hasPrefix(prefix) else { return summary }
        return String(summary.dropFirst(prefix.count).drop(while: { $0 == " " }))
    }

    /// The timeline event of one ATT PDU as its bytes say it (opcode name, summary or handle, values, lists, bearer,
    /// CID); the attribute's name is the analyzer's to add.
    static func attEventText(
        _ typed: ATTPDU?, opcode: ATTOpcode, input: ATTInput, bearerKind: ATTBearerKind, handle: UInt16, number: Int
    ) -> TimelineEvent {
        let first = opcode.rawValue, name = Self.opcodeNames[Int(first)]
        var e =
            if let h = Self.summaryHandle(typed) {
                TimelineEvent(
                    frame: input.frame, timestamp: input.timestamp, connection: handle, direction: input.direction,
                    layer: .att, code: UInt32(first), name: name, summaryHandle: h)
            } else {
                TimelineEvent(
                    frame: input.frame, timestamp: input.timestamp, connection: handle, direction: input.direction,
                    layer: .att, code: UInt32(first), name: name,
                    summary: Self.summary(typed, opcode: opcode, payload: input.payload))
            }
        e.handle = typed?.attributeHandle
        e.value = typed?.value
        if let typed {
            e.handles = Self.listedHandles(typed, declarations: nil)
            e.values = Self.listedValues(typed, declarations: nil)
        }
        if case .findByTypeValueRequest(let r)? = typed { e.value = r.value }
        e.connectionNumber = number
        e.bearer = bearerKind
        e.cid = input.cid
        return e
    }
}
