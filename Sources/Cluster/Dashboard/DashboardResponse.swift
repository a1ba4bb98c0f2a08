/// A complete HTTP response of the dashboard: status, headers and body.
public struct DashboardResponse: Sendable, Equatable {
    /// The status code (200, 303, 401, …).
    public var status: Int
    /// The headers besides `Content-Length` and `Connection`, which the server adds.
    public var headers: [Header]
    /// The body.
    public var body: [UInt8]

    /// One header line.
    public struct Header: Sendable, Equatable {
        public var name: String
        public var value: String
        public init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// A response with the dashboard's security headers: the page may load only its own script, style,
    /// images and event stream (no inline script, no other origin), may not be framed, and nothing is
    /// cached or sent on as a referrer (a `?token=` stays out of other sites' logs).
    public init(status: Int, contentType: String, body: [UInt8], extraHeaders: [Header] = []) {
        self.status = status
        self.body = body
        headers =
            [
                Header("Content-Type", contentType),
                Header(
                    "Content-Security-Policy",
                    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
                        + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"),
                Header("X-Content-Type-Options", "nosniff"),
                Header("X-Frame-Options", "DENY"),
                Header("Referrer-Policy", "no-referrer"),
                Header("Cache-Control", "no-store"),
            ] + extraHeaders
    }

    /// A response with a text body.
    public init(status: Int, contentType: String, text: String, extraHeaders: [Header] = []) {
        self.init(status: status, contentType: contentType, body: Array(text.utf8), extraHeaders: extraHeaders)
    }

    /// The value of header `name` (case-insensitive), if any.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The body as text.
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// An HTML page of the server's own (an error, or a page without data): `title` and `paragraphs` are
    /// escaped here; `hint` may hold markup of the server's (a `<code>` example), never network text.
    static func page(
        status: Int, title: String, paragraphs: [String], hintHTML: String = "",
        extraHeaders: [Header] = []
    ) -> DashboardResponse {
        let body = """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>\(HTMLText.escape(title)) · Shiftwork</title>
            <link rel="icon" href="data:,"><link rel="stylesheet" href="/dashboard.css"></head>
            <body><header class="top"><a class="brand" href="/">Shiftwork</a></header>
            <main class="notice"><h1>\(HTMLText.escape(title))</h1>
            \(paragraphs.map { "<p>\(HTMLText.escape($0))</p>" }.joined(separator: "\n"))
            \(hintHTML)
            </main></body></html>
            """
        return DashboardResponse(
            status: status, contentType: "text/html; charset=utf-8", text: body, extraHeaders: extraHeaders)
    }

    /// A JSON error for the `/api/` routes: `{"error": message}`.
    static func jsonError(status: Int, _ message: String, extraHeaders: [Header] = []) -> DashboardResponse {
        DashboardResponse(
            status: status, contentType: "application/json",
            text: JSONValue.object([("error", .string(message))]).compactText, extraHeaders: extraHeaders)
    }
}
