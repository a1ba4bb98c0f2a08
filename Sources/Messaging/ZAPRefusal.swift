/// A peer the ZAP handler refused (`ZAPAuthenticator`), as reported to its `onRefusal` callback.
public struct ZAPRefusal: Sendable, Equatable {
    /// The peer's network address, as libzmq gives it (e.g. `127.0.0.1`).
    public let address: String
    /// The peer's CurveZMQ public key in Z85, or empty for another mechanism.
    public let publicKey: String
    /// The security mechanism the peer used (`CURVE`).
    public let mechanism: String
    /// Why it was refused, as sent back in the ZAP reply.
    public let reason: String
    /// Refusals of this key (or of this mechanism, without a key) since the authenticator started.
    public let total: Int
    /// Refusals of this key that were not reported since the previous report (rate limiting).
    public let unreported: Int
}
