import Foundation
import XCTest

@testable import Cluster

/// The dashboard's routing and access, decided without a socket (`DashboardRouter`, `DashboardAccess`,
/// `DashboardRequest`), and the pieces it renders with.
final class DashboardRouterTests: XCTestCase {
    private let token = "0123456789abcdef0123"

    private func request(
        _ uri: String, method: String = "GET", host: String = "127.0.0.1:9464", authorization: String? = nil,
        cookie: String? = nil
    ) -> DashboardRequest {
        DashboardRequest(
            method: method, uri: uri, host: host, authorization: authorization, cookieHeaders: cookie.map { [$0] } ?? []
        )
    }

    private func response(
        _ route: DashboardRoute, file: StaticString = #filePath, line: UInt = #line
    ) -> DashboardResponse? {
        guard case .respond(let response) = route else {
            XCTFail("expected a response, got \(route)", file: file, line: line)
            return nil
        }
        return response
    }

    func testRoutesOnLoopback() {
        let router = DashboardRouter(access: .loopback)
        XCTAssertEqual(router.route(request("/"), token: nil), .page(batchID: nil))
        XCTAssertEqual(router.route(request("/batches/b-1a2b"), token: nil), .page(batchID: "b-1a2b"))
        XCTAssertEqual(router.route(request("/batches/a%20b%3Cc"), token: nil), .page(batchID: "a b<c"))
        XCTAssertEqual(router.route(request("/api/status"), token: nil), .statusJSON)
        XCTAssertEqual(router.route(request("/api/batches/b-1"), token: nil), .batchJSON(batchID: "b-1"))
        XCTAssertEqual(router.route(request("/api/events"), token: nil), .events(batchID: nil))
        XCTAssertEqual(router.route(request("/api/events?batch=b%2D1"), token: nil), .events(batchID: "b-1"))
        XCTAssertEqual(
            router.route(request("/api/batches/b-1/items/7/preview"), token: nil),
            .preview(batchID: "b-1", itemIndex: 7))
        XCTAssertEqual(router.route(request("/metrics"), token: nil), .metrics)
        XCTAssertEqual(
            response(router.route(request("/dashboard.js"), token: nil))?.header("Content-Type"),
            "text/javascript; charset=utf-8")
        XCTAssertEqual(response(router.route(request("/dashboard.css"), token: nil))?.status, 200)
    }

    func testUnknownPathsAre404PagesOrJSONAndOtherMethods405() throws {
        let router = DashboardRouter(access: .loopback)
        let page = try XCTUnwrap(response(router.route(request("/nope/<b>"), token: nil)))
        XCTAssertEqual(page.status, 404)
        XCTAssertEqual(page.header("Content-Type"), "text/html; charset=utf-8")
        let api = try XCTUnwrap(response(router.route(request("/api/batches/b/items/-1/preview"), token: nil)))
        XCTAssertEqual(api.status, 404)
        XCTAssertEqual(api.header("Content-Type"), "application/json")
        let post = try XCTUnwrap(response(router.route(request("/api/status", method: "POST"), token: nil)))
        XCTAssertEqual(post.status, 405)
        XCTAssertEqual(post.header("Allow"), "GET, HEAD")
        XCTAssertEqual(router.route(request("/", method: "HEAD"), token: nil), .page(batchID: nil))
    }

    func testLoopbackAnswersOnlyToLoopbackHostNames() throws {
        let router = DashboardRouter(access: .loopback)
        for host in ["127.0.0.1:9464", "localhost:1", "LOCALHOST", "[::1]:9464", "127.9.8.7:80"] {
            XCTAssertEqual(router.route(request("/", host: host), token: nil), .page(batchID: nil), host)
        }
        for host in ["evil.example:9464", "127.0.0.1.evil.example", "10.0.0.1:9464", "", "[fe80::1]:9464"] {
            let refusal = try XCTUnwrap(response(router.route(request("/api/status", host: host), token: nil)), host)
            XCTAssertEqual(refusal.status, 403, host)
        }
        // The refusal page shows the host it was asked for as text.
        let page = try XCTUnwrap(response(router.route(request("/", host: "<script>x</script>"), token: nil)))
        XCTAssertFalse(page.text.contains("<script>x"), page.text)
        XCTAssertTrue(page.text.contains("&lt;script&gt;x"), page.text)
    }

