import Foundation
import Imaging
import ShiftworkTestSupport
import XCTest

/// Retries, task timeouts and batch deadlines over real processes: a coordinator, workers and the
/// `shiftwork` CLI, images from a real HTTP origin on 127.0.0.1 that fails as told. Attempt counts and
/// their order are checked, never durations.
final class RetryProcessTests: ClusterTestCase {
    private func image(_ seed: UInt64) throws -> [UInt8] {
        try SyntheticImages.make(width: 96, height: 64, format: .jpeg, seed: seed)
    }

    /// A coordinator (with `arguments`) and `workers` workers of one slot each, all registered.
    private func cluster(_ arguments: [String] = [], workers: Int = 2) async throws -> String {
        let endpoint = try await harness.startCoordinator(arguments)
        for index in 1...workers { try harness.startWorker("w-\(index)", endpoint: endpoint, slots: 1) }
        let status = try await harness.waitForStatus(endpoint) { $0.objects("workers").count == workers }
        XCTAssertEqual(status.objects("workers").count, workers, harness.allOutput)
        return endpoint
    }

    /// Runs `submit` to completion; returns its exit status, its output and the batch's items in status --json.
    private func submit(
        _ urls: [String], _ endpoint: String, _ extra: [String] = []
    )
        async throws -> (status: Int32?, output: String, items: [[String: Any]])
    {
        let out = harness.scratch.appendingPathComponent("out-\(UUID().uuidString)")
        let (status, output) = try await harness.run(
            ["submit"] + urls + ["--out", out.path, "--coordinator", endpoint] + extra, timeout: .seconds(120))
        let batchID = try XCTUnwrap(
            output.split(separator: "\n").first { $0.hasPrefix("batch b-") }?
                .split(separator: " ")[1].dropLast(), "no batch line:\n\(harness.allOutput)")
        let batch = try await harness.status(endpoint, batch: String(batchID))
        return (status, output, batch.objects("batches").first?.objects("item_states") ?? [])
    }

    func testAnOriginThatFailsTwiceWithA503SucceedsOnTheThirdAttemptOnAnotherWorkerEachTime() async throws {
        server.serveAfterFailures(path: "/flaky.jpg", failures: 2, body: try image(1), contentType: "image/jpeg")
        let endpoint = try await cluster()
        let (status, output, items) = try await submit([server.url("/flaky.jpg")], endpoint)
        XCTAssertEqual(status, 0, output)
        XCTAssertEqual(items.first?["state"] as? String, "succeeded", "\(items)")
        XCTAssertEqual(items.first?.int("attempts"), 3, "\(items)")
        let failed = items.first?.objects("failed_attempts") ?? []
        XCTAssertEqual(failed.map { $0["task"] as? String }, ["download", "download"])
        XCTAssertEqual(failed.map { $0.int("attempt") }, [1, 2])
        XCTAssertEqual(failed.map { $0["code"] as? String }, ["download", "download"])
        XCTAssertEqual(failed.map { $0["transient"] as? Bool }, [true, true])
        XCTAssertEqual(failed.map { $0["retried"] as? Bool }, [true, true])
        XCTAssertTrue((failed.first?["error"] as? String ?? "").contains("503"), "\(failed)")
        XCTAssertNotEqual(
            failed[0]["worker"] as? String, failed[1]["worker"] as? String,
            "a retry goes to the other worker, which has a free slot")
        XCTAssertEqual(
            server.requestCount(path: "/flaky.jpg"), 3, "one request per attempt: the workers do not retry on their own"
        )

        let table = try await harness.run([
            "status", output.split(separator: " ")[1].dropLast().description, "--coordinator", endpoint,
        ])
        XCTAssertTrue(table.output.contains("(3 attempts)"), table.output)
        XCTAssertTrue(table.output.contains("download attempt 1 on w-"), table.output)
    }

    func testA404FailsAfterOneAttempt() async throws {
        server.serve(path: "/gone.jpg", body: Array("no\n".utf8), contentType: "text/plain", status: .notFound)
        let endpoint = try await cluster()
        let (status, output, items) = try await submit([server.url("/gone.jpg")], endpoint, ["--retries", "3"])
        XCTAssertEqual(status, 1, output)
        XCTAssertEqual(items.first?["state"] as? String, "failed", "\(items)")
        XCTAssertEqual(items.first?.int("attempts"), 1)
        let failed = items.first?.objects("failed_attempts") ?? []
        XCTAssertEqual(failed.count, 1, "\(failed)")
        XCTAssertEqual(failed.first?["transient"] as? Bool, false)
        XCTAssertEqual(failed.first?["retried"] as? Bool, false)
        XCTAssertEqual(server.requestCount(path: "/gone.jpg"), 1)
    }

