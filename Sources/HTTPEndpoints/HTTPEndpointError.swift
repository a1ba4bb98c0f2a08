/// Why an HTTP endpoint server could not start.
public enum HTTPEndpointError: Error, CustomStringConvertible, Sendable {
    /// `host:port` could not be bound (in use, not an address of this machine, not resolvable).
    case cannotListen(host: String, port: Int, reason: String)
    /// libmicrohttpd refused to start (out of threads or memory).
    case cannotStart(host: String, port: Int)
    /// libmicrohttpd (opened by the first server's start, not at process start) could not be loaded; `reason`
    /// names the library and the Debian package to install.
    case libraryUnavailable(host: String, port: Int, reason: String)

    /// Whether another address may help (the address could not be bound); not when libmicrohttpd is missing or
    /// refused to start.
    public var isAboutTheAddress: Bool {
        if case .cannotListen = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .cannotListen(let host, let port, let reason):
            return
                "cannot listen for HTTP on \(host):\(port): \(reason) (give a free port, or 0 for any, on an address of this machine)"
        case .cannotStart(let host, let port):
            return "cannot start the HTTP server on \(host):\(port): libmicrohttpd refused (out of threads or memory?)"
        case .libraryUnavailable(let host, let port, let reason):
            return "cannot start the HTTP server on \(host):\(port): \(reason)"
        }
    }
}
