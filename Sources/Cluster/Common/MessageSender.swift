import Messaging

/// Who sent a message to the coordinator's ROUTER: its routing identity (where answers go) and, with
/// CurveZMQ, the public key it authenticated with (what it may do, and whose batches are its own).
///
/// The key comes from the socket's thread (`SocketChannel.open(appendsPeerKey:)`), never from the
/// message's contents. A journaled batch's submitter is restored as one too (its routing identity and
/// owner key), so that "who" has one source: the sender, and the client it is (`client`).
struct MessageSender: Hashable, Sendable {
    let identity: PeerIdentity
    /// `nil` without CurveZMQ.
    let key: CurvePublicKey?

    /// The client this sender is, for fair share and the scope of idempotency keys: its key when it has
    /// one (every process of a client alike), else its routing identity.
    var client: ClientIdentity { ClientIdentity(peer: identity, key: key) }

    /// The sender and the envelope of a message received as [identity, envelope, key]; `nil` for any
    /// other shape.
    static func split(_ frames: [[UInt8]]) -> (sender: MessageSender, envelope: [UInt8])? {
        let (own, key) = PeerKeyFrame.split(frames)
        guard own.count == 2, let identity = own.first, let envelope = own.last else { return nil }
        return (MessageSender(identity: PeerIdentity(identity), key: key), envelope)
    }
}