    func testRetryAfterIsHonouredAndOneInThePastAsksForNoWait() async throws {
        let ok = TestHTTPServer.Response.content(status: .ok, contentType: "image/jpeg", body: try image(2))
        func busy(_ retryAfter: String) -> TestHTTPServer.Response {
            .answer(
                status: .serviceUnavailable, headers: [("Retry-After", retryAfter), ("Content-Type", "text/plain")],
                body: Array("busy\n".utf8))
        }
        server.serve(path: "/later.jpg", response: .sequence([busy("2")], then: ok))
        server.serve(path: "/past.jpg", response: .sequence([busy("Wed, 21 Oct 2015 07:28:00 GMT")], then: ok))
        let endpoint = try await cluster()
        let (status, output, items) = try await submit([server.url("/later.jpg"), server.url("/past.jpg")], endpoint)
        XCTAssertEqual(status, 0, output)
        XCTAssertEqual(items.map { $0["state"] as? String }, ["succeeded", "succeeded"])
        XCTAssertEqual(items.map { $0.int("attempts") }, [2, 2])
        let later = items[0].objects("failed_attempts").first
        XCTAssertEqual(later?.int("retry_delay_ms"), 2_000, "the server's 2 s, longer than the backoff, is waited")
        let past = items[1].objects("failed_attempts").first
        XCTAssertLessThanOrEqual(
            past?.int("retry_delay_ms") ?? .max, 500, "a date in the past leaves the backoff alone")
    }

    func testATaskThatRunsPastTheTimeoutIsCancelledOnItsWorkerAndRetried() async throws {
        let ok = TestHTTPServer.Response.content(status: .ok, contentType: "image/jpeg", body: try image(3))
        server.serve(path: "/slow-once.jpg", response: .sequence([.stall], then: ok))
        server.serve(path: "/always-slow.jpg", response: .stall)
        let endpoint = try await cluster(["--task-timeout", "2"])
        let (status, output, items) = try await submit([server.url("/slow-once.jpg")], endpoint, ["--retries", "1"])
        XCTAssertEqual(status, 0, output)
        XCTAssertEqual(items.first?["state"] as? String, "succeeded", "\(items)")
        XCTAssertEqual(items.first?.int("attempts"), 2)
        let timedOut = items.first?.objects("failed_attempts").first
        XCTAssertEqual(timedOut?["code"] as? String, "timed-out")
        XCTAssertTrue(
            (timedOut?["error"] as? String ?? "").contains("timed out after 2 s"), "\(String(describing: timedOut))")

        let (failedStatus, failedOutput, failedItems) = try await submit(
            [server.url("/always-slow.jpg")], endpoint, ["--retries", "0"])
        XCTAssertEqual(failedStatus, 1, failedOutput)
        XCTAssertEqual(failedItems.first?["state"] as? String, "failed")
        XCTAssertTrue((failedItems.first?["error"] as? String ?? "").contains("timed out after 2 s"), "\(failedItems)")
        XCTAssertTrue(failedOutput.contains("timed out after 2 s"), failedOutput)
        // Every timed-out attempt was cancelled on its worker and confirmed: no slot is left taken.
        let cluster = try await harness.waitForStatus(endpoint) { $0.int("running_tasks") == 0 }
        XCTAssertEqual(cluster.int("running_tasks"), 0, harness.allOutput)
    }

    func testADeadlineCancelsTheUnfinishedItemsAndKeepsTheFinishedOnes() async throws {
        server.serve(path: "/quick.jpg", body: try image(4), contentType: "image/jpeg")
        server.serve(path: "/never-1.jpg", response: .stall)
        server.serve(path: "/never-2.jpg", response: .stall)
        // A slot per item: which download starts first is not fixed, and the quick one must not wait behind
        // the stalled ones.
        let endpoint = try await cluster(workers: 3)
        let urls = [server.url("/quick.jpg"), server.url("/never-1.jpg"), server.url("/never-2.jpg")]
        // 6 s: the quick item (a small image, downloaded and filtered) must finish well before it, even on a
        // loaded machine; the stalled ones never do.
        let (status, output, items) = try await submit(urls, endpoint, ["--deadline", "6"])
        XCTAssertEqual(status, 1, output)
        XCTAssertEqual(
            items.map { $0["state"] as? String }, ["succeeded", "cancelled", "cancelled"],
            "\(items)\n\(harness.allOutput)")
        for item in items.dropFirst() {
            XCTAssertTrue((item["error"] as? String ?? "").contains("deadline of 6 s passed"), "\(item)")
        }
        let cluster = try await harness.waitForStatus(endpoint) { $0.int("running_tasks") == 0 }
        XCTAssertEqual(
            cluster.int("running_tasks"), 0, "the cancelled downloads freed their slots:\n\(harness.allOutput)")
    }

    func testRetriesOutsideTheRangeAreRefusedByTheClient() async throws {
        let (status, output) = try await harness.run(
            ["submit", "http://127.0.0.1:9/x.jpg", "--retries=-1", "--coordinator", "tcp://127.0.0.1:9"])
        XCTAssertNotEqual(status, 0)
        XCTAssertTrue(output.contains("--retries (or SHIFTWORK_RETRIES) must be between 0 and 10 (got -1)"), output)
    }
}
