import BLECore

/// The URI AD type's value (Core Spec Supplement, Part A, 1.18): the UTF-8 encoding of a scheme name
/// code point from Assigned Numbers 2.7 ("URI Schemes"), then the rest of the URI in UTF-8.
///
/// Code point 0x0001 means "no scheme" (the rest is the whole URI); 0x0016 is `http:`, 0x0017 `https:`.
/// A code point without a name is kept and prints as `<U+00C4>` before the rest.
public struct URIValue: Hashable, Sendable, CustomStringConvertible {
    /// The scheme name code point (Assigned Numbers 2.7).
    public var scheme: UInt32
    /// The URI after the scheme name, e.g. `//example.com/`.
    public var rest: String

    public init(scheme: UInt32, rest: String) { self.scheme = scheme; self.rest = rest }

    /// Splits a full URI (`https://example.com`) into a scheme code and rest; the empty-scheme code when
    /// no known scheme name prefixes it.
    public init(uri: String) {
        var best: (UInt32, Int)? = nil
        for (i, name) in URIValue.schemeNames.enumerated() where !name.isEmpty && uri.hasPrefix(name) {
            if best == nil || name.count > best!.1 { best = (UInt32(i), name.count) }
        }
        if let (code, length) = best {
            self.init(scheme: code, rest: String(uri.dropFirst(length)))
        } else {
            self.init(scheme: 0x01, rest: uri)
        }
    }

    /// Decodes the AD data; nil when it is empty or not valid UTF-8.
    public init?(bytes: [UInt8]) {
        guard let text = String(validating: bytes, as: UTF8.self), let first = text.unicodeScalars.first else { return nil }
        scheme = first.value
        rest = String(text.unicodeScalars.dropFirst())
    }

    /// The AD data: the scheme code point in UTF-8, then the rest.
    public var bytes: [UInt8] {
        let scalar = Unicode.Scalar(scheme) ?? Unicode.Scalar(UInt8(0x01))
        return Array(String(Character(scalar)).utf8) + Array(rest.utf8)
    }

    /// The scheme's name with its colon (`https:`), `""` for 0x0001, nil when unassigned.
    public var schemeName: String? { URIValue.schemeName(scheme) }

    /// The whole URI: `https://example.com`.
    public var description: String {
        (schemeName ?? "<U+\(String(scheme, radix: 16, uppercase: true))>") + rest
    }

    /// The name of a scheme code point (Assigned Numbers 2.7), nil when unassigned.
    public static func schemeName(_ code: UInt32) -> String? {
        code >= 1 && code < UInt32(schemeNames.count) ? schemeNames[Int(code)] : nil
    }

    /// Assigned Numbers 2.7, index = code point (index 0 is not assigned; 0x01 is the empty scheme name).
    static let schemeNames: [String] = [
        "", "",
        // 0x02
        "aaa:", "aaas:", "about:", "acap:", "acct:", "cap:", "cid:", "coap:", "coaps:", "crid:", "data:", "dav:", "dict:", "dns:",
        // 0x10
        "file:", "ftp:", "geo:", "go:", "gopher:", "h323:", "http:", "https:", "iax:", "icap:", "im:", "imap:", "info:", "ipp:",
        "ipps:", "iris:",
        // 0x20
        "iris.beep:", "iris.xpc:", "iris.xpcs:", "iris.lwz:", "jabber:", "ldap:", "mailto:", "mid:", "msrp:", "msrps:", "mtqp:",
        "mupdate:", "news:", "nfs:", "ni:", "nih:",
        // 0x30
        "nntp:", "opaquelocktoken:", "pop:", "pres:", "reload:", "rtsp:", "rtsps:", "rtspu:", "service:", "session:", "shttp:",
        "sieve:", "sip:", "sips:", "sms:", "snmp:",
        // 0x40
        "soap.beep:", "soap.beeps:", "stun:", "stuns:", "tag:", "tel:", "telnet:", "tftp:", "thismessage:", "tn3270:", "tip:",
        "turn:", "turns:", "tv:", "urn:", "vemmi:",
        // 0x50
        "ws:", "wss:", "xcon:", "xcon-userid:", "xmlrpc.beep:", "xmlrpc.beeps:", "xmpp:", "z39.50r:", "z39.50s:", "acr:",
        "adiumxtra:", "afp:", "afs:", "aim:", "apt:", "attachment:",
        // 0x60
        "aw:", "barion:", "beshare:", "bitcoin:", "bolo:", "callto:", "chrome:", "chrome-extension:", "com-eventbrite-attendee:",
        "content:", "cvs:", "dlna-playsingle:", "dlna-playcontainer:", "dtn:", "dvb:", "ed2k:",
        // 0x70
        "facetime:", "feed:", "feedready:", "finger:", "fish:", "gg:", "git:", "gizmoproject:", "gtalk:", "ham:", "hcp:", "icon:",
        "ipn:", "irc:", "irc6:", "ircs:",
        // 0x80
        "itms:", "jar:", "jms:", "keyparc:", "lastfm:", "ldaps:", "magnet:", "maps:", "market:", "message:", "mms:", "ms-help:",
        "ms-settings-power:", "msnim:", "mumble:", "mvn:",
        // 0x90
        "notes:", "oid:", "palm:", "paparazzi:", "pkcs11:", "platform:", "proxy:", "psyc:", "query:", "res:", "resource:", "rmi:",
        "rsync:", "rtmfp:", "rtmp:", "secondlife:",
        // 0xA0
        "sftp:", "sgn:", "skype:", "smb:", "smtp:", "soldat:", "spotify:", "ssh:", "steam:", "submit:", "svn:", "teamspeak:",
        "teliaeid:", "things:", "udp:", "unreal:",
        // 0xB0
        "ut2004:", "ventrilo:", "view-source:", "webcal:", "wtai:", "wyciwyg:", "xfire:", "xri:", "ymsgr:", "example:",
        "ms-settings-cloudstorage:",
    ]
}
