import Wire

/// The bookkeeping of tilt-shifts chained to their downloads (`TaskAssignment.followOn`), free of I/O.
///
/// A download whose dependent is a tilt-shift of its image is queued with that tilt-shift as its
/// follow-on (`offer`). When the download goes to a worker that accepts chained tasks, the follow-on
/// travels with it (`attach`); the worker runs it right after the download, in the same slot. When the
/// download's result comes (`takeAttached`), a success whose image stayed on that worker makes the
/// follow-on *adopted*: it runs there already, without an assignment of its own. Its operation asks for it
/// only once the download's operation has finished (at the end of the coordinator's wake-up), so a result
/// of the follow-on that comes first (the same message) is held (`hold`) and handed over when the
/// operation asks (`requested`), in order.
struct ChainedFollowOns {
    private struct Offer {
        let followOn: TaskAssignment
        /// The worker the download (and so the follow-on) was last sent to; `nil`: sent without it.
        var attachedTo: PeerIdentity?
    }

    /// Follow-ons queued with their downloads, by the download's key.
    private var offers: [TaskKey: Offer] = [:]
    /// Adopted follow-ons whose operations have not asked for them yet, by the follow-on's key, with the
    /// result that came meanwhile (and the worker it came from), if any.
    private var unrequested: [TaskKey: (result: TaskResult, worker: PeerIdentity?)?] = [:]
    /// Results held for follow-ons whose operations have now asked: to deliver, in order.
    private var ready: [(result: TaskResult, worker: PeerIdentity?)] = []
    /// Follow-ons adopted since the last `takeAdopted()`, with their workers (their timeouts start).
    private var adopted: [(assignment: TaskAssignment, worker: PeerIdentity)] = []
    /// Follow-ons that ran chained to their download (adopted), since the coordinator started.
    private(set) var chainedCount: UInt64 = 0

    /// How many downloads wait or run with a follow-on, and adopted follow-ons not asked for yet.
    var count: (offers: Int, unrequested: Int) { (offers.count, unrequested.count) }

    /// Download `key` is queued with `followOn`, the tilt-shift that consumes its image (as it would be
    /// sent on its own).
    mutating func offer(_ followOn: TaskAssignment, with key: TaskKey) {
        offers[key] = Offer(followOn: followOn, attachedTo: nil)
    }

    /// Download `key` is sent to `worker`: its follow-on, to send with it when the worker accepts chained
    /// tasks (else it is sent without, and its dependent follows in the ordinary way).
    mutating func attach(_ key: TaskKey, to worker: PeerIdentity, accepted: Bool) -> ChainedTask? {
        guard let index = offers.index(forKey: key) else { return nil }
        offers.values[index].attachedTo = accepted ? worker : nil
        return accepted ? ChainedTask(offers.values[index].followOn) : nil
    }

    /// The result of download `key` came from `worker`: the follow-on it carried there, to adopt when the
    /// download succeeded with its image kept on that worker. The offer is forgotten either way (a retry
    /// offers it again).
    mutating func takeAttached(_ key: TaskKey, from worker: PeerIdentity, result: TaskResult) -> TaskAssignment? {
        guard let offer = offers.removeValue(forKey: key), offer.attachedTo == worker,
            case .output(let output) = result.outcome, output.heldOnWorker
        else { return nil }
        return offer.followOn
    }

    /// The follow-on runs on `worker`, adopted: its result is held until its operation asks for it.
    mutating func adopt(_ followOn: TaskAssignment, on worker: PeerIdentity) {
        unrequested[followOn.taskKey] = .some(nil)
        adopted.append((followOn, worker))
        chainedCount += 1
    }

    /// The result for `result.taskKey` from `worker`, unless it answers an adopted follow-on whose operation
    /// has not asked yet: then it is held (and `nil` returned).
    mutating func hold(_ result: TaskResult, from worker: PeerIdentity?) -> TaskResult? {
        guard let index = unrequested.index(forKey: result.taskKey), unrequested.values[index] == nil else {
            return result
        }
        unrequested.values[index] = (result, worker)
        return nil
    }

    /// The operation of follow-on `key` asks for it: `true` when it was adopted (it runs, or ran, on its
    /// worker: nothing to send; a result held for it is ready, `takeReady()`), `false` otherwise.
    mutating func requested(_ key: TaskKey) -> Bool {
        guard let held = unrequested.removeValue(forKey: key) else { return false }
        if let held { ready.append(held) }
        return true
    }

    /// Task `key` is withdrawn or let go: an offer it made, or a follow-on adopted for it, is forgotten.
    mutating func forget(_ key: TaskKey) {
        offers[key] = nil
        unrequested[key] = nil
    }

    /// Download `key` left the dispatcher (answered, lost, withdrawn): its offer is forgotten.
    mutating func forgetOffer(_ key: TaskKey) {
        if !offers.isEmpty { offers[key] = nil }
    }

    /// The held results whose operations have asked, in the order they came.
    mutating func takeReady() -> [(result: TaskResult, worker: PeerIdentity?)] {
        guard !ready.isEmpty else { return [] }
        defer { ready = [] }
        return ready
    }

    /// The follow-ons adopted since the last call.
    mutating func takeAdopted() -> [(assignment: TaskAssignment, worker: PeerIdentity)] {
        guard !adopted.isEmpty else { return [] }
        defer { adopted = [] }
        return adopted
    }
}
