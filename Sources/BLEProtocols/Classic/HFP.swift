import BLECore

/// One AT line of the Hands-Free or Headset profile over RFCOMM (HFP 1.9, 4.34–4.35; 3GPP 27.007): a command from the
/// hands-free unit (`AT+BAC=1,2`), a result from the audio gateway (`+BCS: 2`, `+CIEV: 2,1`), a final result (`OK`,
/// `ERROR`, `+CME ERROR: 3`) or an unsolicited code (`RING`).
public struct HFPATLine: Hashable, Sendable, CustomStringConvertible {
    public enum Kind: String, Hashable, Sendable {
        /// `AT+X=…` (set), `AT+X?` (read), `AT+X=?` (test), `AT+X`/`ATA`/`ATD…` (action).
        case set, read, test, action
        /// `+X: …` from the gateway.
        case result
        /// `OK`, `ERROR`, `+CME ERROR: n`, `NO CARRIER`, `BUSY`, `NO ANSWER`, `DELAYED`, `BLACKLISTED`.
        case final
        /// `RING` and other bare codes.
        case unsolicited
    }
    public var kind: Kind
    /// The command or result name without `AT` (`+BRSF`, `A`, `D`, `OK`, `+CME ERROR`).
    public var name: String
    /// What follows `=` or `:` (or the number of `ATD`), trimmed.
    public var arguments: String

    public init(kind: Kind, name: String, arguments: String = "") {
        self.kind = kind; self.name = name; self.arguments = arguments
    }

    /// One line without its `\r`/`\n` framing; nil for an empty one.
    public init?(line raw: String) {
        let line = raw.trimmedSpaces
        guard !line.isEmpty else { return nil }
        let upper = line.uppercased()
        if upper.hasPrefix("AT") {
            let body = String(line.dropFirst(2))
            if body.hasPrefix("+") || body.hasPrefix("%") || body.hasPrefix("$") || body.hasPrefix("^") {
                if let eq = body.firstIndex(of: "=") {
                    name = String(body[..<eq]).uppercased()
                    let rest = String(body[body.index(after: eq)...])
                    if rest == "?" { kind = .test; arguments = "" } else { kind = .set; arguments = rest }
                } else if body.hasSuffix("?") {
                    name = String(body.dropLast()).uppercased(); kind = .read; arguments = ""
                } else {
                    name = body.uppercased(); kind = .action; arguments = ""
                }
            } else {
                // Basic commands: ATA (answer), ATD<number>; (dial), ATH.
                name = String(body.prefix(1)).uppercased()
                kind = .action
                arguments = String(body.dropFirst())
            }
            return
        }
        for code in ["+CME ERROR", "+CMS ERROR"] where upper.hasPrefix(code) {
            kind = .final; name = code
            arguments = String(line.drop { $0 != ":" }.dropFirst()).trimmedSpaces
            return
        }
        if Self.finals.contains(upper) {
            kind = .final; name = upper; arguments = ""
            return
        }
        if line.hasPrefix("+"), let colon = line.firstIndex(of: ":") {
            kind = .result
            name = String(line[..<colon]).uppercased()
            arguments = String(line[line.index(after: colon)...]).trimmedSpaces
            return
        }
        kind = .unsolicited; name = upper; arguments = ""
    }

    static let finals: Set<String> = ["OK", "ERROR", "NO CARRIER", "BUSY", "NO ANSWER", "DELAYED", "BLACKLISTED"]

    /// The line as it travels: a command ends with `\r`, a result is framed `\r\n…\r\n` (V.250 5.7).
    public var text: String {
        switch kind {
        case .set: "AT\(name)=\(arguments)"
        case .read: "AT\(name)?"
        case .test: "AT\(name)=?"
        case .action: name.hasPrefix("+") ? "AT\(name)" : "AT\(name)\(arguments)"
        case .result: "\(name): \(arguments)"
        case .final: arguments.isEmpty ? name : "\(name): \(arguments)"
        case .unsolicited: name
        }
    }
    public var bytes: [UInt8] {
        switch kind {
        case .set, .read, .test, .action: Array((text + "\r").utf8)
        default: Array(("\r\n" + text + "\r\n").utf8)
        }
    }
    public var description: String { text }

    /// The comma-separated numbers of the arguments (`1,2` → [1, 2]); non-numbers are skipped.
    public var numbers: [Int] {
        arguments.split(separator: ",").compactMap { Int(String($0).trimmedSpaces) }
    }
    public var isCommand: Bool { kind == .set || kind == .read || kind == .test || kind == .action }
}

/// The HFP codec IDs of AT+BAC and +BCS (HFP 1.9, Table 10.1; Assigned Numbers 6.11).
public enum HFPCodec {
    public static let cvsd = 1
    public static let mSBC = 2
    public static let lc3SWB = 3
    public static func name(_ id: Int) -> String {
        switch id {
        case 1: "CVSD"
        case 2: "mSBC"
        case 3: "LC3-SWB"
        default: "codec \(id)"
        }
    }
}

/// The feature bits of AT+BRSF (hands-free) and +BRSF (gateway) that decide the service level connection's steps
/// (HFP 1.9, 4.34.1).
public enum HFPFeatures {
    /// Hands-free: codec negotiation (bit 7), three-way calling (1), HF indicators (8), enhanced call status (5).
    public static func handsFree(_ bits: Int) -> [String] {
        named(
            bits,
            [
                (0, "EC/NR"), (1, "three-way calling"), (2, "CLI"), (3, "voice recognition"), (4, "remote volume"),
                (5, "enhanced call status"), (6, "enhanced call control"), (7, "codec negotiation"), (8, "HF indicators"),
                (9, "eSCO S4"),
            ])
    }
    /// Gateway: codec negotiation (bit 9), three-way calling (0), HF indicators (10).
    public static func gateway(_ bits: Int) -> [String] {
        named(
            bits,
            [
                (0, "three-way calling"), (1, "EC/NR"), (2, "voice recognition"), (3, "in-band ring"), (4, "voice tag"),
                (5, "reject call"), (6, "enhanced call status"), (7, "enhanced call control"), (8, "extended errors"),
                (9, "codec negotiation"), (10, "HF indicators"), (11, "eSCO S4"),
            ])
    }
    /// The gateway's +BRSF bit a hands-free command belongs to (HFP 1.9, 4.34.1; the same bits in HFP 1.8): a command
    /// for a feature the gateway did not announce may be answered ERROR.
    public static func gatewayFeature(neededBy command: String) -> (bit: Int, name: String)? {
        switch command {
        case "+BIND", "+BIEV": (10, "HF indicators")
        case "+BAC", "+BCS", "+BCC": (9, "codec negotiation")
        case "+CHLD": (0, "three-way calling")
        case "+CLCC": (6, "enhanced call status")
        case "+NREC": (1, "EC/NR")
        case "+BVRA": (2, "voice recognition")
        case "+BINP": (4, "voice tag")
        case "+CMEE": (8, "extended errors")
        default: nil
        }
    }
    public static func handsFreeNegotiatesCodecs(_ bits: Int) -> Bool { bits >> 7 & 1 == 1 }
    public static func gatewayNegotiatesCodecs(_ bits: Int) -> Bool { bits >> 9 & 1 == 1 }
    static func named(_ bits: Int, _ names: [(Int, String)]) -> [String] { names.filter { bits >> $0.0 & 1 == 1 }.map(\.1) }
}

extension String {
    /// Without leading and trailing spaces and tabs (no Foundation in this module).
    var trimmedSpaces: String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
