/// The CurveZMQ role of a socket: applied before it binds or connects (`SocketOptions.curve`).
///
/// With CurveZMQ every frame is encrypted and the client proves it holds its secret key; the server
/// checks the client's public key through the ZAP handler of its context (`ZAPAuthenticator`). Without
/// a running ZAP handler libzmq lets every client in, so a server must start one first.
public enum CurveSecurity: Sendable, Equatable {
    /// The binding side (the coordinator): its own key pair.
    case server(CurveKeyPair)
    /// The connecting side (a worker or a client): its own key pair, and the server's public key.
    case client(CurveKeyPair, serverKey: CurvePublicKey)
}
