import Foundation
import ShiftworkTestSupport
import XCTest

/// Credentials inside source URLs stay out of every place that shows a source: the coordinator's and the
/// worker's log lines (debug included), `submit`'s lines and `--json` summary, `status BATCH` as a table and
/// as JSON, the dashboard's API. Only the request itself carries them (the origin receives them).
final class SourceRedactionProcessTests: ClusterTestCase {
    private let secrets = ["hunter2", "SIGNATURE-SECRET", "CREDENTIAL-SECRET", "TOKEN-SECRET"]

    private func assertNoSecret(_ text: String, _ place: String, file: StaticString = #filePath, line: UInt = #line) {
        for secret in secrets {
            XCTAssertFalse(text.contains(secret), "\(place) shows \(secret):\n\(text)", file: file, line: line)
        }
    }

    func testCredentialsInSourcesAreMaskedInLogsStatusTheDashboardAndTheClientsOutput() async throws {
        let coordinator = try harness.launch(
            "coordinator",
            [
                "coordinator", "--listen", "tcp://127.0.0.1:*", "--insecure",
                "--http-listen", "127.0.0.1:0", "--log-level", "debug",
            ])
        let listening = await coordinator.waitForLine { $0.contains("coordinator listening on ") }
        let endpoint = try XCTUnwrap(listening?.components(separatedBy: "listening on ").last, coordinator.outputText)
            .trimmingCharacters(in: .whitespaces)
        let dashboardLine = await coordinator.waitForLine { $0.hasPrefix("dashboard on ") }
        let dashboard = try XCTUnwrap(
            dashboardLine?.components(separatedBy: "dashboard on ").last?.components(separatedBy: " ").first,
            coordinator.outputText)
        let worker = try harness.launch(
            "worker",
            [
                "worker", "--slots", "2", "--worker-id", "masked", "--log-level", "debug",
                "--coordinator", endpoint,
            ])
        _ = try serveImage("photo.png")
        let query = "?X-Amz-Credential=CREDENTIAL-SECRET&X-Amz-Signature=SIGNATURE-SECRET&sig=TOKEN-SECRET&w=1"
        let good = "http://alice:hunter2@127.0.0.1:\(server.port)/photo.png\(query)"
        let missing = "http://alice:hunter2@127.0.0.1:\(server.port)/missing.png\(query)"
        let out = harness.scratch.appendingPathComponent("out")
        let (status, output) = try await harness.run([
            "submit", good, missing, "--out", out.path, "--coordinator", endpoint,
        ])
        XCTAssertEqual(status, 1, output)
        XCTAssertEqual(server.requestCount(path: "/photo.png"), 1, "the request itself used the URL")
        let masked =
            "http://alice:***@127.0.0.1:\(server.port)/photo.png?X-Amz-Credential=***&X-Amz-Signature=***&sig=***&w=1"
        XCTAssertTrue(output.contains(masked), "submit shows the masked source:\n\(output)")
        XCTAssertTrue(output.contains("missing.png?X-Amz-Credential=***") && output.contains("404"), output)
        assertNoSecret(output, "submit")
        let batchID = try XCTUnwrap(
            output.split(separator: "\n").first { $0.hasPrefix("batch b-") }?.split(separator: " ")[1].dropLast())

        let (jsonStatus, json) = try await harness.run([
            "submit", good, "--json", "--out", out.path, "--coordinator", endpoint,
        ])
        XCTAssertEqual(jsonStatus, 0, json)
        XCTAssertTrue(json.contains("alice:***@"), json)
        assertNoSecret(json, "submit --json")

        let (tableStatus, table) = try await harness.run(["status", String(batchID), "--coordinator", endpoint])
        XCTAssertEqual(tableStatus, 0, table)
        XCTAssertTrue(table.contains(masked), table)
        assertNoSecret(table, "status BATCH")
        let (statusJSONStatus, statusJSON) = try await harness.run([
            "status", String(batchID), "--json", "--coordinator", endpoint,
        ])
        XCTAssertEqual(statusJSONStatus, 0, statusJSON)
        XCTAssertTrue(statusJSON.contains("alice:***@"), statusJSON)
        assertNoSecret(statusJSON, "status BATCH --json")

        let api = try await TestHTTPClient.get(
            dashboard.hasSuffix("/") ? dashboard + "api/batches/\(batchID)" : dashboard + "/api/batches/\(batchID)")
        XCTAssertEqual(api.status, 200, api.text)
        XCTAssertTrue(api.text.contains("alice:***@"), api.text)
        assertNoSecret(api.text, "the dashboard's API")

        // The worker logs a download's source at debug, and its failure at info.
        let failed = await worker.waitForLine(timeout: .seconds(10)) {
            $0.contains("missing.png") && $0.contains("result sent")
        }
        XCTAssertNotNil(failed, worker.outputText)
        XCTAssertTrue(worker.outputText.contains("alice:***@"), worker.outputText)
        assertNoSecret(worker.outputText, "the worker's log")
        assertNoSecret(coordinator.outputText, "the coordinator's log")
    }
}
