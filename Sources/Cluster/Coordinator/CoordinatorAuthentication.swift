import Messaging

/// CurveZMQ for a coordinator: its key pair, and the public keys of the workers, clients and
/// administrators it admits, with their roles.
///
/// With it, the coordinator starts a ZAP handler (`ZAPAuthenticator`) in its context before it binds,
/// and its socket is a CurveZMQ server: every frame is encrypted, and a peer whose key is on no list
/// never gets past the handshake (the refusal is logged and counted). What an admitted key may do is
/// its roles' (`PeerRole`, `AccessPolicy`).
public struct CoordinatorAuthentication: Sendable, Equatable {
    /// The coordinator's own key pair; workers and clients need its public key.
    public var keyPair: CurveKeyPair
    /// The admitted keys and their roles.
    public var roles: AccessRoles
    /// The allow-lists `roles` was read from, read again by `Coordinator.reloadAllowLists()` (SIGHUP);
    /// empty when the roles were given directly.
    public var sources: [AllowListSource]

    /// Every admitted key, whatever its roles.
    public var allowedKeys: Set<CurvePublicKey> { roles.allKeys }

    /// Admits `allowedKeys` with every role (what `--allow-keys` alone does).
    public init(keyPair: CurveKeyPair, allowedKeys: Set<CurvePublicKey>) {
        self.init(keyPair: keyPair, roles: AccessRoles(allRoles: allowedKeys))
    }

    /// Admits the keys of `roles`, each with its roles; `sources` are where a reload reads them again.
    public init(keyPair: CurveKeyPair, roles: AccessRoles, sources: [AllowListSource] = []) {
        self.keyPair = keyPair
        self.roles = roles
        self.sources = sources
    }
}