    func testBeyondLoopbackWithoutATokenOnlyMetricsAreServed() throws {
        XCTAssertEqual(DashboardAccess(boundHost: "0.0.0.0", hasToken: false), .off)
        XCTAssertEqual(DashboardAccess(boundHost: "127.0.0.1", hasToken: false), .loopback)
        XCTAssertEqual(DashboardAccess(boundHost: "::1", hasToken: false), .loopback)
        XCTAssertEqual(DashboardAccess(boundHost: "0.0.0.0", hasToken: true), .token)
        XCTAssertEqual(DashboardAccess(boundHost: "127.0.0.1", hasToken: true), .token)
        let router = DashboardRouter(access: .off)
        XCTAssertEqual(router.route(request("/metrics", host: "example.org"), token: nil), .metrics)
        let page = try XCTUnwrap(response(router.route(request("/", host: "example.org"), token: nil)))
        XCTAssertEqual(page.status, 403)
        XCTAssertTrue(page.text.contains("--dashboard-token-file"), page.text)
    }

    func testATokenIsNeededAndTheRefusalSaysHowToGetOne() throws {
        let router = DashboardRouter(access: .token)
        let missing = try XCTUnwrap(response(router.route(request("/", host: "example.org"), token: token)))
        XCTAssertEqual(missing.status, 401)
        XCTAssertEqual(missing.header("WWW-Authenticate"), "Bearer realm=\"shiftwork dashboard\"")
        XCTAssertTrue(missing.text.contains("--dashboard-token-file"), missing.text)
        XCTAssertTrue(missing.text.contains("?token=TOKEN"), missing.text)
        XCTAssertTrue(missing.text.contains("no token"), missing.text)
        let wrong = try XCTUnwrap(response(router.route(request("/", authorization: "Bearer \(token)x"), token: token)))
        XCTAssertEqual(wrong.status, 401)
        XCTAssertTrue(wrong.text.contains("wrong"), wrong.text)
        let wrongAPI = try XCTUnwrap(
            response(router.route(request("/api/status", cookie: "shiftwork_dashboard_token=nope"), token: token)))
        XCTAssertEqual(wrongAPI.status, 401)
        XCTAssertEqual(wrongAPI.header("Content-Type"), "application/json")
        // Any of the three ways in.
        XCTAssertEqual(
            router.route(request("/api/status", authorization: "Bearer \(token)"), token: token), .statusJSON)
        XCTAssertEqual(
            router.route(request("/api/status", cookie: "a=b; shiftwork_dashboard_token=\(token)"), token: token),
            .statusJSON)
        XCTAssertEqual(router.route(request("/api/status?token=\(token)"), token: token), .statusJSON)
        // Metrics stay open, as before the dashboard.
        XCTAssertEqual(router.route(request("/metrics"), token: token), .metrics)
        // Without a readable token file: 503, never open.
        XCTAssertEqual(response(router.route(request("/", authorization: "Bearer \(token)"), token: nil))?.status, 503)
    }

    func testATokenInTheAddressBecomesACookieAndLeavesTheAddress() throws {
        let router = DashboardRouter(access: .token)
        let redirect = try XCTUnwrap(response(router.route(request("/batches/b%201?token=\(token)"), token: token)))
        XCTAssertEqual(redirect.status, 303)
        XCTAssertEqual(redirect.header("Location"), "/batches/b%201")
        let cookie = try XCTUnwrap(redirect.header("Set-Cookie"))
        XCTAssertTrue(cookie.hasPrefix("shiftwork_dashboard_token=\(token);"), cookie)
        XCTAssertTrue(
            cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Max-Age=43200"),
            cookie)
        XCTAssertEqual(response(router.route(request("/?token=wrong"), token: token))?.status, 401)
    }

