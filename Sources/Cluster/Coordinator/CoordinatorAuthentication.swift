import Messaging

/// CurveZMQ for a coordinator: its key pair, and the public keys of the workers and clients it admits.
///
/// With it, the coordinator starts a ZAP handler (`ZAPAuthenticator`) in its context before it binds,
/// and its socket is a CurveZMQ server: every frame is encrypted, and a peer whose key is not listed
/// never gets past the handshake (the refusal is logged and counted).
public struct CoordinatorAuthentication: Sendable, Equatable {
    /// The coordinator's own key pair; workers and clients need its public key.
    public var keyPair: CurveKeyPair
    /// The public keys of the workers and clients allowed in.
    public var allowedKeys: Set<CurvePublicKey>

    /// Creates the setting.
    public init(keyPair: CurveKeyPair, allowedKeys: Set<CurvePublicKey>) {
        self.keyPair = keyPair
        self.allowedKeys = allowedKeys
    }
}
