/// One HTTP request as an endpoint's handler sees it: method, request target and headers, as they
/// came over the network (nothing escaped: escape before logging or printing).
public struct HTTPEndpointRequest: Sendable {
    /// `GET`, `HEAD`, …
    public var method: String
    /// The request target exactly as on the request line: path and query (`/batches/b-1?token=…`), or an
    /// absolute URI when the client takes the server for a proxy.
    public var target: String
    /// The header lines, in order.
    public var headers: [(name: String, value: String)]

    /// A request of `method` for `target` with `headers`.
    public init(method: String, target: String, headers: [(name: String, value: String)] = []) {
        self.method = method
        self.target = target
        self.headers = headers
    }

    /// The target without its query string.
    public var path: String { String(target.prefix { $0 != "?" }) }

    /// The value of the first header named `name` (any case), if any.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The values of every header named `name` (any case), in order.
    public func headers(named name: String) -> [String] {
        headers.filter { $0.name.lowercased() == name.lowercased() }.map(\.value)
    }
}