    func testTokensAreComparedWhole() {
        XCTAssertTrue(DashboardRouter.constantTimeEqual("abc", "abc"))
        XCTAssertFalse(DashboardRouter.constantTimeEqual("abc", "abd"))
        XCTAssertFalse(DashboardRouter.constantTimeEqual("abc", "abcd"))
        XCTAssertFalse(DashboardRouter.constantTimeEqual("", "a"))
    }

    func testRequestsAreDecoded() {
        let parsed = DashboardRequest(
            method: "GET", uri: "/a%2Fb/c+d?x=1+2&y=%3C&z", cookieHeaders: ["k=v; m = n", "o=p"])
        XCTAssertEqual(parsed.pathSegments, ["a/b", "c+d"])
        XCTAssertEqual(parsed.query, ["x": "1 2", "y": "<", "z": ""])
        XCTAssertEqual(parsed.cookies, ["k": "v", "m": "n", "o": "p"])
        XCTAssertEqual(DashboardRequest.percentDecoded("%zz%4"), "%zz%4")
    }

    func testPagesOfTheServerEscapeWhatTheyShow() {
        XCTAssertEqual(
            HTMLText.escape("<a href=\"x\">'&'</a>"), "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;")
        let page = DashboardRouter.notFound(isAPI: false, what: "Unknown batch <img src=x onerror=alert(1)>")
        XCTAssertEqual(page.status, 404)
        XCTAssertFalse(page.text.contains("<img"), page.text)
        XCTAssertTrue(page.text.contains("Unknown batch &lt;img src=x onerror=alert(1)&gt;"), page.text)
        // The first event, embedded in the page, cannot close its script element.
        let embedded = DashboardPage.embeddable(#"{"source":"</script><script>alert(1)</script>&"}"#)
        XCTAssertFalse(embedded.contains("<") || embedded.contains(">") || embedded.contains("&"), embedded)
        let json = try? JSONSerialization.jsonObject(with: Data(embedded.utf8)) as? [String: String]
        XCTAssertEqual(json?["source"], "</script><script>alert(1)</script>&")
    }

    func testThroughputHistoryKeepsTheLatestSamplesInOrder() {
        var history = ThroughputHistory(capacity: 3)
        for index in 1...5 {
            history.record(
                .init(
                    unixMilliseconds: Int64(index), tasksPerSecond: Double(index), queuedTasks: 0, runningTasks: 0,
                    workers: 1))
        }
        XCTAssertEqual(history.samples.map(\.unixMilliseconds), [3, 4, 5])
        let samples =
            try? JSONSerialization.jsonObject(with: Data(history.jsonObject.compactText.utf8)) as? [[String: Any]]
        XCTAssertEqual(samples?.count, 3)
        XCTAssertEqual(samples?.map { $0["t"] as? Int }, [3, 4, 5])
    }

    func testTheTokenFileIsCheckedAndReadAgainWhenItChanges() throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("dashboard-token-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        try "short\n".write(to: file, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try DashboardTokenFile(path: file.path)) { error in
            XCTAssertTrue("\(error)".contains("16 or more"), "\(error)")
        }
        try "has spaces in it, sixteen+\n".write(to: file, atomically: true, encoding: .utf8)
        XCTAssertThrowsError(try DashboardTokenFile(path: file.path))
        XCTAssertThrowsError(try DashboardTokenFile(path: file.path + "-missing")) { error in
            XCTAssertTrue("\(error)".contains("openssl rand -hex 32"), "\(error)")
        }
        try "\(token)\n".write(to: file, atomically: true, encoding: .utf8)
        let tokenFile = try DashboardTokenFile(path: file.path)
        XCTAssertEqual(tokenFile.current(), token)
        let replaced = String(token.reversed())
        try replaced.write(to: file, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(5)], ofItemAtPath: file.path)
        XCTAssertEqual(tokenFile.current(), replaced)
        try FileManager.default.removeItem(at: file)
        XCTAssertNil(tokenFile.current())
    }
}
