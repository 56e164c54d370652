import BLEAnalysis
import BLECore
import BLEProtocols

/// HH-04's refusals the advertising state or a finished name request explains (issue 48): the controller answered the
/// host's question in the state the log shows it in; nothing the host asked for is lost, and no host bug is shown.
extension HH04CommandErrors {
    /// An advertising set on one controller.
    struct AdvertisingSet: Hashable {
        var controller: UInt16
        var set: UInt8
    }

    /// What the log shows of the advertising state at each refusal, as it is walked in frame order.
    struct AdvertisingState {
        /// The sets known enabled, with the frame of the enable the controller accepted.
        var enabled: [AdvertisingSet: Int] = [:]
        /// The sets whose periodic advertising is known off, with the frame that shows it (a Reset, the set removed,
        /// a disable accepted), until an enable is accepted.
        var periodicOff: [AdvertisingSet: Int] = [:]
        /// The sets whose periodic advertising an accepted enable turned on (since the last Reset, removal or disable).
        var periodicOn: Set<AdvertisingSet> = []
        /// The last Reset per controller: every set gone, periodic advertising off.
        var reset: [UInt16: Int] = [:]
        /// The sets whose enable state the log shows (an accepted enable, disable or removal, or the set terminated),
        /// and the controllers on which an accepted disable of every set shows them all.
        var shown: Set<AdvertisingSet> = []
        var allShown: Set<UInt16> = []
        /// Legacy advertising known on, with the frame of the accepted enable (a connection ends it: forgotten then).
        var legacyOn: [UInt16: Int] = [:]
        /// The sets each advertising command named, by its frame (for the refusal, which names only the opcode).
        var commandSets: [Int: (sets: [UInt8], enabled: Bool?)] = [:]
        /// The last name request and its completion, by peer; the cancels' peers by command frame.
        var nameRequested: [String: Int] = [:]
        var nameCompleted: [String: Int] = [:]
        var cancelPeer: [Int: String] = [:]

        /// Every set of `controller` gone (a Reset, LE Clear Advertising Sets).
        mutating func forget(_ controller: UInt16) {
            enabled = enabled.filter { $0.key.controller != controller }
            periodicOff = periodicOff.filter { $0.key.controller != controller }
            periodicOn = periodicOn.filter { $0.controller != controller }
        }

        /// Whether the log shows `key`'s enable state by now; a set it does not was set up before the log began.
        func shows(_ key: AdvertisingSet) -> Bool {
            shown.contains(key) || allShown.contains(key.controller) || reset[key.controller] != nil
        }

        mutating func apply(_ op: HCICommand, _ sets: [UInt8], _ on: Bool?, _ controller: UInt16, _ frame: Int) {
            let keys = sets.map { AdvertisingSet(controller: controller, set: $0) }
            if op == .leSetExtendedAdvertisingEnable || op == .leRemoveAdvertisingSet { shown.formUnion(keys) }
            if op == .leSetExtendedAdvertisingEnable, keys.isEmpty, on == false { allShown.insert(controller) }
            switch op {
            case .leSetAdvertisingEnable:
                legacyOn[controller] = on == true ? frame : nil
            case .leSetExtendedAdvertisingEnable where on == true:
                for k in keys { enabled[k] = frame }
            case .leSetExtendedAdvertisingEnable:
                if keys.isEmpty { enabled = enabled.filter { $0.key.controller != controller } }
                for k in keys { enabled[k] = nil }
            case .leSetPeriodicAdvertisingEnable:
                for k in keys {
                    periodicOff[k] = on == true ? nil : frame
                    if on == true { periodicOn.insert(k) } else { periodicOn.remove(k) }
                }
            case .leRemoveAdvertisingSet:
                for k in keys { enabled[k] = nil; periodicOff[k] = frame; periodicOn.remove(k) }
            case .leClearAdvertisingSets:
                forget(controller)
                reset[controller] = frame
            default:
                break
            }
        }
    }

