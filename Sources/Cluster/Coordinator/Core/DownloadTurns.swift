import DequeModule

/// The cluster-wide cap on downloads running at once per origin host (`--max-downloads-per-host`), free
/// of I/O: an item's download takes a place at its host before it is dispatched and gives it back when it
/// ends. Items waiting for a host's place take turns by group (their batch, with fair share: the group
/// served least recently goes next, so a small batch is not held back behind a large one's downloads; one
/// group for all, first come first served, without).
struct DownloadTurns {
    /// An item waiting for a place.
    struct Waiter: Hashable {
        let batchID: String
        let itemIndex: Int
    }

    /// One host's places and line, changed in place in `hosts` (a copy would copy its tables on each change).
    private struct Host {
        var running = 0
        /// Waiters by group, in the order they came (a deque: the first leaves in O(1), also with thousands waiting).
        var waiting: [String: Deque<Waiter>] = [:]
        /// Groups with waiters, in the order they started waiting.
        var turns: [String] = []
        /// When each group last took a place (a count of places taken at this host): the group served
        /// least recently takes the next free place.
        var lastServed: [String: UInt64] = [:]
        var served: UInt64 = 0

        var isIdle: Bool { running == 0 && turns.isEmpty }

        mutating func serve(_ group: String) {
            served += 1
            lastServed[group] = served
        }

        mutating func take(_ waiter: Waiter, group: String, limit: Int) -> Bool {
            if running < limit, turns.isEmpty {
                running += 1
                serve(group)
                return true
            }
            if waiting[group] == nil { turns.append(group) }
            waiting[group, default: []].append(waiter)
            return false
        }

        mutating func giveBack() -> Waiter? {
            guard !turns.isEmpty else {
                running = max(0, running - 1)
                return nil
            }
            // The group served least recently (one that never was, first; among equals, the first to wait).
            var position = 0
            for (index, group) in turns.enumerated()
            where lastServed[group, default: 0] < lastServed[turns[position], default: 0] {
                position = index
            }
            let group = turns[position]
            let next = waiting[group]?.popFirst()
            if waiting[group]?.isEmpty ?? true {
                waiting[group] = nil
                turns.remove(at: position)
            }
            serve(group)
            return next
        }

        mutating func leave(_ waiter: Waiter, group: String) -> Bool {
            guard let position = waiting[group]?.firstIndex(of: waiter) else { return false }
            waiting[group]?.remove(at: position)
            if waiting[group]?.isEmpty ?? true {
                waiting[group] = nil
                turns.removeAll { $0 == group }
            }
            return true
        }
    }

    let limit: Int
    private var hosts: [String: Host] = [:]

    init(limit: Int) { self.limit = max(1, limit) }

    /// Takes a place at `host` for `waiter` if one is free (returns `true`); else it waits in its group's line.
    mutating func take(_ host: String, for waiter: Waiter, group: String) -> Bool {
        hosts[host, default: Host()].take(waiter, group: group, limit: limit)
    }

    /// Gives a place at `host` back: the waiter whose turn it is takes it (returned), or it is free.
    mutating func giveBack(_ host: String) -> Waiter? {
        guard let index = hosts.index(forKey: host) else { return nil }
        let next = hosts.values[index].giveBack()
        if hosts.values[index].isIdle { hosts.remove(at: index) }  // an idle host is forgotten
        return next
    }

    /// Takes a waiter out of its line (its item was cancelled); `false` when it was not waiting.
    @discardableResult
    mutating func leave(_ host: String, _ waiter: Waiter, group: String) -> Bool {
        guard let index = hosts.index(forKey: host) else { return false }
        let left = hosts.values[index].leave(waiter, group: group)
        if hosts.values[index].isIdle { hosts.remove(at: index) }
        return left
    }

    /// Downloads running at `host`.
    func running(at host: String) -> Int { hosts[host]?.running ?? 0 }
}
