import BLECodecs
import BLECore
import BLEProtocols

/// This side of an HCI log as the log names it: the name its host gave the controller and the controller's maker and
/// version, each with the frame that said so. A story written from tshark opens with them ("a Xiaomi phone naming
/// itself 'Telefono Mi' (Change Local Name, 60) on a Qualcomm controller, HCI 4.1 (8)"); the first screen did not.
public struct ThisSide: Hashable, Sendable {
    /// The host's name for itself: Write Local Name's (Core Spec Vol 4, Part E, 7.3.11) or Read Local Name's answer
    /// (7.3.12), the last one the log holds.
    public var name: LocalName?
    /// The first controller's identity (``ControllerIdentity``).
    public var controller: ControllerIdentity?

    public init(name: LocalName?, controller: ControllerIdentity?) {
        self.name = name
        self.controller = controller
    }

    /// The controller's maker by its assigned company name, else its id (`0x001d`).
    public var controllerMaker: String? { controller.map { $0.companyName ?? hex($0.manufacturer.rawValue, width: 4) } }
    /// `4.1`, `5.3`: nil when only a monitor Index Info named the maker.
    public var hciVersion: String? { controller?.hciVersionName }

    /// `'Telefono Mi' (frame 60), Qualcomm controller, HCI 4.1 (frame 8)`.
    public var summary: String {
        var parts: [String] = []
        if let name { parts.append("'\(name.name)' (frame \(name.frame))") }
        if let c = controller { parts.append(Self.describe(c)) }
        return parts.joined(separator: ", ")
    }

    /// `Qualcomm controller, HCI 4.1 (frame 8)`: the maker by its assigned company name.
    public static func describe(_ id: ControllerIdentity) -> String {
        let company =
            id.hasNoCompany
            ? "a controller with no company ID" : (id.companyName ?? "company \(hex(id.manufacturer.rawValue, width: 4))") + " controller"
        return company + (id.hciVersionName.map { ", HCI " + $0 } ?? "") + " (frame \(id.frame))"
    }
}

extension Evidence {
    /// The first controller's (lowest index) name and identity; nil on air captures, whose sniffer is no side.
    public var localSide: ThisSide? {
        guard !isAirCapture else { return nil }
        let index = (Array(controllers.keys) + Array(localNames.keys)).min()
        guard let index else { return nil }
        return ThisSide(name: localNames[index], controller: controllers[index])
    }
}

/// A name the host set or read back, and where.
public struct LocalName: Hashable, Sendable {
    public var name: String
    public var frame: Int

    /// The name field of Write Local Name or of Read Local Name's return (after its status): 248 octets of UTF-8,
    /// ended by a NUL when shorter. Nil when it is empty or not UTF-8.
    static func parse(_ field: some Collection<UInt8>, frame: Int) -> LocalName? {
        let bytes = Array(field.prefix(248).prefix { $0 != 0 })
        guard !bytes.isEmpty, let text = String(validating: bytes, as: UTF8.self) else { return nil }
        let shown = text.count > 40 ? String(text.prefix(39)) + "…" : text
        return LocalName(name: shown, frame: frame)
    }
}
