/// What an HTTP status code means to a download: its standard reason phrase (for messages; a server's
/// own phrase is never shown) and whether a later attempt may succeed.
enum HTTPStatus {
    /// `true` for 408 Request Timeout, 429 Too Many Requests and every 5xx: a retry may succeed.
    static func isTransient(_ code: Int) -> Bool {
        code == 408 || code == 429 || (500..<600).contains(code)
    }

    /// "404 Not Found", or just "599" for a code without a standard phrase.
    static func describe(_ code: Int) -> String {
        guard let phrase = reasonPhrases[code] else { return String(code) }
        return "\(code) \(phrase)"
    }

    private static let reasonPhrases: [Int: String] = [
        300: "Multiple Choices", 301: "Moved Permanently", 302: "Found", 303: "See Other", 304: "Not Modified",
        305: "Use Proxy", 307: "Temporary Redirect", 308: "Permanent Redirect",
        400: "Bad Request", 401: "Unauthorized", 402: "Payment Required", 403: "Forbidden", 404: "Not Found",
        405: "Method Not Allowed", 406: "Not Acceptable", 407: "Proxy Authentication Required",
        408: "Request Timeout", 409: "Conflict", 410: "Gone", 411: "Length Required", 412: "Precondition Failed",
        413: "Content Too Large", 414: "URI Too Long", 415: "Unsupported Media Type", 416: "Range Not Satisfiable",
        417: "Expectation Failed", 418: "I'm a teapot", 421: "Misdirected Request", 422: "Unprocessable Content",
        423: "Locked", 424: "Failed Dependency", 425: "Too Early", 426: "Upgrade Required",
        428: "Precondition Required",
        429: "Too Many Requests", 431: "Request Header Fields Too Large", 451: "Unavailable For Legal Reasons",
        500: "Internal Server Error", 501: "Not Implemented", 502: "Bad Gateway", 503: "Service Unavailable",
        504: "Gateway Timeout", 505: "HTTP Version Not Supported", 506: "Variant Also Negotiates",
        507: "Insufficient Storage", 508: "Loop Detected", 510: "Not Extended", 511: "Network Authentication Required",
    ]
}
