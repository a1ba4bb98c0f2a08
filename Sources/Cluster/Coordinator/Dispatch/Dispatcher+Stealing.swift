import Messaging
import Wire

/// Work stealing at a batch's tail, as HyperQueue and Ray do it: when a worker has an idle compute thread
/// and nothing is left to assign, the dispatcher asks a worker that holds a task waiting behind its busy
/// compute threads to give it back (`GiveBackTask`). The worker answers "given back" (it will never run
/// it) or "started" (nothing changes) in `TaskGivenBack`; a task given back is assigned again, to the idle
/// worker. Only workers that announced `WorkerHello.giveBackThreads` take part, as thieves or victims.
///
/// Exactly one worker runs a task: it is assigned again only once its worker said it will not run it, or,
/// when that answer was lost, once a heartbeat after the ask shows the worker no longer holds it (results
/// precede heartbeats on the connection, so a task that finished there was answered first). A result that
/// crosses the ask answers the task as usual; the "started" answer that follows changes nothing. A
/// cancelled task given back counts as the cancel's confirmation.
///
/// A tilt-shift whose input stayed on its worker (a chained follow-on, or one pinned there) cannot travel:
/// given back, it fails as `inputMissing` and its download runs again on the idle worker (`Lineage`, one of
/// its re-runs): a 12 MP photo's download is a few milliseconds, its filter ~90. One already re-run is not
/// asked back, so stealing never uses up an item's re-runs.
extension Dispatcher {
    /// Registers a worker's part in stealing (at its hello).
    mutating func noteGiveBack(_ hello: WorkerHello, peer: PeerIdentity) {
        workers[peer]?.giveBackThreads = Int(hello.giveBackThreads)
        if hello.giveBackThreads > 0 { stealing.workers.insert(peer) } else { stealing.workers.remove(peer) }
    }

    /// The asks to send now: none while tasks wait to be assigned; else one per idle compute thread (of
    /// workers taking part) not yet covered by an unanswered ask, each to a worker with more tasks than
    /// compute threads, for its most recently assigned task that may wait (the one least likely to have
    /// started). Called at the end of every `dispatch()`: a check when nobody takes part.
    mutating func askBackForIdleThreads() -> [Outbound] {
        guard !stealing.workers.isEmpty, readyQueue.isEmpty, workersWithPinned.isEmpty else { return [] }
        var idleThreads = 0
        var victims: [(peer: PeerIdentity, waiting: Int)] = []
        for peer in stealing.workers {
            guard let worker = workers[peer] else {
                stealing.workers.remove(peer)
                continue
            }
            let threads = worker.giveBackThreads
            if worker.running.count < threads { idleThreads += min(threads - worker.running.count, worker.freeSlots) }
            if worker.running.count > threads { victims.append((peer, worker.running.count - threads)) }
        }
        guard idleThreads > 0, !victims.isEmpty else { return [] }
        stealing.prune { key, worker, attempt in
            guard let entry = entries[key], entry.assignment.attempt == attempt,
                case .running(let holder) = entry.state
            else { return false }
            return worker == nil || holder == worker
        }
        var wanted = idleThreads - stealing.asked.count - stealing.rerunsDue.count
        guard wanted > 0 else { return [] }
        var out: [Outbound] = []
        for victim in victims.sorted(by: { $0.waiting > $1.waiting }) where wanted > 0 {
            var room = min(wanted, victim.waiting - stealing.pending(on: victim.peer))
            guard room > 0, let worker = workers[victim.peer] else { continue }
            // Newest first; a worker's compute threads take tasks in the order they came, so once one has
            // started, the older ones have too: none of them is asked.
            let newestFirst = worker.running.compactMap { key -> (key: TaskKey, entry: Entry)? in
                guard let entry = entries[key], isStealable(entry, on: victim.peer) else { return nil }
                return (key, entry)
            }.sorted { $0.entry.assignment.sequence > $1.entry.assignment.sequence }
            for (key, entry) in newestFirst where room > 0 {
                let attempt = entry.assignment.attempt
                if stealing.started[key] == attempt { break }
                guard stealing.mayAsk(key, attempt: attempt) else { continue }
                stealing.asked[key] = TailStealing.Ask(worker: victim.peer, attempt: attempt)
                stealing.askedCount += 1
                wanted -= 1
                room -= 1
                out.append(
                    Outbound(peer: victim.peer, message: .giveBackTask(GiveBackTask(taskKey: key, attempt: attempt))))
            }
        }
        return out
    }

