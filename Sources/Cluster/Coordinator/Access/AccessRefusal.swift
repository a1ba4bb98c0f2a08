/// A request refused for want of a role or of ownership.
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
