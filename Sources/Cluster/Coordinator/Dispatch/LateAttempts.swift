/// Attempts the dispatcher let go without their answer while their worker may still send it: the worker
/// was declared dead for its silence (it may only have stalled), or its attempt was timed out and then its
/// worker declared dead. Such an attempt's success, if it comes while the task has no result yet, is the
/// task's result (`Dispatcher+LateResults`). One attempt per task, the latest let go; an entry goes once the
/// task is answered, withdrawn, or its batch is forgotten, so the table holds only tasks whose attempts
/// were lost recently.
struct LateAttempts {
    /// An attempt let go unanswered.
    struct Attempt: Equatable {
        let attempt: UInt32
        /// The connection it ran on: only that one may answer it.
        let worker: PeerIdentity
        let batchID: String
    }

    private var attempts: [TaskKey: Attempt] = [:]

    var isEmpty: Bool { attempts.isEmpty }
    var count: Int { attempts.count }

    /// Task `key`'s `attempt`, on `worker`, was let go unanswered.
    mutating func note(_ key: TaskKey, _ attempt: Attempt) {
        attempts[key] = attempt
    }

    /// Whether a result of `attempt` from `worker` answers the attempt of `key` let go unanswered.
    func answers(_ key: TaskKey, attempt: UInt32, from worker: PeerIdentity) -> Bool {
        guard let noted = attempts[key] else { return false }
        return noted.attempt == attempt && noted.worker == worker
    }

    /// Task `key` was answered or withdrawn: no earlier attempt of it is wanted any more.
    mutating func forget(_ key: TaskKey) {
        attempts[key] = nil
    }

    /// The batch is finished: none of its tasks waits for a result.
    mutating func forget(batch batchID: String) {
        attempts = attempts.filter { $0.value.batchID != batchID }
    }
}