    /// The refusals (by refusal frame) with the state that explains them, and the cause to print:
    /// - LE Set Advertising Set Random Address refused 0x0C while the log shows that set enabled: the spec has the
    ///   controller refuse it for an enabled connectable set (Core Spec Vol 4, Part E, 7.8.52), and controllers built
    ///   before erratum 7716 for any enabled set; Android changes a non-connectable set's address without disabling
    ///   it (AOSP `le_advertising_manager.cc`, `set_advertising_set_random_address`), so such a controller refuses
    ///   it (`android-btsnoop_lightctl-2h-…` frame 35705, set 3 enabled at 34866). The set keeps its address.
    /// - LE Set Periodic Advertising Enable turning periodic advertising off while it was off: since a Reset, the
    ///   set's removal or an accepted disable, or shown by the set's removal right after, which the spec refuses while
    ///   periodic advertising is on (7.8.59). Android disables periodic advertising on every extended set it stops
    ///   (`le_advertising_manager.cc`, `stop_advertising`); nexxtender frame 1153, linux-inquiry frame 861.
    /// - LE Set Random Address or LE Set Advertising Parameters refused 0x0C while legacy advertising is on (7.8.4,
    ///   7.8.5).
    /// - Remote Name Request Cancel refused (0x0C or 0x12) after the name request it cancels completed: nothing left
    ///   to cancel (7.1.20; qcom msp frames 22507, 23126, 23131).
    static func advertisingRefusals(_ e: Evidence) -> [Int: String] {
        let refused = Set(
            e.events.compactMap { ev -> Int? in
                if case .commandFailed(_, _, let frame) = ev.kind { frame } else { nil }
            })
        var state = AdvertisingState()
        var out: [Int: String] = [:]
        for (index, ev) in e.events.enumerated() {
            let controller = ev.controller
            switch ev.kind {
            case .advertisingCommand(let op, let sets, let on):
                state.commandSets[ev.frame] = (sets, on)
                if !refused.contains(ev.frame) { state.apply(op, sets, on, controller, ev.frame) }
            case .advertisingSetTerminated(let set):
                state.enabled[AdvertisingSet(controller: controller, set: set)] = nil
                state.shown.insert(AdvertisingSet(controller: controller, set: set))
            case .connectionComplete(_, .success, _):
                state.legacyOn[controller] = nil
            case .reset:
                state.forget(controller)
                state.legacyOn[controller] = nil
                state.reset[controller] = ev.frame
            case .nameRequest(let peer, let cancel):
                if cancel { state.cancelPeer[ev.frame] = peer } else { state.nameRequested[peer] = ev.frame }
            case .nameRequestComplete(let peer):
                state.nameCompleted[peer] = ev.frame
            case .commandFailed(let op, let status, let commandFrame):
                guard let commandFrame else { continue }
                let cause =
                    advertisingCause(op, status, commandFrame, controller, state, e, after: index)
                    ?? nameCancelCause(op, status, commandFrame, state, refusal: ev.frame)
                if let cause { out[ev.frame] = cause }
            default:
                continue
            }
        }
        return out
    }

