import Messaging

/// What a message asks of the coordinator, as access control sees it (`AccessPolicy`).
enum AccessRequest: Equatable {
    /// Something only a worker sends: `WorkerHello`, `Heartbeat`, `TaskResult(s)`, `WorkerGoodbye`.
    case workerMessage
    /// `SubmitBatch`.
    case submit
    /// `StatusRequest` without a batch: the cluster and the batches the sender may see.
    case listBatches
    /// A request naming one batch, and who owns that batch.
    case batch(BatchAction, batchID: String, owner: BatchOwner)

    /// What a request naming a batch does with it.
    enum BatchAction: String {
        /// `StatusRequest` with a batch ID.
        case status
        /// `CancelBatch`.
        case cancel
        /// `FetchResults`.
        case results

        /// The action as the reason of a refusal words it.
        var phrase: String {
            switch self {
            case .status: "reading a batch's status"
            case .cancel: "cancelling a batch"
            case .results: "fetching a batch's results"
            }
        }
    }

    /// The request's label in metrics (`request="submit"`).
    var label: String {
        switch self {
        case .workerMessage: "worker"
        case .submit: "submit"
        case .listBatches: "status"
        case .batch(let action, _, _): action.rawValue
        }
    }
}

/// Who owns a batch a request names.
enum BatchOwner: Equatable {
    /// The coordinator does not know the batch (never did, or retired it): the request is answered as
    /// for any unknown batch.
    case unknownBatch
    /// The batch was submitted without CurveZMQ (or journaled before owners were): no client owns it.
    case nobody
    /// The submitter's public key.
    case key(CurvePublicKey)
}

/// The sender of a request, as access control sees it: its key and the roles the allow-lists give it.
struct PeerAccess: Equatable {
    /// The key it authenticated with; `nil` without CurveZMQ.
    let key: CurvePublicKey?
    let roles: Set<PeerRole>

    /// A peer of a coordinator without CurveZMQ: every role, no key (everyone sees everything, as
    /// anyone who reaches an unauthenticated coordinator could claim any role anyway).
    static let unrestricted = PeerAccess(key: nil, roles: Set(PeerRole.allCases))

    func has(_ role: PeerRole) -> Bool { roles.contains(role) }
}
