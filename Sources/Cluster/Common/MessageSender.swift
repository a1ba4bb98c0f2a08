import Messaging

/// Who sent a message to the coordinator's ROUTER: its routing identity (where answers go) and, with
/// CurveZMQ, the public key it authenticated with (what it may do, and whose batches are its own).
///
/// The key comes from the socket's thread (`SocketChannel.open(appendsPeerKey:)`), never from the
/// message's contents.
struct MessageSender: Hashable, Sendable {
    let identity: PeerIdentity
    /// `nil` without CurveZMQ.
    let key: CurvePublicKey?

    /// The sender and the envelope of a message received as [identity, envelope, key]; `nil` for any
    /// other shape.
    static func split(_ frames: [[UInt8]]) -> (sender: MessageSender, envelope: [UInt8])? {
        let (own, key) = PeerKeyFrame.split(frames)
        guard own.count == 2, let identity = own.first, let envelope = own.last else { return nil }
        return (MessageSender(identity: PeerIdentity(identity), key: key), envelope)
    }
}
