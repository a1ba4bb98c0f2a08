import Messaging

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