    static func advertisingCause(
        _ op: HCICommand, _ status: HCIStatus, _ commandFrame: Int, _ controller: UInt16, _ state: AdvertisingState,
        _ e: Evidence, after index: Int
    ) -> String? {
        guard status == .commandDisallowed else { return nil }
        if op == .leSetRandomAddress || op == .leSetAdvertisingParameters, let on = state.legacyOn[controller] {
            let section = op == .leSetRandomAddress ? "7.8.4" : "7.8.5"
            return
                "advertising was on (frame \(on)): the spec has the controller refuse \(op) while it advertises (Core Spec Vol 4, Part E, \(section)); what is in force stays"
        }
        guard let named = state.commandSets[commandFrame], let set = named.sets.first else { return nil }
        let key = AdvertisingSet(controller: controller, set: set)
        if op == .leSetAdvertisingSetRandomAddress, let on = state.enabled[key] {
            return
                "advertising set \(set) was enabled (frame \(on)): the controller refuses a new address for an enabled set (Core Spec Vol 4, Part E, 7.8.52, for a connectable set; older controllers for every set); the set keeps advertising with the address it had"
        }
        if op == .leSetAdvertisingSetRandomAddress, !state.shows(key),
            let row = e.platform?.seen.flatMap({ PlatformTable.listing(op, .advertisingAddressRotation, for: $0) })
        {
            return rotationCause(row, set, controller, e, after: index)
        }
        guard op == .leSetPeriodicAdvertisingEnable, named.enabled == false else { return nil }
        if !state.periodicOn.contains(key), let off = state.periodicOff[key] ?? state.reset[controller] {
            let since = state.periodicOff[key] == nil ? "since the Reset at frame \(off)" : "frame \(off)"
            return
                "periodic advertising on set \(set) was off already (\(since)): the controller refuses a command that changes nothing, and the state the host asked for holds"
        }
        // The set's next command: its removal, accepted, shows periodic advertising was off (7.8.59 refuses it otherwise).
        let next = e.events[(index + 1)...].first { x in
            guard x.controller == controller, case .advertisingCommand(_, let sets, _) = x.kind else { return false }
            return sets.contains(set)
        }
        guard let next, case .advertisingCommand(.leRemoveAdvertisingSet, _, _) = next.kind,
            e.first(
                after: next.frame,
                where: { x in
                    if case .commandFailed(.leRemoveAdvertisingSet, _, let f) = x.kind { f == next.frame } else { false }
                }) == nil
        else { return nil }
        return
            "the controller accepted set \(set)'s removal at frame \(next.frame), which the spec refuses while periodic advertising is on (Core Spec Vol 4, Part E, 7.8.59): it was off, so the disable changed nothing"
    }

    static func nameCancelCause(_ op: HCICommand, _ status: HCIStatus, _ commandFrame: Int, _ state: AdvertisingState, refusal: Int)
        -> String?
    {
        guard op == .remoteNameRequestCancel, status == .commandDisallowed || status == .invalidCommandParameters,
            let peer = state.cancelPeer[commandFrame], let done = state.nameCompleted[peer], done < refusal,
            done > state.nameRequested[peer] ?? -1
        else { return nil }
        return "the name request it cancels had completed (frame \(done)): nothing was left to cancel"
    }
}

extension HH04CommandErrors {
    /// A new address refused for a set the log never showed enabled or disabled, from a platform that sends one only
    /// to a set it has enabled (``PlatformBehaviour/advertisingAddressRotation``): the set was enabled before the log
    /// began, and the refusal is the controller's answer for an enabled set (7.8.52). The host's later disable of the
    /// set, with no enable of it between, is cited when the log holds it.
    static func rotationCause(_ row: PlatformFact, _ set: UInt8, _ controller: UInt16, _ e: Evidence, after index: Int) -> String {
        let next = e.events[(index + 1)...].first { x in
            guard x.controller == controller, case .advertisingCommand(.leSetExtendedAdvertisingEnable, let sets, let on) = x.kind
            else { return false }
            return sets.contains(set) || (sets.isEmpty && on == false)
        }
        var disabledLater = ""
        if let next, case .advertisingCommand(_, _, false) = next.kind {
            disabledLater = ", the host disabling it at frame \(next.frame) with no enable of it between"
        }
        return
            "\(row.platform) gives each advertising set it has enabled a new address on a timer, a non-connectable one without disabling it (AOSP le_advertising_manager.cc, set_advertising_set_random_address_on_timer): set \(set) was enabled before the log began\(disabledLater); the controller refuses a new address for an enabled set (Core Spec Vol 4, Part E, 7.8.52, for a connectable set; older controllers for every set), and the set keeps advertising with the address it had"
    }
}
