import BLEAnalysis
import BLECore
import BLEProtocols

/// LP-05 on a refusal that is no missing feature, when the link then changed what the refused procedure changes within
/// ``window``: the procedure ran all the same (the refusing side's own, or a retry), so nothing was lost (issue 48).
/// Measured: `lell-rf-lt256_blue2th-cafe-ots-att-05-81-pairing-cut-by-central.pcap`, the central rejects the
/// peripheral's LL_PHY_REQ (frame 13) with LL_REJECT_EXT_IND 0x0C at frame 14, sends its own LL_PHY_REQ at 19, and the
/// LL_PHY_UPDATE_IND at 25 moves the link to the 2M PHY the peripheral asked for.
extension LP05ProcedureUnsupported {
    static let window: Int64 = 2_000_000

    /// The change of the link's PHY, data length or parameters (by the refused opcode) within ``window`` after the
    /// refusal, with what changed.
    static func ranAnyway(_ opcode: LLControlOpcode?, _ ev: EvidenceEvent, _ c: Connection?) -> (frame: Int, what: String)? {
        guard let opcode, let c else { return nil }
        let soon = { (frame: Int, at: Timestamp) in frame > ev.frame && at.microseconds(since: ev.timestamp) <= window }
        switch opcode {
        case .phyReq:
            return c.link.phy.changes.first { soon($0.frame, $0.timestamp) }.map { ($0.frame, "its PHY changed to \($0.value)") }
        case .lengthReq:
            return c.link.dataLength.changes.first { soon($0.frame, $0.timestamp) }.map { ($0.frame, "its data length changed") }
        case .connectionParamReq:
            return c.link.parameters.changes.first { soon($0.frame, $0.timestamp) }.map { ($0.frame, "its parameters changed") }
        default:
            return nil
        }
    }

    /// The refusal told as context: the procedure ran all the same.
    static func ranAnyway(
        _ ev: EvidenceEvent, _ e: Evidence, what: String, done: (frame: Int, what: String)
    ) -> Diagnosis {
        let c = e.connection(ev.connection)
        let device = e.deviceName(c)
        return Diagnosis(
            rule: code, severity: .info, frame: ev.frame,
            message:
                "With \(device), \(what) (frame \(ev.frame)), and the link ran the procedure all the same: \(done.what) at frame \(done.frame). Nothing is lost.",
            headline: "procedure refused, then run, with \(device)",
            supporting: [CitedFrame(done.frame, done.what)],
            causes: ["the refusing side busy with a procedure of its own, which it then ran"],
            device: c?.peerAddress, connection: c?.number, fold: "\(device) ran")
    }
}