    /// Whether the task of `entry`, running on `peer`, may be asked back: a minor-1 assignment, and either
    /// sent with its input (it can go anywhere) or a first-run tilt-shift pinned to `peer` (its download
    /// runs again elsewhere).
    private func isStealable(_ entry: Entry, on peer: PeerIdentity) -> Bool {
        guard case .running(let holder) = entry.state, holder == peer, entry.assignment.sequence > 0 else {
            return false
        }
        if entry.pinnedTo == peer { return entry.assignment.attempt < Lineage.attemptStride }
        return !entry.sentByReference && entry.pinnedTo == nil
    }

    /// A worker's answer to `GiveBackTask`. "Given back" for the current attempt running there: assigned
    /// again (to the idle worker); for a task being cancelled there: its cancel is confirmed. "Started":
    /// never asked again. Anything else (stale attempt, another worker, a task gone) is counted as stale.
    mutating func givenBack(
        _ answer: TaskGivenBack, from peer: PeerIdentity, now: ContinuousClock.Instant
    ) -> [Outbound] {
        if let index = workers.index(forKey: peer) { workers.values[index].lastSeen = now }
        let key = answer.taskKey
        if stealing.asked[key]?.worker == peer { stealing.asked[key] = nil }
        guard let entry = entries[key], entry.assignment.attempt == answer.attempt else {
            staleResults += 1
            return []
        }
        switch entry.state {
        case .running(let worker) where worker == peer:
            guard answer.givenBack else {
                stealing.started[key] = answer.attempt
                return []
            }
            takeBack(key, entry, from: peer, now: now)
            return dispatch()
        case .cancelling(let worker) where worker == peer:
            guard answer.givenBack else { return [] }  // its result (cancelled, or done) confirms the cancel
            vacate(key, on: peer)
            removeEntry(key)
            return dispatch()
        default:
            staleResults += 1
            return []
        }
    }

    /// Tasks asked back from `peer` that its heartbeat no longer shows held: given back (the answer was
    /// lost) or never received; either way the worker will not run them. Taken back; returns their keys.
    mutating func takeBackUnheld(_ keys: [TaskKey], from peer: PeerIdentity, now: ContinuousClock.Instant) {
        for key in keys {
            stealing.asked[key] = nil
            guard let entry = entries[key], case .running(let worker) = entry.state, worker == peer else { continue }
            takeBack(key, entry, from: peer, now: now)
        }
    }

    /// A download queued for dependent `dependentKey`: when that is a tilt-shift given back, its re-run has
    /// come; returns the worker that gave it back, for the download to pass over (it goes to the idle one).
    mutating func noteRerun(of dependentKey: TaskKey) -> PeerIdentity? {
        stealing.rerunsDue.removeValue(forKey: dependentKey)?.victim
    }

    /// Whether a heartbeat's missing `key` from `peer` is a task asked back there.
    func wasAskedBack(_ key: TaskKey, from peer: PeerIdentity) -> Bool {
        !stealing.asked.isEmpty && stealing.asked[key]?.worker == peer
    }

    /// Takes a task its worker gave back: its slot is freed; it is queued again first in line, away from
    /// that worker, or, with its input on that worker, failed as `inputMissing` for its download to run again.
    private mutating func takeBack(
        _ key: TaskKey, _ entry: Entry, from peer: PeerIdentity, now: ContinuousClock.Instant
    ) {
        stealing.givenBackCount += 1
        vacate(key, on: peer)
        if entry.pinnedTo == peer {
            // Until its download is queued again (`noteRerun`).
            stealing.rerunsDue[key] = TailStealing.Rerun(since: now, victim: peer)
            loseInput(
                key, reason: "its worker gave it back to run on an idle one; downloading it again there",
                givenBack: true)
            return
        }
        var entry = entry
        entry.avoid = peer
        requeue(key, entry)
    }
}
