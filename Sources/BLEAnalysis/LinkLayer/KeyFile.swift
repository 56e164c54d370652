import BLECapture
import BLECore
import BLEProtocols
import BLEYAML

/// A key file (`--keys FILE`): the keys of devices whose links an air capture encrypted.
///
/// ```yaml
/// # One entry per device or key; every field is optional but each entry needs an ltk or an irk.
/// # Keys are written most significant byte first, as sniffers, crackle and Wireshark print them.
/// - address: C0:FF:EE:11:22:33      # the device the keys belong to (public or identity address)
///   ltk: 0F241772AC270CAFEE654186F0A65D5F
///   ediv: 0x1234                    # with rand: selects the LTK the way LL_ENC_REQ does (legacy pairing)
///   rand: 0x0123456789ABCDEF
///   irk: 00112233445566778899AABBCCDDEEFF   # names the device behind its resolvable private addresses
///   csrk: ...                       # accepted and kept; not used for decryption
/// ```
extension LinkKeyMaterial {
    public struct LoadError: Error, CustomStringConvertible {
        public var description: String
    }

    /// Reads a key file's text. - Throws: ``LoadError`` naming the file, the line and the field.
    public init(keyFile text: String, path: String = "key file") throws(LoadError) {
        let node: Node?
        do { node = try YAML.compose(yaml: text) } catch { throw LoadError(description: "\(path): not valid YAML: \(error)") }
        guard let list = node?.sequence else {
            throw LoadError(description: "\(path): expected a list of entries (- ltk: …, address: …)")
        }
        var material = LinkKeyMaterial()
        for entry in list {
            let line = (entry.mark?.line).map { ":\($0)" } ?? ""
            guard let m = entry.mapping else {
                throw LoadError(description: "\(path)\(line): expected a mapping (ltk:, irk:, address:, ediv:, rand:)")
            }
            func key(_ name: String) throws(LoadError) -> [UInt8]? {
                guard let s = m[name]?.scalar?.string else { return nil }
                guard let bytes = LinkKeyMaterial.parseKey(s) else {
                    throw LoadError(
                        description: "\(path)\(line): \(name) '\(s)' is not 16 bytes of hex (32 hex digits, most significant first)")
                }
                return bytes
            }
            func integer(_ name: String, max: UInt64) throws(LoadError) -> UInt64? {
                guard let s = m[name]?.scalar?.string else { return nil }
                let t = s.lowercased()
                guard let v = t.hasPrefix("0x") ? UInt64(t.dropFirst(2), radix: 16) : UInt64(t), v <= max else {
                    throw LoadError(description: "\(path)\(line): \(name) '\(s)' is not a number up to \(max)")
                }
                return v
            }
            var address: LLDeviceAddress? = nil
            if let s = m["address"]?.scalar?.string {
                guard let a = BDAddress(String(s.prefix(17))) else {
                    throw LoadError(description: "\(path)\(line): address '\(s)' is not AA:BB:CC:DD:EE:FF")
                }
                address = LLDeviceAddress(a.value, isRandom: s.lowercased().contains("random"))
            }
            let ltk = try key("ltk"), irk = try key("irk")
            _ = try key("csrk")
            let ediv = try integer("ediv", max: 0xFFFF), rand = try integer("rand", max: .max)
            guard ltk != nil || irk != nil else { throw LoadError(description: "\(path)\(line): give an ltk or an irk") }
            if let ltk {
                material.linkKeys.append(
                    LinkKey(ltk: ltk, ediv: ediv.map(UInt16.init), rand: rand, address: address?.value, source: .keyFile(path)))
            }
            if let irk { material.identityKeys.append(IdentityKey(irk: irk, identity: address, source: .keyFile(path))) }
        }
        self = material
    }

    /// `--ltk HEX`: a key for any encrypted link in the capture.
    public init(ltkOption text: String) throws(LoadError) {
        guard let bytes = LinkKeyMaterial.parseKey(text) else {
            throw LoadError(
                description: "--ltk '\(text)' is not 16 bytes of hex (32 hex digits, most significant first, as sniffers print keys)")
        }
        self.init(linkKeys: [LinkKey(ltk: bytes, source: .commandLine)])
    }

    /// Every key a phone's HCI log (btsnoop, PacketLogger…) shows: LTKs handed to the controller, keys
    /// distributed in SMP, identity keys. - Throws: what opening the capture throws.
    public init(phoneLog path: String) throws {
        let capture = try CaptureFile.open(path: path)
        let analyzer = Analyzer(options: AnalyzerOptions(timeline: false))
        analyzer.keyStore.phoneLogPath = path
        while let record = capture.next() { analyzer.process(record) }
        analyzer.finish()
        self = analyzer.knownKeys
    }

    /// 32 hex digits, most significant byte first (spaces, colons and a 0x prefix allowed) → wire order.
    static func parseKey(_ text: String) -> [UInt8]? {
        var t = text.trimmingWhitespace()
        if t.hasPrefix("0x") || t.hasPrefix("0X") { t = String(t.dropFirst(2)) }
        t = t.filter { $0 != " " && $0 != ":" && $0 != "-" }
        guard t.count == 32, let bytes = BLECore.bytes(fromHex: t) else { return nil }
        return bytes.reversed()
    }
}
