import BLEAnalysis
import BLECore
import BLEProtocols

/// The report's `audio.connections[].obex`: each OBEX session on an RFCOMM DLC (PBAP, MAP, FTP, OPP) with its
/// operations (schemas/report.schema.json).
extension AudioReport {
    static func obex(_ sessions: [OBEXSession], _ w: inout JSONWriter) {
        w.beginArray("obex")
        for s in sessions {
            w.beginObject()
            w.field("dlci", s.psm == nil ? Int(s.dlci) : nil)
            w.field("server_channel", s.psm == nil ? Int(s.dlci >> 1) : nil)
            w.field("psm", s.psm.map(Int.init))
            w.field("service", s.service)
            w.field("this_side", s.thisSideIsClient ? "client" : "server")
            w.field("connect_frame", s.connectFrame)
            w.field("connect_result", s.connectResult?.description)
            w.field("connection_id", s.connectionID.map(Int.init))
            w.field("disconnect_frame", s.disconnectFrame)
            w.field("requests", s.requests)
            w.field("responses", s.responses)
            w.beginArray("operations")
            for op in s.operations { operation(op, &w) }
            w.endArray()
            frames("malformed", s.malformed, &w)
            w.endObject()
        }
        w.endArray()
    }

    static func operation(_ op: OBEXOperation, _ w: inout JSONWriter) {
        w.beginObject()
        w.field("opcode", op.opcode.description)
        w.field("name", op.name)
        w.field("type", op.type)
        w.field("first_frame", op.firstFrame)
        w.field("request_packets", op.requestPackets)
        w.field("response_packets", op.responsePackets)
        w.field("body_bytes", op.bodyBytes)
        w.field("response", op.response?.description)
        w.field("response_frame", op.responseFrame)
        w.field("phonebook_size", op.phonebookSize)
        w.endObject()
    }
}
