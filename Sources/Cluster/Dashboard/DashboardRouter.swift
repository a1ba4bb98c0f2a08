/// Decides what the coordinator's HTTP server answers: routing and access, free of sockets and of the
/// coordinator (the server then fetches what the route needs).
///
/// Order: a method other than GET or HEAD is 405; `/metrics` is served to anyone, as before the
/// dashboard; every other path needs access (`DashboardAccess`): 403 when the dashboard is off or the
/// host name is not a loopback one, 401 without the right token (a page that says how to get one); then
/// the route, or a 404 page.
public struct DashboardRouter: Sendable {
    /// Who may read the dashboard.
    public let access: DashboardAccess
    /// The name of the cookie that carries the token after `?token=`.
    public static let cookieName = "shiftwork_dashboard_token"
    /// How long the cookie lasts; then the browser drops it and the 401 page says how to sign in again.
    public static let cookieLifetimeSeconds = 12 * 3600

    public init(access: DashboardAccess) { self.access = access }

    /// The route for `request`; `token` is the current token (`nil` when the access needs none, or the
    /// token file cannot be read now).
    public func route(_ request: DashboardRequest, token: String?) -> DashboardRoute {
        guard request.method == "GET" || request.method == "HEAD" else {
            return .respond(
                DashboardResponse(
                    status: 405, contentType: "text/plain; charset=utf-8",
                    text: "method not allowed: the dashboard is read-only (GET, HEAD)\n",
                    extraHeaders: [.init("Allow", "GET, HEAD")]))
        }
        let segments = request.pathSegments
        if segments == ["metrics"] { return .metrics }
        let isAPI = segments.first == "api"
        if let refusal = refusal(request, token: token, isAPI: isAPI) { return .respond(refusal) }
        if request.query["token"] != nil, !isAPI, let token {
            // Signed in by `?token=`: keep it in a cookie and drop it from the address bar (and history).
            let path = "/" + segments.map(Self.percentEncodedSegment).joined(separator: "/")
            return .respond(
                DashboardResponse(
                    status: 303, contentType: "text/plain; charset=utf-8", text: "signed in\n",
                    extraHeaders: [
                        .init("Location", path),
                        .init(
                            "Set-Cookie",
                            "\(Self.cookieName)=\(token); Path=/; Max-Age=\(Self.cookieLifetimeSeconds); HttpOnly; SameSite=Strict"
                        ),
                    ]))
        }
        switch (segments.count, segments.first) {
        case (0, _): return .page(batchID: nil)
        case (2, "batches"): return .page(batchID: segments[1])
        case (1, "dashboard.css"):
            return .respond(
                DashboardResponse(status: 200, contentType: "text/css; charset=utf-8", text: DashboardStyle.css))
        case (1, "dashboard.js"):
            return .respond(
                DashboardResponse(
                    status: 200, contentType: "text/javascript; charset=utf-8", text: DashboardScript.javascript))
        case (2, "api") where segments[1] == "status": return .statusJSON
        case (2, "api") where segments[1] == "events":
            return .events(batchID: request.query["batch"].flatMap { $0.isEmpty ? nil : $0 })
        case (3, "api") where segments[1] == "batches": return .batchJSON(batchID: segments[2])
        case (6, "api") where segments[1] == "batches" && segments[3] == "items" && segments[5] == "preview":
            if let itemIndex = Int(segments[4]), itemIndex >= 0 {
                return .preview(batchID: segments[2], itemIndex: itemIndex)
            }
        default: break
        }
        return .respond(Self.notFound(isAPI: isAPI, what: "no such page"))
    }

