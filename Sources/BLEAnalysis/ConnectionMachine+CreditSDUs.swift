import BLECodecs
import BLECore
import BLEProtocols

/// K-frames of credit-based channels, as the link's ``ChannelMux`` names them: their failures, and their SDUs
/// handed on (to ATT on an enhanced bearer, to a codec spec matching the PSM, to the observers, to the timeline).
extension ConnectionMachine {
    /// What one K-frame of a credit-based channel did (``KFrameOutcome``): its failures as findings, its SDU handed on.
    func processKFrame(_ out: KFrameOutcome, pdu: L2CAPPDU, direction: Direction, timestamp: Timestamp) {
        if out.withoutCredit {
            sink.findings.append(
                Finding(
                    .warning,
                    .init(
                        .l2capNoCredit,
                        message: "K-frame on \(hex(pdu.channel, width: 4)) sent without a credit"), frame: pdu.lastFrame))
        }
        if out.tooShortToStart {
            sink.findings.append(
                Finding(
                    .warning,
                    .init(
                        .l2capShortKFrame,
                        message:
                            "first K-frame of an SDU on \(hex(pdu.channel, width: 4)) has \(pdu.payload.count) bytes, fewer than the 2-byte SDU length"
                    ),
                    frame: pdu.lastFrame))
        }
        if let n = out.overMPS {
            sink.findings.append(Finding(.warning, .kframeOverMPS(n, cid: pdu.channel), frame: pdu.lastFrame))
        }
        if let n = out.overMTU {
            sink.findings.append(Finding(.warning, .sduOverMTU(n, cid: pdu.channel), frame: pdu.lastFrame))
        }
        guard let sdu = out.sdu else { return }
        handOnSDU(sdu, spsm: out.spsm, bearer: out.bearer, pdu: pdu, direction: direction, timestamp: timestamp)
        if out.sduLongerThanAnnounced {
            sink.findings.append(
                Finding(
                    .warning,
                    .init(
                        .l2capSDUTooLong,
                        message: "credit-based SDU on \(hex(pdu.channel, width: 4)) longer than its announced \(sdu.announced) bytes"),
                    frame: pdu.lastFrame))
        }
    }

    /// A whole SDU: an ATT PDU on an enhanced ATT bearer, or a stream the observers see by PSM.
    func handOnSDU(
        _ sdu: CreditChannelState.SDU, spsm: UInt16, bearer: Int?, pdu: L2CAPPDU, direction: Direction, timestamp: Timestamp
    ) {
        if let b = bearer {
            // An enhanced ATT bearer: each SDU is one ATT PDU (Core Spec Vol 3, Part G, 5.3.2).
            sdu.bytes.withUnsafeBytes { raw in
                processATT(
                    ATTInput(
                        payload: raw, frame: pdu.lastFrame, l2capBytes: sdu.kframeBytes, direction: direction, timestamp: timestamp,
                        cid: pdu.channel, bearer: .dynamic(b)))
            }
            return
        }
        // A codec spec may match the channel's PSM: its SDUs are then decoded like attribute values.
        let decoded = decodeCreditSDU(sdu.bytes, psm: spsm, cid: pdu.channel, direction: direction, frame: pdu.lastFrame)
        if !sink.observers.isEmpty {
            // An LE CoC stream (Object Transfer, firmware images over L2CAP …): throughput sees its SDUs by PSM.
            sdu.bytes.withUnsafeBytes { raw in
                var e = AttributeValueEvent(
                    frame: pdu.lastFrame, timestamp: timestamp, connection: self.handle, connectionNumber: number,
                    direction: direction, kind: .creditSDU, handle: pdu.channel, characteristic: nil, service: nil,
                    decoded: decoded, l2capBytes: sdu.kframeBytes, link: linkSnapshot)
                e.psm = spsm
                sink.deliver(e, value: raw.bytes)
            }
        }
        guard sink.timeline else { return }
        var e = TimelineEvent(
            frame: pdu.lastFrame, timestamp: timestamp, connection: self.handle, direction: direction,
            layer: .l2cap, code: UInt32(pdu.channel), name: "LE Credit Based SDU",
            summary: "cid=\(hex(pdu.channel, width: 4)) spsm=\(hex(spsm, width: 4)) \(sdu.bytes.count) bytes from frame \(sdu.firstFrame)")
        e.value = sdu.bytes
        e.decoded = decoded
        emit(e)
    }

    /// Decodes the SDU of an LE credit-based channel with the loaded codec specs whose `match` names its PSM
    /// (SPEC_FORMAT.md, `psm`); a value the spec finds wrong is a `codec.invalid` finding, as for attribute values.
    /// nil when no codecs are loaded or none matches.
    func decodeCreditSDU(_ sdu: [UInt8], psm: UInt16, cid: UInt16, direction: Direction, frame: Int) -> DecodedValue? {
        guard let codecs = capture.codecs else { return nil }
        let context = CodecContext(direction: direction, psm: psm)
        guard let decoded = codecs.decode(sdu, context: context) else { return nil }
        if !decoded.valid {
            sink.findings.append(
                Finding(
                    .warning,
                    .init(
                        .codecInvalid,
                        message: "\(decoded.codec).\(decoded.message) on L2CAP CID \(hex(cid, width: 4)) (PSM \(hex(psm, width: 4))): "
                            + (decoded.problems.isEmpty ? "invalid" : decoded.problems.joined(separator: "; "))),
                    frame: frame))
        }
        return decoded
    }
}

extension FindingKind {
    /// A K-frame whose information payload is longer than the receiver's MPS (Core Spec Vol 3, Part A, 3.4.3).
    static func kframeOverMPS(_ n: Int, cid: UInt16) -> FindingKind {
        .init(
            .l2capKFrameOverMPS,
            message:
                "K-frame on \(hex(cid, width: 4)) carries \(n) bytes, more than the MPS its receiver announced: a protocol error (decoded anyway)"
        )
    }
    /// An SDU whose announced length is more than the receiver's MTU (3.4.3).
    static func sduOverMTU(_ n: Int, cid: UInt16) -> FindingKind {
        .init(
            .l2capSDUOverMTU,
            message:
                "SDU on \(hex(cid, width: 4)) announces \(n) bytes, more than the MTU its receiver announced: a protocol error (decoded anyway)"
        )
    }
}
