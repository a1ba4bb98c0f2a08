/// What an endpoint's handler answers to a request.
///
/// The server adds `Content-Length` (or sends a body of unknown size chunked) and manages `Connection`;
/// a `HEAD` request gets the head alone.
public enum HTTPEndpointReply: Sendable {
    /// A complete response.
    case complete(status: Int, headers: [(name: String, value: String)], body: [UInt8])
    /// A response whose body `body` produces piece by piece; `size` is its length when known (then sent
    /// with a `Content-Length`; else chunked).
    case stream(status: Int, headers: [(name: String, value: String)], size: Int?, body: any HTTPEndpointBody)
    /// No response: the connection is closed.
    case drop
}

/// A response body produced piece by piece on the connection's thread (an event stream, a slow body).
///
/// The server calls ``next(stop:)`` until it returns `nil`, one call at a time, then ``finish()`` once,
/// also when the client has gone first.
public protocol HTTPEndpointBody: AnyObject, Sendable {
    /// The next bytes of the body (may block the connection's thread: wait with `stop`, which is raised
    /// when the server stops); `nil` at the end.
    func next(stop: StopSignal) -> [UInt8]?
    /// Called once when the response has ended or the connection has closed.
    func finish()
}
