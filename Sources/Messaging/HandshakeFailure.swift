/// A connection whose ZMTP handshake failed, as the connecting socket's monitor reports it
/// (`SocketChannel.open(onHandshakeFailure:)`). With CurveZMQ, a peer whose key the server's ZAP handler
/// refused sees `.refused(statusCode: 400)`; libzmq then reconnects and is refused again.
public struct HandshakeFailure: Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Reason: Sendable, Equatable {
        /// The server's authenticator refused this peer, with ZAP status `statusCode` (400: not allowed,
        /// 300: try later, 500: the authenticator failed).
        case refused(statusCode: Int)
        /// The peers do not speak the same security mechanism or protocol (e.g. CurveZMQ against a
        /// server without it, or a wrong server key), with libzmq's `ZMQ_PROTOCOL_ERROR_*` code.
        case protocolError(code: Int)
        /// The handshake failed for a reason libzmq does not detail (often: the server key is wrong, so
        /// the server cannot decrypt the hello, and closes the connection).
        case unspecified
    }

    /// What went wrong.
    public let reason: Reason
    /// The endpoint of the connection, e.g. `tcp://127.0.0.1:5570`.
    public let endpoint: String

    /// Creates a failure report.
    public init(reason: Reason, endpoint: String) {
        self.reason = reason
        self.endpoint = endpoint
    }

    public var description: String {
        switch reason {
        case .refused(let status): "\(endpoint) refused the handshake (ZAP status \(status))"
        case .protocolError(let code):
            "the handshake with \(endpoint) failed (protocol error 0x\(String(code, radix: 16)))"
        case .unspecified: "the handshake with \(endpoint) failed"
        }
    }
}
