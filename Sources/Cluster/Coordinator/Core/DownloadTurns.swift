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

    private struct Host {
        var running = 0
        /// Waiters by group, in the order they came.
        var waiting: [String: [Waiter]] = [:]
        /// Groups with waiters, in the order they started waiting.
        var turns: [String] = []
        /// When each group last took a place (a count of places taken at this host): the group served
        /// least recently takes the next free place.
        var lastServed: [String: UInt64] = [:]
        var served: UInt64 = 0

        mutating func serve(_ group: String) {
            served += 1
            lastServed[group] = served
        }
    }

    let limit: Int
    private var hosts: [String: Host] = [:]

    init(limit: Int) { self.limit = max(1, limit) }

    /// Takes a place at `host` for `waiter` if one is free (returns `true`); else it waits in its group's line.
    mutating func take(_ host: String, for waiter: Waiter, group: String) -> Bool {
        var state = hosts[host] ?? Host()
        defer { hosts[host] = state }
        if state.running < limit, state.turns.isEmpty {
            state.running += 1
            state.serve(group)
            return true
        }
        if state.waiting[group] == nil { state.turns.append(group) }
        state.waiting[group, default: []].append(waiter)
        return false
    }

    /// Gives a place at `host` back: the waiter whose turn it is takes it (returned), or it is free.
    mutating func giveBack(_ host: String) -> Waiter? {
        guard var state = hosts[host] else { return nil }
        defer { hosts[host] = state.running == 0 && state.turns.isEmpty ? nil : state }  // an idle host is forgotten
        guard !state.turns.isEmpty else {
            state.running = max(0, state.running - 1)
            return nil
        }
        // The group served least recently (one that never was, first; among equals, the first to wait).
        var position = 0
        for (index, group) in state.turns.enumerated()
        where state.lastServed[group, default: 0] < state.lastServed[state.turns[position], default: 0] {
            position = index
        }
        let group = state.turns[position]
        var line = state.waiting[group] ?? []
        let next = line.removeFirst()
        if line.isEmpty {
            state.waiting[group] = nil
            state.turns.remove(at: position)
        } else {
            state.waiting[group] = line
        }
        state.serve(group)
        return next
    }

    /// Takes a waiter out of its line (its item was cancelled); `false` when it was not waiting.
    @discardableResult
    mutating func leave(_ host: String, _ waiter: Waiter, group: String) -> Bool {
        guard var state = hosts[host], var line = state.waiting[group], let position = line.firstIndex(of: waiter) else {
            return false
        }
        line.remove(at: position)
        if line.isEmpty {
            state.waiting[group] = nil
            state.turns.removeAll { $0 == group }
        } else {
            state.waiting[group] = line
        }
        hosts[host] = state
        return true
    }

    /// Downloads running at `host`.
    func running(at host: String) -> Int { hosts[host]?.running ?? 0 }
}
