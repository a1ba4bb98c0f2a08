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
        /// `RetryBatch`.
        case retry

        /// The action as the reason of a refusal words it.
        var phrase: String {
            switch self {
            case .status: "reading a batch's status"
            case .cancel: "cancelling a batch"
            case .results: "fetching a batch's results"
            case .retry: "re-running a batch's items"
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
