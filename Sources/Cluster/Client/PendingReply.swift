import Wire

/// A request of `ClusterClient` waiting for its one reply.
enum PendingReply {
    case status(CheckedContinuation<StatusReply, any Error>)
    case cancel(batchID: String, CheckedContinuation<CancelAccepted, any Error>)

    /// Resumes the request with its reply (a reply of another kind fails it).
    func resolve(with reply: StatusReply) {
        guard case .status(let continuation) = self else { return fail(Self.mismatch) }
        continuation.resume(returning: reply)
    }

    func resolve(with reply: CancelAccepted) {
        guard case .cancel(_, let continuation) = self else { return fail(Self.mismatch) }
        continuation.resume(returning: reply)
    }

    private static let mismatch = ClusterClientError.refused(
        "the coordinator answered with a reply to another kind of request")

    func fail(_ error: any Error) {
        switch self {
        case .status(let continuation): continuation.resume(throwing: error)
        case .cancel(_, let continuation): continuation.resume(throwing: error)
        }
    }

    /// The error a refusal of this request means.
    func error(for refusal: Refusal) -> ClusterClientError {
        if case .cancel(let batchID, _) = self, refusal.code == .unknownBatch { return .unknownBatch(batchID: batchID) }
        return .refused(refusal.reason)
    }
}
