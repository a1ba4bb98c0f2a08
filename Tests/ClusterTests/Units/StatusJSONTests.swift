import Foundation
import Wire
import XCTest

@testable import Cluster

/// `status --json`, the dashboard's `/api/status` and its events are written by `StatusJSON` (`JSONValue`)
/// instead of `JSONSerialization`: the bytes must be the ones `JSONSerialization` writes for the same values,
/// pretty-printed and compact, whatever the values hold.
final class StatusJSONTests: XCTestCase {
    /// The dictionary `StatusJSON` gave `JSONSerialization` before (the reference).
    private func reference(_ reply: StatusReply, compact: Bool) throws -> String {
        func item(_ item: ItemStatus) -> [String: Any] {
            [
                "index": item.itemIndex, "source": item.source, "state": item.state, "error": item.error,
                "warnings": item.warnings, "location": item.location, "attempts": item.attempts,
                "failed_attempts": item.failedAttempts.map { attempt -> [String: Any] in
                    [
                        "task": attempt.task, "attempt": attempt.attempt, "code": attempt.code.name,
                        "error": attempt.error,
                        "transient": attempt.isTransient, "retried": attempt.retried,
                        "retry_delay_ms": attempt.retryDelayMs, "worker": attempt.worker,
                        "failed_at_unix_ms": attempt.failedUnixMilliseconds,
                    ]
                },
            ]
        }
        let object: [String: Any] = [
            "queued_tasks": reply.queuedTasks, "running_tasks": reply.runningTasks,
            "completed_tasks": reply.completedTasks, "failed_tasks": reply.failedTasks,
            "dropped_messages": reply.droppedMessages, "tasks_per_second": reply.tasksPerSecond,
            "workers": reply.workers.map { worker -> [String: Any] in
                [
                    "id": worker.workerID, "hostname": worker.hostname, "slots": worker.slots,
                    "running": worker.running,
                    "completed": worker.completed, "failed": worker.failed, "last_seen_ms_ago": worker.lastSeenMsAgo,
                    "dropped_messages": worker.droppedMessages, "version": worker.version,
                ]
            },
            "batches": reply.batches.map { batch -> [String: Any] in
                [
                    "id": batch.batchID, "items": batch.itemCount, "succeeded": batch.succeeded, "failed": batch.failed,
                    "cancelled": batch.cancelled, "priority": batch.priority, "idempotency_key": batch.idempotencyKey,
                    "item_states": batch.items.map(item),
                ]
            },
            "clients": reply.clients.map { client -> [String: Any] in
                ["client": client.client, "queued_items": client.queuedItems, "batches": client.batches]
            },
            "max_queued_items_per_client": reply.maxQueuedItemsPerClient,
            "max_batches_per_client": reply.maxBatchesPerClient,
        ]
        let data = try JSONSerialization.data(
            withJSONObject: object, options: compact ? [.sortedKeys] : [.prettyPrinted, .sortedKeys])
        return String(decoding: data, as: UTF8.self)
    }

    private func reply(text: String, rate: Double) -> StatusReply {
        var batch = BatchStatus(
            batchID: "b-\(text)", itemCount: 3, succeeded: 1, failed: 1, cancelled: 1,
            items: [
                ItemStatus(
                    itemIndex: 0, source: "https://example.com/\(text).jpg", state: "succeeded",
                    location: "/out/\(text)",
                    attempts: 1),
                ItemStatus(
                    itemIndex: 1, source: text, state: "failed", error: "gone: \(text)\nnext line",
                    warnings: [text, "ICC"],
                    attempts: 2,
                    failedAttempts: [
                        AttemptStatus(
                            task: "b/1/download", attempt: 1, code: .download, error: text, isTransient: true,
                            retried: true, retryDelayMs: 250, worker: "w-\(text)",
                            failedUnixMilliseconds: 1_795_490_971_944)
                    ]),
                ItemStatus(itemIndex: 2, source: "", state: "cancelled"),
            ])
        batch.priority = -3
        batch.idempotencyKey = text
        var reply = StatusReply(
            requestID: "r",
            workers: [
                WorkerStatus(
                    workerID: "w-\(text)", hostname: text, slots: 4, running: 2, completed: UInt64.max, failed: 7,
                    lastSeenMsAgo: 1_234, droppedMessages: 3, version: "1.0")
            ], queuedTasks: 12, runningTasks: 2, completedTasks: 1_000_000, failedTasks: 3,
            batches: [batch, BatchStatus(batchID: "empty", itemCount: 0)], droppedMessages: 9, tasksPerSecond: rate,
            coordinatorID: "c")
        reply.clients = [
            ClientStatus(client: "peer \(text)", queuedItems: 7, batches: 2),
            ClientStatus(client: "key x", queuedItems: 0, batches: 1),
        ]
        reply.maxQueuedItemsPerClient = 250_000
        reply.maxBatchesPerClient = 1_000
        return reply
    }

    func testAReplyMatchesJSONSerializationPrettyAndCompact() throws {
        let tricky = "ctl\u{0}\u{1}\u{8}\u{c}\r\u{1f}\u{7f}\u{2028} \"q\" \\ / ünïcødé 📷"
        for rate in [0, 0.5, 1, 61_234.75, 1e-7, 123_456_789.125] {
            let reply = reply(text: tricky, rate: rate)
            XCTAssertEqual(
                StatusJSON.text(StatusJSON.object(reply)), try reference(reply, compact: false), "rate \(rate)")
            XCTAssertEqual(
                StatusJSON.text(StatusJSON.object(reply), compact: true), try reference(reply, compact: true),
                "rate \(rate)")
        }
    }

    func testAnEmptyReplyMatchesJSONSerialization() throws {
        let reply = StatusReply(requestID: "")
        XCTAssertEqual(StatusJSON.text(StatusJSON.object(reply)), try reference(reply, compact: false))
        XCTAssertEqual(StatusJSON.text(StatusJSON.object(reply), compact: true), try reference(reply, compact: true))
    }

    func testSettingAMemberReplacesItAndKeepsTheKeysSorted() {
        let object = JSONValue.object([("b", .integer(1)), ("a", .bool(false))]).setting("a", .bool(true)).setting(
            "c", .string("/"))
        XCTAssertEqual(object.compactText, #"{"a":true,"b":1,"c":"\/"}"#)
    }
}
