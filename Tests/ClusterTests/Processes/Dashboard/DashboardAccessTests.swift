import Foundation
import ShiftworkTestSupport
import XCTest

/// The dashboard's refusals over real HTTP from a real coordinator: 401 pages that say how to get a
/// token, 404 pages for unknown batches (never an error trace), `/metrics` open as before.
final class DashboardAccessTests: XCTestCase {
    /// Starts a coordinator serving HTTP on a free loopback port; returns the base URL of its dashboard.
    private func startCoordinator(_ harness: ClusterHarness, _ extra: [String]) async throws -> String {
        let coordinator = try harness.launch(
            "coordinator",
            [
                "coordinator", "--listen", "tcp://127.0.0.1:*", "--insecure",
                "--http-listen", "127.0.0.1:0",
            ] + extra)
        let line = await coordinator.waitForLine { $0.hasPrefix("dashboard on ") }
        let url = try XCTUnwrap(
            line?.components(separatedBy: "dashboard on ").last?.components(separatedBy: " ").first,
            coordinator.outputText)
        return String(url.dropLast())  // the trailing slash
    }

    /// Runs `body` with a harness whose processes are stopped afterwards, whether `body` throws or not.
    private func withHarness(_ body: (ClusterHarness) async throws -> Void) async throws {
        let harness = try ClusterHarness()
        do {
            try await body(harness)
        } catch {
            await harness.stopAll()
            throw error
        }
        await harness.stopAll()
    }

    func testATokenIsNeededAndAWrongOrReplacedOneGetsA401ThatSaysHowToGetOne() async throws {
        try await withHarness { harness in
            let tokenFile = harness.scratch.appendingPathComponent("dashboard.token")
            let token = "5f1d0c9e8b7a65432100fedcba987654"
            try "\(token)\n".write(to: tokenFile, atomically: true, encoding: .utf8)
            let base = try await startCoordinator(harness, ["--dashboard-token-file", tokenFile.path])

            let missing = try await TestHTTPClient.get(base + "/")
            XCTAssertEqual(missing.status, 401)
            XCTAssertEqual(missing.header("Content-Type"), "text/html; charset=utf-8")
            XCTAssertTrue(
                missing.text.contains("needs a token") && missing.text.contains("--dashboard-token-file")
                    && missing.text.contains("?token=TOKEN"), missing.text)
            let wrong = try await TestHTTPClient.get(
                base + "/api/status", headers: [("Authorization", "Bearer not-\(token)")])
            XCTAssertEqual(wrong.status, 401)
            XCTAssertTrue(wrong.text.contains("wrong"), wrong.text)

            let bearer = try await TestHTTPClient.get(
                base + "/api/status", headers: [("Authorization", "Bearer \(token)")])
            XCTAssertEqual(bearer.status, 200, bearer.text)
            XCTAssertNotNil(try JSONSerialization.jsonObject(with: Data(bearer.body)) as? [String: Any])
            let signIn = try await TestHTTPClient.get(base + "/?token=\(token)")
            XCTAssertEqual(signIn.status, 303)
            XCTAssertEqual(signIn.header("Location"), "/")
            let cookie = try XCTUnwrap(signIn.header("Set-Cookie")?.components(separatedBy: ";").first)
            let page = try await TestHTTPClient.get(base + "/", headers: [("Cookie", cookie)])
            XCTAssertEqual(page.status, 200)
            XCTAssertTrue(page.text.contains("<script src=\"/dashboard.js\""), page.text)
            XCTAssertNotNil(page.header("Content-Security-Policy"))
            let metrics = try await TestHTTPClient.get(base + "/metrics")
            XCTAssertEqual(metrics.status, 200, "metrics stay open, as before the dashboard")

            // An unknown batch is a 404 page (HTML, the ID as text) or JSON, not an error trace.
            let unknown = try await TestHTTPClient.get(base + "/batches/b-%3Cnope%3E", headers: [("Cookie", cookie)])
            XCTAssertEqual(unknown.status, 404)
            XCTAssertTrue(unknown.text.contains("Unknown batch b-&lt;nope&gt;"), unknown.text)
            XCTAssertFalse(unknown.text.contains("<nope>"), unknown.text)
            let unknownJSON = try await TestHTTPClient.get(base + "/api/batches/b-nope", headers: [("Cookie", cookie)])
            XCTAssertEqual(unknownJSON.status, 404)
            let error = try JSONSerialization.jsonObject(with: Data(unknownJSON.body)) as? [String: String]
            XCTAssertTrue(error?["error"]?.contains("Unknown batch b-nope") == true, unknownJSON.text)
            let preview = try await TestHTTPClient.get(
                base + "/api/batches/b-nope/items/0/preview", headers: [("Cookie", cookie)])
            XCTAssertEqual(preview.status, 404)

            // Replacing the token file signs everyone out: the cookie's token is now a wrong one.
            try "\(String(token.reversed()))\n".write(to: tokenFile, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes(
                [.modificationDate: Date().addingTimeInterval(5)], ofItemAtPath: tokenFile.path)
            let replaced = try await TestHTTPClient.get(base + "/", headers: [("Cookie", cookie)])
            XCTAssertEqual(replaced.status, 401)
            XCTAssertTrue(replaced.text.contains("replaced"), replaced.text)
        }
    }

    func testOnLoopbackWithoutATokenUnknownBatchesAre404AndOtherHostNamesAreRefused() async throws {
        try await withHarness { harness in
            let base = try await startCoordinator(harness, [])
            let page = try await TestHTTPClient.get(base + "/")
            XCTAssertEqual(page.status, 200)
            let unknown = try await TestHTTPClient.get(base + "/batches/b-0000")
            XCTAssertEqual(unknown.status, 404)
            XCTAssertTrue(unknown.text.contains("Unknown batch b-0000"), unknown.text)
            let rebound = try await TestHTTPClient.get(base + "/api/status", headers: [("Host", "attacker.example:80")])
            XCTAssertEqual(rebound.status, 403)
            let nothing = try await TestHTTPClient.get(base + "/nothing-here")
            XCTAssertEqual(nothing.status, 404)
        }
    }

    func testAMalformedTokenFileStopsTheCoordinatorWithAMessageThatSaysWhatToDo() async throws {
        let harness = try ClusterHarness()
        let tokenFile = harness.scratch.appendingPathComponent("short.token")
        try "abc".write(to: tokenFile, atomically: true, encoding: .utf8)
        let (status, output) = try await harness.run([
            "coordinator", "--listen", "tcp://127.0.0.1:*", "--insecure",
            "--http-listen", "127.0.0.1:0", "--dashboard-token-file", tokenFile.path,
        ])
        await harness.stopAll()
        XCTAssertNotEqual(status, 0, output)
        XCTAssertTrue(output.contains("16 or more") && output.contains("openssl rand -hex 32"), output)
    }
}
