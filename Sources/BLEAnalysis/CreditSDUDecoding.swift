import BLECodecs
import BLECore

extension Analyzer {
    /// Decodes the SDU of an LE credit-based channel with the loaded codec specs whose `match` names its PSM
    /// (SPEC_FORMAT.md, `psm`); a value the spec finds wrong is a `codec.invalid` finding, as for attribute values.
    /// nil when no codecs are loaded or none matches.
    func decodeCreditSDU(_ sdu: [UInt8], psm: UInt16, cid: UInt16, direction: Direction, frame: Int) -> DecodedValue? {
        guard let codecs = options.codecs else { return nil }
        let context = CodecContext(direction: direction, psm: psm)
        guard let decoded = codecs.decode(sdu, context: context) else { return nil }
        if !decoded.valid {
            findings.append(
                Finding(
                    .warning,
                    .init(
                        code: "codec.invalid",
                        message: "\(decoded.codec).\(decoded.message) on L2CAP CID \(hex(cid, width: 4)) (PSM \(hex(psm, width: 4))): "
                            + (decoded.problems.isEmpty ? "invalid" : decoded.problems.joined(separator: "; "))),
                    frame: frame))
        }
        return decoded
    }
}
