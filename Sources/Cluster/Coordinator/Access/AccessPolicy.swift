/// Who may do what on a coordinator with role allow-lists: a pure decision (the sender's roles, the
/// request, the batch's owner in; allow or refuse with a reason out), free of sockets and state.
///
/// Rules:
/// - Worker messages (hello, heartbeats, results, goodbye) need the `worker` role.
/// - Submitting a batch needs the `client` role; the batch is then owned by the submitter's key.
/// - Listing batches (`status`) needs `client` or `admin`: an administrator sees every batch, a client
///   only those it owns. The workers and the queue are shown to both.
/// - Reading, cancelling, fetching or retrying one batch needs `admin`, or `client` and owning the batch. A batch
///   without an owner (submitted without CurveZMQ) is an administrator's to handle. A batch the
///   coordinator does not know is answered as such to a client or administrator.
/// - A key on several lists has the union of their rights; a key on none (removed by a reload while
///   connected) has none.
enum AccessPolicy {
    static func decide(_ request: AccessRequest, by peer: PeerAccess) -> AccessDecision {
        func refuse(_ reason: AccessRefusal.Reason, _ message: String) -> AccessDecision {
            .refused(
                AccessRefusal(
                    labels: AccessRefusal.Labels(
                        role: PeerRole.label(peer.roles), request: request.label, reason: reason),
                    message: message))
        }
        // Said only in a refusal: built when one is made, not for every message allowed.
        var having: String { rolesPhrase(peer.roles) }
        switch request {
        case .workerMessage:
            if peer.has(.worker) { return .allowed(.all) }
            return refuse(
                .needsWorker,
                "this key may not act as a worker: registering as a worker and sending task "
                    + "results needs the worker role (the coordinator's --allow-workers or --allow-keys list); \(having)"
            )
        case .submit:
            if peer.has(.client) { return .allowed(.all) }
            return refuse(
                .needsClient,
                "submitting a batch needs the client role (the coordinator's --allow-clients "
                    + "or --allow-keys list); \(having)")
        case .listBatches:
            if peer.has(.admin) { return .allowed(.all) }
            if peer.has(.client) { return .allowed(.ownedBy(peer.key)) }
            return refuse(
                .needsClientOrAdmin,
                "listing batches needs the client or admin role (the coordinator's "
                    + "--allow-clients, --allow-admins or --allow-keys list); \(having)")
        case .batch(let action, let batchID, let owner):
            if peer.has(.admin) { return .allowed(.all) }
            guard peer.has(.client) else {
                return refuse(
                    .needsClientOrAdmin,
                    "\(action.phrase) needs the client role (for its own batches) or the "
                        + "admin role (the coordinator's --allow-clients, --allow-admins or --allow-keys list); \(having)"
                )
            }
            switch owner {
            case .unknownBatch:
                return .allowed(.all)
            case .key(let ownerKey) where ownerKey == peer.key:
                return .allowed(.all)
            case .nobody where peer.key == nil:
                return .allowed(.all)
            case .key:
                return refuse(
                    .notOwner,
                    "batch \(batchID) was submitted by another client: a client key sees, cancels, "
                        + "fetches and retries only its own batches; \(action.phrase) of another's needs the admin role (the "
                        + "coordinator's --allow-admins list)")
            case .nobody:
                return refuse(
                    .notOwner,
                    "batch \(batchID) has no owner (it was submitted without CurveZMQ): "
                        + "\(action.phrase) needs the admin role (the coordinator's --allow-admins list)")
            }
        }
    }

    /// The sender's roles, as the end of a refusal's reason says them.
    private static func rolesPhrase(_ roles: Set<PeerRole>) -> String {
        switch roles.count {
        case 0: return "this key is on none of the coordinator's allow-lists (any more)"
        case 1: return "this key has the \(PeerRole.label(roles)) role only"
        default: return "this key has the \(roles.sorted().map(\.rawValue).joined(separator: " and ")) roles"
        }
    }
}
