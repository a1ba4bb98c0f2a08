import Messaging

/// The batches a sender may see in a list.
enum BatchScope: Equatable {
    /// Every batch (administrators; every peer without CurveZMQ).
    case all
    /// Only those this key submitted (clients); `nil`: those submitted without a key.
    case ownedBy(CurvePublicKey?)

    /// Whether a batch of `owner` (`nil`: submitted without a key) is in the scope.
    func includes(_ owner: CurvePublicKey?) -> Bool {
        switch self {
        case .all: true
        case .ownedBy(let key): owner == key
        }
    }
}
