/// A request refused for want of a role or of ownership, or a worker's message refused because it does
/// not speak for its sender (`WorkerBinding`).
struct AccessRefusal: Equatable {
    /// Why, for metrics (`reason="needs_client"`).
    enum Reason: String, CaseIterable {
        /// A worker's message from a key without the worker role.
        case needsWorker = "needs_worker"
        /// A submission from a key without the client role.
        case needsClient = "needs_client"
        /// Reading or cancelling batches from a key with neither the client nor the admin role.
        case needsClientOrAdmin = "needs_client_or_admin"
        /// A client naming a batch another client submitted (or one without an owner).
        case notOwner = "not_owner"
        /// A worker's message from a key other than the one its registration was made with (another peer
        /// took over the worker's routing identity) (`WorkerBinding`).
        case workerKeyMismatch = "worker_key_mismatch"
        /// A hello naming a worker ID that another connection has registered (`WorkerBinding`).
        case workerIDTaken = "worker_id_taken"
        /// A result for a task assigned to another worker's connection (`WorkerBinding`).
        case notAssigned = "not_assigned"
    }

    /// How refusals are counted: `shiftwork_refusals_total{role, request, reason}`.
    struct Labels: Hashable {
        /// The sender's roles (`PeerRole.label`).
        let role: String
        /// `AccessRequest.label`.
        let request: String
        let reason: Reason
    }

    let labels: Labels
    /// For the refused peer (the `Refusal`'s reason) and the log: says which role is needed.
    let message: String
}