    /// The 401, 403 or 503 answer when `request` may not read the dashboard; `nil` when it may.
    func refusal(_ request: DashboardRequest, token: String?, isAPI: Bool) -> DashboardResponse? {
        switch access {
        case .off:
            return Self.refused(
                status: 403, isAPI: isAPI, title: "The dashboard is off on this address",
                paragraphs: [
                    "This coordinator serves HTTP beyond loopback and was started without a dashboard token, so it serves only /metrics here.",
                    "To see the dashboard, start the coordinator with --dashboard-token-file FILE (a file holding a secret of 16 or more characters, e.g. from `openssl rand -hex 32`), or serve HTTP on 127.0.0.1 and reach it through an SSH tunnel.",
                ])
        case .loopback:
            let name = request.host.map(DashboardAccess.hostName(ofHostHeader:)) ?? ""
            guard DashboardAccess.isLoopback(host: name) else {
                return Self.refused(
                    status: 403, isAPI: isAPI, title: "This dashboard answers to localhost only",
                    paragraphs: [
                        "The coordinator serves its dashboard on loopback without a token, and this request named the host '\(name)'.",
                        "Open it as http://127.0.0.1:PORT/ or http://localhost:PORT/ on the coordinator's machine, or start the coordinator with --dashboard-token-file to serve it beyond loopback.",
                    ])
            }
            return nil
        case .token:
            guard let token else {
                return Self.refused(
                    status: 503, isAPI: isAPI, title: "The dashboard's token cannot be read",
                    paragraphs: [
                        "The coordinator cannot read the file given as --dashboard-token-file just now; its log says why. Try again once the file is back."
                    ])
            }
            let presented = Self.presentedTokens(request)
            if presented.contains(where: { Self.constantTimeEqual($0, token) }) { return nil }
            let why =
                presented.isEmpty
                ? "This request carried no token (or the cookie that held it has expired)."
                : "The token this request carried is wrong, or was replaced since (the coordinator reads its token file at each request)."
            let hint =
                isAPI
                ? ""
                : """
                <p>Open this address once with the token appended, e.g. <code>/?token=TOKEN</code>: a cookie then keeps \
                you signed in for 12 hours. Scripts send the header <code>Authorization: Bearer TOKEN</code>.</p>
                """
            return Self.refused(
                status: 401, isAPI: isAPI, title: "This dashboard needs a token",
                paragraphs: [
                    why,
                    "The token is the content of the file the coordinator was started with (--dashboard-token-file); ask whoever runs the coordinator for it.",
                ], hintHTML: hint, extraHeaders: [.init("WWW-Authenticate", "Bearer realm=\"shiftwork dashboard\"")])
        }
    }

    /// The tokens `request` presents: `Authorization: Bearer`, `?token=` and the cookie.
    static func presentedTokens(_ request: DashboardRequest) -> [String] {
        var tokens: [String] = []
        if let authorization = request.authorization {
            let parts = authorization.split(separator: " ", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "bearer" { tokens.append(String(parts[1])) }
        }
        if let query = request.query["token"] { tokens.append(query) }
        if let cookie = request.cookies[cookieName] { tokens.append(cookie) }
        return tokens
    }

    /// Compares without stopping at the first difference, so that the time taken does not tell how much
    /// of a guess was right.
    static func constantTimeEqual(_ left: String, _ right: String) -> Bool {
        let a = Array(left.utf8)
        let b = Array(right.utf8)
        var difference = UInt8(a.count == b.count ? 0 : 1)
        for index in 0..<max(a.count, b.count) {
            difference |= (index < a.count ? a[index] : 0) ^ (index < b.count ? b[index] : 0)
        }
        return difference == 0
    }

    /// A 404: a page (with a link home) or, under `/api/`, JSON.
    static func notFound(isAPI: Bool, what: String, paragraphs: [String] = []) -> DashboardResponse {
        if isAPI { return .jsonError(status: 404, ([what] + paragraphs).joined(separator: ": ")) }
        return .page(
            status: 404, title: "Not found", paragraphs: [what] + paragraphs,
            hintHTML: "<p><a href=\"/\">Back to the cluster</a></p>")
    }

    private static func refused(
        status: Int, isAPI: Bool, title: String, paragraphs: [String], hintHTML: String = "",
        extraHeaders: [DashboardResponse.Header] = []
    ) -> DashboardResponse {
        if isAPI {
            return .jsonError(status: status, ([title] + paragraphs).joined(separator: " "), extraHeaders: extraHeaders)
        }
        return .page(
            status: status, title: title, paragraphs: paragraphs, hintHTML: hintHTML, extraHeaders: extraHeaders)
    }

    /// `segment` percent-encoded for a path (unreserved characters kept).
    static func percentEncodedSegment(_ segment: String) -> String {
        var encoded = ""
        for byte in segment.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"):
                encoded.append(Character(Unicode.Scalar(byte)))
            default:
                encoded += "%" + String(byte, radix: 16, uppercase: true).leftPadded(to: 2)
            }
        }
        return encoded
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
