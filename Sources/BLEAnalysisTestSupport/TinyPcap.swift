import Foundation

/// A test-only pcap/pcapng reader (the real readers live in BLECapture): records as (frame, µs, link type, bytes).
package enum TinyPcap {
    package struct Rec {
        package var frame: Int
        package var micros: Int64
        package var linkType: UInt32
        package var bytes: [UInt8]
        package var origLen: Int

        package init(frame: Int, micros: Int64, linkType: UInt32, bytes: [UInt8], origLen: Int) {
            (self.frame, self.micros, self.linkType, self.bytes, self.origLen) = (frame, micros, linkType, bytes, origLen)
        }
    }

    package static func read(_ path: String) -> [Rec]? {
        guard let d = FileManager.default.contents(atPath: path) else { return nil }
        let b = [UInt8](d)
        func u32(_ o: Int, _ be: Bool) -> UInt32 {
            let v = UInt32(b[o]) | UInt32(b[o + 1]) << 8 | UInt32(b[o + 2]) << 16 | UInt32(b[o + 3]) << 24
            return be ? v.byteSwapped : v
        }
        func u16(_ o: Int, _ be: Bool) -> UInt16 { let v = UInt16(b[o]) | UInt16(b[o + 1]) << 8; return be ? v.byteSwapped : v }
        var out: [Rec] = []
        let magic = u32(0, false)
        if magic == 0x0A0D_0D0A {  // pcapng
            var o = 0, be = false
            var linkTypes: [UInt32] = [], tsres: [Int64] = []
            while o + 12 <= b.count {
                let type = u32(o, be)
                if type == 0x0A0D_0D0A { be = u32(o + 8, false) != 0x1A2B_3C4D }
                let len = Int(u32(o + 4, be))
                guard len >= 12, o + len <= b.count else { break }
                if type == 1 {
                    linkTypes.append(UInt32(u16(o + 8, be)))
                    var res: Int64 = 1_000_000
                    var p = o + 16
                    while p + 4 <= o + len - 4 {
                        let code = u16(p, be), olen = Int(u16(p + 2, be))
                        if code == 0 { break }
                        if code == 9 { let v = b[p + 4]; res = v & 0x80 == 0 ? Int64(pow(10, Double(v))) : Int64(1) << Int64(v & 0x7F) }
                        p += 4 + (olen + 3) / 4 * 4
                    }
                    tsres.append(res)
                } else if type == 6 {
                    let iface = Int(u32(o + 8, be))
                    let ts = Int64(u32(o + 12, be)) << 32 | Int64(u32(o + 16, be))
                    let cap = Int(u32(o + 20, be)), orig = Int(u32(o + 24, be))
                    let res = tsres[iface]
                    let micros = res >= 1_000_000 ? ts / (res / 1_000_000) : ts * (1_000_000 / max(res, 1))
                    out.append(
                        Rec(
                            frame: out.count + 1, micros: micros, linkType: linkTypes[iface],
                            bytes: Array(b[(o + 28)..<(o + 28 + cap)]), origLen: orig))
                }
                o += len
            }
        } else {
            let be = magic == 0xD4C3_B2A1 || magic == 0x4D3C_B2A1
            let nano = magic == 0xA1B2_3C4D || magic == 0x4D3C_B2A1
            let lt = u32(20, be)
            var o = 24
            while o + 16 <= b.count {
                let s = Int64(u32(o, be)), f = Int64(u32(o + 4, be)), cap = Int(u32(o + 8, be)), orig = Int(u32(o + 12, be))
                guard o + 16 + cap <= b.count else { break }
                out.append(
                    Rec(
                        frame: out.count + 1, micros: s * 1_000_000 + (nano ? f / 1000 : f), linkType: lt,
                        bytes: Array(b[(o + 16)..<(o + 16 + cap)]), origLen: orig))
                o += 16 + cap
            }
        }
        return out
    }
}
