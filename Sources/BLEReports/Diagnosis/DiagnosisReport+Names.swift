import BLEAnalysis
import BLECore

extension DiagnosisReport {
    /// `"names": [{"address", "name", "shown", "source", "frame", "shortened", "cut"}]`: the name the capture gave each
    /// peer the story and the findings describe (diagnose.schema.json#/$defs/named).
    static func writeNames(_ names: [NamedPeer], to w: inout JSONWriter) {
        w.beginArray("names")
        for n in names {
            w.beginObject()
            w.field("address", n.address)
            writeNameFields(n.name, to: &w)
            w.endObject()
        }
        w.endArray()
    }

    /// `"key": {"name", "shown", "source", "frame", "shortened", "cut"}`, or `"key": null` for a peer the capture does not
    /// name (diagnose.schema.json#/$defs/name).
    static func writeName(_ name: PeerName?, key: String, to w: inout JSONWriter) {
        guard let name else {
            w.fieldNull(key)
            return
        }
        w.beginObject(key)
        writeNameFields(name, to: &w)
        w.endObject()
    }

    private static func writeNameFields(_ name: PeerName, to w: inout JSONWriter) {
        w.field("name", name.text)
        w.field("shown", name.shown)
        w.field("source", name.source.rawValue)
        w.field("frame", name.frame)
        w.field("shortened", name.shortened)
        w.field("cut", name.cut)
    }
}
