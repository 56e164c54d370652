import BLEAnalysis
import BLECore
import BLEProtocols

/// HH-04's refusals a page under way explains (issue 48): while the controller pages a device for a name request or a
/// connection the host asked for, some controllers refuse another inquiry, page or name request with Command
/// Disallowed, "a state where it cannot process this command at this time" (Core Spec Vol 1, Part F, 2.12). The page
/// goes on and is answered; the refusal is the controller's state, not a host state-machine bug.
extension HH04CommandErrors {
    /// The commands that need the radio to inquire or page (Core Spec Vol 4, Part E, 7.1.1, 7.1.3, 7.1.5, 7.1.19).
    static let pagingCommands: Set<HCICommand> = [.inquiry, .periodicInquiryMode, .createConnection, .remoteNameRequest]

    /// A page the controller accepted and had not answered yet: a name request or a connection, to one peer.
    struct Page: Hashable {
        var controller: UInt16
        var peer: String
        var nameRequest: Bool
    }

    /// A refusal that came while a page ran, waiting for that page's answer to be cited.
    struct RefusedDuringPage {
        var refusal: Int
        var page: Page
        var command: Int
    }

    /// The refusals (0x0C, by refusal frame) of a paging command that came while a name request or Create Connection
    /// the controller had accepted was still paging, with the cause to print. Only a page whose answer (Remote Name
    /// Request Complete, Connection Complete) the log holds after the refusal counts: a request the log never answers
    /// may have been lost, and then nothing shows the controller was busy. BlueZ 2006 on a NEC 616 (`pcap-lt201-h4phdr_
    /// thewbi-bluez-2006-nec616-…`): Remote Name Request at 41 and Inquiry at 43 refused while the name request of 37
    /// paged (answered 0x04 at 45); Inquiry at 111 while that of 107 paged (answered at 113).
    static func pageRefusals(_ e: Evidence) -> [Int: String] {
        pagesRunning(e).merging(connectedAnyway(e)) { running, _ in running }
    }

    static func pagesRunning(_ e: Evidence) -> [Int: String] {
        let refused = Set(
            e.events.compactMap { ev -> Int? in
                if case .commandFailed(_, _, let frame) = ev.kind { frame } else { nil }
            })
        var running: [Page: [Int]] = [:]  // the accepted command frames of each page, oldest first
        var waiting: [RefusedDuringPage] = []
        var out: [Int: String] = [:]
        func answered(_ page: Page, at frame: Int) {
            guard let command = running[page]?.first else { return }
            running[page]?.removeFirst()
            for w in waiting where w.page == page && w.command == command {
                out[w.refusal] = pageCause(page, command: command, answer: frame)
            }
        }
        for ev in e.events {
            let controller = ev.controller
            switch ev.kind {
            case .nameRequest(let peer, false) where !refused.contains(ev.frame):
                running[Page(controller: controller, peer: peer, nameRequest: true), default: []].append(ev.frame)
            case .pageRequested(let peer) where !refused.contains(ev.frame):
                running[Page(controller: controller, peer: peer, nameRequest: false), default: []].append(ev.frame)
            case .nameRequestComplete(let peer):
                answered(Page(controller: controller, peer: peer, nameRequest: true), at: ev.frame)
            case .classicConnectionComplete(_, _, let peer, 1):
                answered(Page(controller: controller, peer: peer, nameRequest: false), at: ev.frame)
            case .reset:
                running = running.filter { $0.key.controller != controller }
            case .commandFailed(let op, .commandDisallowed, _) where pagingCommands.contains(op):
                let oldest = running.filter { $0.key.controller == controller && !$0.value.isEmpty }
                    .min { $0.value[0] < $1.value[0] }
                if let oldest { waiting.append(RefusedDuringPage(refusal: ev.frame, page: oldest.key, command: oldest.value[0])) }
            default:
                continue
            }
        }
        return out
    }

    static func pageCause(_ page: Page, command: Int, answer: Int) -> String {
        let what = page.nameRequest ? "a name request to \(page.peer)" : "a connection to \(page.peer)"
        return
            "\(what) was still paging (frame \(command), answered at frame \(answer)): the controller was in a state where it cannot process the command at this time (Command Disallowed, Core Spec Vol 1, Part F, 2.12); the page went on"
    }
}

extension HH04CommandErrors {
    /// Create Connection refused 0x0C, then within 2 s a successful Connection Complete with the same device and no
    /// page of it accepted between: the device was connecting to this side at the same moment, and the link the host
    /// asked for came up. Ethermind (`btsnoop-h4_ethermind-bredr-page-timeout-04-…`, tshark): Create Connection to
    /// bc:6e:64:09:a6:90 at 1543 refused at 1544, the device's Connect Request at 1545, accepted, up at 1549.
    static func connectedAnyway(_ e: Evidence) -> [Int: String] {
        var out: [Int: String] = [:]
        for (index, ev) in e.events.enumerated() {
            guard case .commandFailed(.createConnection, .commandDisallowed, let commandFrame?) = ev.kind,
                let asked = e.events[..<index].last(where: { $0.frame == commandFrame }),
                case .pageRequested(let peer) = asked.kind
            else { continue }
            for x in e.events[(index + 1)...] {
                guard x.timestamp.microseconds(since: ev.timestamp) < 2_000_000 else { break }
                if case .pageRequested(peer) = x.kind { break }
                if case .classicConnectionComplete(_, .success, peer, 1) = x.kind {
                    out[ev.frame] =
                        "\(peer) was connecting to this side at the same moment: the link came up at frame \(x.frame), the one the host asked for"
                    break
                }
            }
        }
        return out
    }
}
