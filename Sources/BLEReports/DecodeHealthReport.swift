import BLEAnalysis
import BLECore

/// `"decode_health": {...}`, shared by `info --json` and `report --format json` (keys documented in the README).
public func writeDecodeHealth(_ h: DecodeHealth, into w: inout JSONWriter, key: String = "decode_health") {
    func counts(_ c: DecodeCounts) {
        w.field("l2cap_pdus", c.l2capPDUs)
        w.field("decoded", c.decoded)
        w.field("att", c.att)
        w.field("smp", c.smp)
        w.field("signalling", c.signalling)
        w.field("credit_frames", c.creditFrames)
        w.field("known_channel_pdus", c.knownChannelPDUs)
        w.field("unclaimed_pdus", c.unclaimedPDUs)
        w.field("reassembly_dropped", c.reassemblyDropped)
        w.field("cut_by_capturer", c.cutByCapturer)
        w.field("cut_at_end", c.cutAtEnd)
        w.field("encrypted_undecrypted", c.encryptedUndecrypted)
    }
    w.beginObject(key)
    w.field("headline", h.headline)
    w.field("acl_packets", h.aclPackets)
    w.field("acl_bytes", h.aclBytes)
    counts(h.totals)
    w.field("vendor_trace_packets", h.vendorTrace.packets)
    w.field("vendor_trace_bytes", h.vendorTrace.bytes)
    w.beginArray("warnings")
    for c in h.warnings { w.value(c.warning ?? "") }
    w.endArray()
    w.beginArray("connections")
    for c in h.connections {
        w.beginObject()
        w.field("conn", c.handle)
        w.field("conn_number", c.number)
        w.field("link", c.inferred ? nil : (c.isLE ? "le" : c.isBREDR ? "bredr" : nil))
        w.field("inferred", c.inferred)
        w.field("acl_packets", c.aclPackets)
        w.field("acl_bytes", c.aclBytes)
        counts(c.counts)
        w.beginObject("known_by_psm")
        for (psm, n) in c.counts.knownByPSM.sorted(by: { $0.key < $1.key }) { w.field(hex(psm, width: 4), n) }
        w.endObject()
        w.beginArray("unclaimed_cids")
        for (cid, t) in c.counts.unclaimedByCID.sorted(by: { $0.key < $1.key }) {
            w.beginObject()
            w.field("cid", cid)
            w.field("pdus", t.pdus)
            w.field("bytes", t.bytes)
            w.field("first_frame", t.firstFrame)
            w.field("last_frame", t.lastFrame)
            w.endObject()
        }
        w.endArray()
        w.beginArray("drop_frames")
        for f in c.counts.dropFrames { w.value(f) }
        w.endArray()
        w.field("warning", c.warning)
        w.field("warning_frame", c.warningFrame)
        w.field("decryption", c.decryption)
        w.endObject()
    }
    w.endArray()
    w.endObject()
}

extension DecodeHealth {
    /// For people: the headline, then each connection's warning (the answer first, the counts in the JSON).
    public func textLines() -> [String] {
        var lines = [headline]
        for c in warnings { lines.append("warning: " + (c.warning ?? "") + (c.warningFrame.map { " (frame \($0))" } ?? "")) }
        if let v = vendorTraceSummary { lines.append("note: " + v) }
        lines += decryptions.map { "note: " + $0 }
        return lines
    }
}
