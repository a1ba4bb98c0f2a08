import CZeroMQ

/// The ZeroMQ socket patterns Shiftwork uses.
public enum SocketKind: Sendable {
    /// Routes by peer identity; the coordinator's socket. Received messages start with the peer's identity frame.
    case router
    /// Talks to one ROUTER, asynchronously; the socket of workers and clients.
    case dealer
    /// One-to-one, mostly for tests.
    case pair
    /// Answers requests one at a time, in order; the socket of the ZAP handler (`ZAPAuthenticator`).
    case reply

    var rawValue: Int32 {
        switch self {
        case .router: ZMQ_ROUTER
        case .dealer: ZMQ_DEALER
        case .pair: ZMQ_PAIR
        case .reply: ZMQ_REP
        }
    }
}
