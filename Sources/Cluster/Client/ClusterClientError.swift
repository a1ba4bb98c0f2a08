import Messaging

/// Why a client request did not succeed.
public enum ClusterClientError: Error, CustomStringConvertible, Equatable {
    /// Nothing answered at the endpoint in time. `usingKeys`: the client used CurveZMQ, so the
    /// coordinator may have refused its key or it may have the wrong coordinator key.
    case noAnswer(endpoint: String, waited: Duration, usingKeys: Bool = false)
    /// The coordinator refused this client's CurveZMQ handshake: its public key is not on the
    /// coordinator's allow-list, or the two disagree on security (`failure` says what libzmq reported).
    case notAuthorized(endpoint: String, failure: HandshakeFailure)
    /// The coordinator answered with a refusal.
    case refused(String)
    /// The client was closed while waiting.
    case closed
    /// The coordinator stopped answering while a batch was running.
    case lostContact(endpoint: String, batchID: String, waited: Duration)
    /// The coordinator restarted and no longer has the batch (it runs without a data directory).
    case batchForgotten(batchID: String, reason: String)
    /// The request would be a message larger than peers accept.
    case messageTooLarge(bytes: Int, limit: Int64)
    /// The coordinator does not know the batch (it finished long ago, or another coordinator had it).
    case unknownBatch(batchID: String)
    /// Nothing acknowledged a cancel in time: no coordinator answers there, or it is older than protocol
    /// minor 2 and carries cancels out without acknowledging them.
    case cancelNotAcknowledged(endpoint: String, batchID: String, waited: Duration)

    public var description: String {
        switch self {
        case .noAnswer(let endpoint, let waited, false):
            "no answer from a coordinator at \(endpoint) within \(waited). Is one running there? Start one with "
                + "`shiftwork coordinator --listen tcp://0.0.0.0:5570 --insecure` (or with keys, as docs/deployment.md "
                + "shows; then give this command --secret-key and --coordinator-key), or point to it with --coordinator "
                + "or SHIFTWORK_COORDINATOR; `shiftwork run` needs no coordinator at all."
        case .noAnswer(let endpoint, let waited, true):
            "no answer from a coordinator at \(endpoint) within \(waited). Is one running there, with CurveZMQ on? "
                + "Is this client's public key on the coordinator's allow-list (--allow-keys), and is --coordinator-key "
                + "the coordinator's public key? Otherwise the coordinator drops the connection unanswered."
        case .notAuthorized(let endpoint, let failure):
            ClusterSecurityHint.refused(endpoint: endpoint, failure: failure, peer: "client")
        case .refused(let reason):
            "the coordinator refused the request: \(reason)"
        case .closed:
            "the client was closed before the coordinator answered"
        case .lostContact(let endpoint, let batchID, let waited):
            "lost contact with the coordinator at \(endpoint): no answer for \(waited) while batch \(batchID) was running. "
                + "Check that it is still up; once it is back, `shiftwork results \(batchID) --out DIR` fetches the "
                + "batch's results (with a coordinator that keeps a --data-dir)."
        case .messageTooLarge(let bytes, let limit):
            "the batch would be a message of \(bytes >> 20) MiB, more than the \(limit >> 20) MiB a coordinator accepts "
                + "by default (its --max-message-mb): split it into smaller batches"
        case .batchForgotten(let batchID, let reason):
            "the coordinator restarted and cannot carry on with batch \(batchID): \(reason)"
        case .unknownBatch(let batchID):
            "the coordinator knows no batch '\(batchID)': `shiftwork status` lists the batches it knows"
        case .cancelNotAcknowledged(let endpoint, let batchID, let waited):
            "no answer from a coordinator at \(endpoint) within \(waited) to the cancel of batch \(batchID). Is one "
                + "running there? A coordinator older than protocol minor 2 carries a cancel out without answering: "
                + "`shiftwork status \(batchID)` shows whether the items were cancelled."
        }
    }
}
