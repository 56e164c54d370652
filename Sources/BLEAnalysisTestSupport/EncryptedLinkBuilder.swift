import BLEAnalysis
import BLECapture
import BLECore
import BLEProtocols
import BLESecurity
import BLETestSupport
import Foundation

/// An encrypted LE link built from typed PDUs: the encryption procedure in the clear, then every non-empty
/// PDU AES-CCM encrypted with a known LTK (Core Spec Vol 6, Part E), as the nRF Sniffer records a link it
/// has no key for (encrypted flag set, MIC not checked).
package struct EncryptedLinkBuilder {
    package static let ltkText = "0F241772AC270CAFEE654186F0A65D5F"
    package static let skdCentral: UInt64 = 0x1122_3344_5566_7788, skdPeripheral: UInt64 = 0x99AA_BBCC_DDEE_FF00
    package static let ivCentral: UInt32 = 0x0403_0201, ivPeripheral: UInt32 = 0x0807_0605

    package var b = NordicBuilder()
    package var event: UInt16 = 1
    package var counters: (UInt64, UInt64) = (0, 0)
    package var sn: (Bool, Bool) = (false, false)
    package let cipher: LLCipher
    package var phy: LEPHY
    /// The sniffer's direction flag says the other side sent each packet (an nRF Sniffer that lost the link).
    package var directionFlagWrong = false

    package init(phy: LEPHY = .le1M) {
        self.phy = phy
        b.phy = phy
        let ltk = Key128(hex: Self.ltkText)!
        let le = { (v: UInt64, n: Int) in (0..<n).map { UInt8(truncatingIfNeeded: v >> UInt64(8 * $0)) } }
        let sk = LinkLayerEncryption.sessionKey(ltk: ltk, skdm: le(Self.skdCentral, 8), skds: le(Self.skdPeripheral, 8))
        cipher = LLCipher(
            sessionKey: sk, iv: LinkLayerEncryption.iv(ivm: le(UInt64(Self.ivCentral), 4), ivs: le(UInt64(Self.ivPeripheral), 4)))
        b.connect()
    }

    package mutating func clear(_ control: LLControlPDU, central: Bool) {
        b.data(.control, LLControlPacket(control).bytes, central: central, sn: central ? sn.0 : sn.1, event: event)
        if central { sn.0.toggle() } else { sn.1.toggle(); event += 1 }
    }

    /// An L2CAP PDU on channel `cid` in the clear, in one LL PDU.
    package mutating func clearL2CAP(cid: UInt16, _ payload: [UInt8], central: Bool) {
        let pdu = [UInt8(payload.count), 0, UInt8(cid & 0xFF), UInt8(cid >> 8)] + payload
        b.data(.start, pdu, central: central, sn: central ? sn.0 : sn.1, event: event)
        if central { sn.0.toggle() } else { sn.1.toggle(); event += 1 }
    }

    /// `byCapturer`: the encrypted PDUs as a sniffer that had the key wrote them (plaintext, flagged encrypted, MIC ok).
    package mutating func startEncryption(byCapturer: Bool = false) {
        clear(.encReq(rand: 0, ediv: 0, skdCentral: Self.skdCentral, ivCentral: Self.ivCentral), central: true)
        clear(.encRsp(skdPeripheral: Self.skdPeripheral, ivPeripheral: Self.ivPeripheral), central: false)
        clear(.startEncReq, central: false)
        encrypted(.control, LLControlPacket(.startEncRsp).bytes, central: true, byCapturer: byCapturer)
        encrypted(.control, LLControlPacket(.startEncRsp).bytes, central: false, byCapturer: byCapturer)
    }

    /// One encrypted PDU (`tamper`: its MIC fails), or with `byCapturer` its plaintext as a sniffer that decrypted it
    /// wrote it (flagged encrypted, MIC ok, the MIC removed); either way it takes the sender's next packet counter.
    package mutating func encrypted(_ llid: LLID, _ plaintext: [UInt8], central: Bool, tamper: Bool = false, byCapturer: Bool = false) {
        let counter = central ? counters.0 : counters.1
        var sealed = cipher.encrypt(header0: llid.rawValue, plaintext: plaintext, packetCounter: counter, centralToPeripheral: central)
        if tamper { sealed[0] ^= 0x01 }
        b.data(
            llid, byCapturer ? plaintext : sealed, central: central != directionFlagWrong, sn: central ? sn.0 : sn.1, event: event,
            encrypted: true, micOK: byCapturer)
        if central { counters.0 += 1; sn.0.toggle() } else { counters.1 += 1; sn.1.toggle(); event += 1 }
    }

    /// A PDU the sender sent and the sniffer missed: its packet counter and sequence number go by unseen.
    package mutating func missed(central: Bool) {
        if central { counters.0 += 1; sn.0.toggle() } else { counters.1 += 1; sn.1.toggle(); event += 1 }
    }

    /// The record just written, once more (an LL retransmission: the receiver did not acknowledge it).
    package mutating func retransmitLast() {
        var last = b.records.last!
        last.frame = b.records.count + 1
        last.micros += 1250
        b.records.append(last)
    }

    /// A notification of `value` on handle 0x002A, sent by the peripheral in fragments of `fragment` bytes.
    package mutating func notify(_ value: [UInt8], fragment: Int = 27, byCapturer: Bool = false) {
        let att: [UInt8] = [0x1B, 0x2A, 0x00] + value
        let pdu = [UInt8(att.count & 0xFF), UInt8(att.count >> 8), 0x04, 0x00] + att
        var start = 0
        while start < pdu.count {
            let end = min(start + fragment, pdu.count)
            encrypted(start == 0 ? .start : .continuation, Array(pdu[start..<end]), central: false, byCapturer: byCapturer)
            start = end
        }
    }

    package func capture() throws -> CaptureFile {
        let owned = b.records.map { r in
            OwnedRecord(
                frame: r.frame, timestamp: Timestamp(microseconds: r.micros), direction: .unknown, kind: .linkLayer,
                originalLength: r.origLen, linkType: 272, bytes: r.bytes)
        }
        return try CaptureFile.open(bytes: CaptureWriter.pcap(owned, linkType: 272), name: "encrypted.pcap")
    }
}

/// One pass of the analyzer with keys: the notifications it decrypted, its timeline, and the analyzer.
package enum LinkEncryptionRun {
    package struct Result {
        package var notifications: [(frame: Int, value: [UInt8])] = []
        package var timeline: [TimelineEvent] = []
        package var analyzer: Analyzer
    }

    package static func run(_ capture: CaptureFile, keys: LinkKeyMaterial = LinkKeyMaterial()) -> Result {
        var notifications: [(Int, [UInt8])] = []
        var timeline: [TimelineEvent] = []
        let a = Analyzer.analyze(
            capture, options: AnalyzerOptions(timeline: true, keys: keys),
            configure: { a in
                a.onEvent = { e in
                    timeline.append(e)
                    if e.layer == .att, e.code == 0x1B, let v = e.value { notifications.append((e.frame, v)) }
                }
            })
        return Result(notifications: notifications.map { ($0.0, $0.1) }, timeline: timeline, analyzer: a)
    }
}
