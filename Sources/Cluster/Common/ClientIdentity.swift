import Messaging

/// Who a batch belongs to, for sharing the cluster between clients and for the scope of idempotency
/// keys: the public key the client authenticated with (CurveZMQ), else its ZeroMQ routing identity.
/// The coordinator gets it from the submission's ``MessageSender`` (`MessageSender.client`), the one
/// notion of who sent something; this is that sender seen as a client (two processes with one key are one).
///
/// A key is the same for every process of a client, so its batches share one fair share and its
/// idempotency keys are its own. A routing identity is made up per client process (`client-UUID`):
/// without CurveZMQ every `shiftwork submit` is a client of its own, and idempotency keys are shared by
/// all clients (there is nothing else to tell them apart).
struct ClientIdentity: Hashable, Sendable, CustomStringConvertible {
    /// What identifies the client.
    enum Source: Hashable, Sendable {
        /// The CurveZMQ public key it authenticated with.
        case key(CurvePublicKey)
        /// Its routing identity (no CurveZMQ).
        case peer(PeerIdentity)
    }

    let source: Source

    /// The client that sent a message from `peer`, authenticated with `key` when CurveZMQ is on.
    init(peer: PeerIdentity, key: CurvePublicKey?) {
        source = key.map(Source.key) ?? .peer(peer)
    }

    /// The public key, when the client authenticated with one.
    var publicKey: CurvePublicKey? {
        if case .key(let key) = source { return key }
        return nil
    }

    /// The namespace of the client's idempotency keys: its public key, or "" (shared) without one.
    var idempotencyScope: String { publicKey?.z85 ?? "" }

    var description: String {
        switch source {
        case .key(let key): "key \(key.z85)"
        case .peer(let peer): "peer \(peer)"
        }
    }
}
