import BLEAnalysis
import BLECore
import BLEProtocols

/// BR/EDR audio compared between two captures of the same headset: the A2DP codec chosen and its stream's rate, the
/// profile versions the peer's SDP records announce, the hands-free codec selected, the SCO/eSCO links' air mode.
enum DiffAudio {
    static func compare(_ a: Connection, _ b: Connection, fileA: FileAnalysis, fileB: FileAnalysis) -> [Difference] {
        guard let pa = a.profiles, let pb = b.profiles else { return [] }
        let pair = "#\(a.number)↔#\(b.number)"
        var out: [Difference] = []
        func add(_ kind: String, _ impact: DiffImpact, _ what: String, _ va: String?, _ vb: String?, _ fa: Int?, _ fb: Int?) {
            guard va != vb else { return }
            out.append(
                Difference(
                    .audio, kind, impact: impact, subject: "\(pair) \(what)", a: va, b: vb, frames: (fa, fb),
                    connections: (a.number, b.number),
                    magnitude: 1))
        }
        let sa = pa.a2dp.streams.first, sb = pb.a2dp.streams.first
        add(
            "a2dp-codec", .major, "A2DP codec", sa?.codec?.description, sb?.codec?.description, sa?.configurationFrame,
            sb?.configurationFrame)
        if let ra = sa?.media.bitsPerSecond, let rb = sb?.media.bitsPerSecond, ra > 0 {
            let change = (rb - ra) / ra
            if abs(change) >= 0.05 {
                var d = Difference(
                    .audio, "a2dp-rate", impact: change <= -0.2 ? .major : .minor, subject: "\(pair) A2DP stream rate",
                    a: kbps(ra), b: kbps(rb), frames: (sa?.media.firstFrame, sb?.media.firstFrame), connections: (a.number, b.number),
                    magnitude: abs(change))
                d.change = change
                out.append(d)
            }
        }
        let va = versions(pa), vb = versions(pb)
        for profile in Set(va.keys).union(vb.keys).sorted() {
            add("profile-version", .minor, "\(profile) version", va[profile]?.0, vb[profile]?.0, va[profile]?.1, vb[profile]?.1)
        }
        let ha = pa.hfp?.codecSelections.last, hb = pb.hfp?.codecSelections.last
        add(
            "hfp-codec", .major, "HFP codec selected", ha.map { HFPCodec.name($0.codec) }, hb.map { HFPCodec.name($0.codec) }, ha?.frame,
            hb?.frame)
        let la = fileA.classic.synchronousLinks.last { $0.aclConnection == a.number && $0.established }
        let lb = fileB.classic.synchronousLinks.last { $0.aclConnection == b.number && $0.established }
        add(
            "sco-air-mode", .major, "call audio air mode", la?.airMode?.description, lb?.airMode?.description, la?.startFrame,
            lb?.startFrame)
        return out
    }

    /// The peer's profile versions by profile name (`Handsfree` → `1.8`), with the frame of the record.
    static func versions(_ p: ClassicProfilesResult) -> [String: (String, Int)] {
        var out: [String: (String, Int)] = [:]
        for s in p.sdp.services where s.fromPeer {
            for v in s.profiles {
                out[SDPServiceClass.name(v.profile) ?? v.profile.description] = (SDPRecord.versionText(v.version), s.frame)
            }
        }
        return out
    }

    static func kbps(_ bps: Double) -> String { String(fractionDigits: 1, bps / 1000) + " kbps" }
}
