/// An HTTP status code with its reason phrase, for the tests' origin server (`TestHTTPServer`): the
/// names tests write (`.ok`, `.notFound`, `.serviceUnavailable`, …).
public struct HTTPResponseStatus: Sendable, Equatable {
    /// The code, e.g. 404.
    public let code: Int
    /// The reason phrase, e.g. "Not Found".
    public let reasonPhrase: String

    /// A status of one's own.
    public init(code: Int, reasonPhrase: String) {
        self.code = code
        self.reasonPhrase = reasonPhrase
    }

    public static let ok = HTTPResponseStatus(code: 200, reasonPhrase: "OK")
    public static let noContent = HTTPResponseStatus(code: 204, reasonPhrase: "No Content")
    public static let movedPermanently = HTTPResponseStatus(code: 301, reasonPhrase: "Moved Permanently")
    public static let found = HTTPResponseStatus(code: 302, reasonPhrase: "Found")
    public static let seeOther = HTTPResponseStatus(code: 303, reasonPhrase: "See Other")
    public static let temporaryRedirect = HTTPResponseStatus(code: 307, reasonPhrase: "Temporary Redirect")
    public static let permanentRedirect = HTTPResponseStatus(code: 308, reasonPhrase: "Permanent Redirect")
    public static let badRequest = HTTPResponseStatus(code: 400, reasonPhrase: "Bad Request")
    public static let unauthorized = HTTPResponseStatus(code: 401, reasonPhrase: "Unauthorized")
    public static let forbidden = HTTPResponseStatus(code: 403, reasonPhrase: "Forbidden")
    public static let notFound = HTTPResponseStatus(code: 404, reasonPhrase: "Not Found")
    public static let tooManyRequests = HTTPResponseStatus(code: 429, reasonPhrase: "Too Many Requests")
    public static let internalServerError = HTTPResponseStatus(code: 500, reasonPhrase: "Internal Server Error")
    public static let badGateway = HTTPResponseStatus(code: 502, reasonPhrase: "Bad Gateway")
    public static let serviceUnavailable = HTTPResponseStatus(code: 503, reasonPhrase: "Service Unavailable")
    public static let gatewayTimeout = HTTPResponseStatus(code: 504, reasonPhrase: "Gateway Timeout")
}
