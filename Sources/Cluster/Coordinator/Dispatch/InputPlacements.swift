/// Where the inputs of dependents stayed: a download whose image stayed on the worker that ran it
/// (`TaskOutput.heldOnWorker`) names that worker for its tilt-shift, which may then run only there (the
/// coordinator never had the bytes). Keyed by the dependent's task key; part of the `Dispatcher`'s state.
///
/// A placement is taken when its dependent is queued, dropped when the dependent will not run, and all of
/// a worker's placements go when it leaves: the dependent then fails with `FailureCode.inputMissing` and
/// its producer is run again elsewhere (`Lineage`).
struct InputPlacements {
    private var holders: [TaskKey: PeerIdentity] = [:]

    /// How many dependents have an input waiting on some worker.
    var count: Int { holders.count }

    /// Notes that the input of `dependent` is held by `peer`.
    mutating func record(_ dependent: TaskKey, on peer: PeerIdentity) {
        holders[dependent] = peer
    }

    /// The worker that holds the input of `dependent`, forgotten here (the dependent is being queued).
    mutating func take(_ dependent: TaskKey) -> PeerIdentity? {
        holders.removeValue(forKey: dependent)
    }

    /// Forgets the placement of a dependent that will not run.
    mutating func forget(_ dependent: TaskKey) {
        holders[dependent] = nil
    }

    /// Forgets every input `peer` held (it left, or registered again with an empty cache).
    mutating func forgetWorker(_ peer: PeerIdentity) {
        guard !holders.isEmpty else { return }
        holders = holders.filter { $0.value != peer }
    }
}
