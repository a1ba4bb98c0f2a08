import Foundation
import Wire

/// A status reply as JSON: what `shiftwork status --json` prints and what the dashboard's `/api/status`
/// and `/api/batches/ID` serve, from one function so that they agree.
///
/// Strings keep their exact values (they came from the network: readers escape them where they show
/// them, as the dashboard's page does by setting text, never markup).
public enum StatusJSON {
    /// The reply as a JSON object (`JSONSerialization` values).
    public static func object(_ reply: StatusReply) -> [String: Any] {
        [
            "queued_tasks": reply.queuedTasks, "running_tasks": reply.runningTasks,
            "completed_tasks": reply.completedTasks, "failed_tasks": reply.failedTasks,
            "dropped_messages": reply.droppedMessages, "tasks_per_second": reply.tasksPerSecond,
            "workers": reply.workers.map { worker -> [String: Any] in
                ["id": worker.workerID, "hostname": worker.hostname, "slots": worker.slots, "running": worker.running,
                 "completed": worker.completed, "failed": worker.failed, "last_seen_ms_ago": worker.lastSeenMsAgo,
                 "dropped_messages": worker.droppedMessages, "version": worker.version]
            },
            "batches": reply.batches.map { object($0) },
        ]
    }

    /// One batch as a JSON object, its items (`item_states`) included when the reply carried them, or
    /// `items` instead when given (the dashboard's event streams send only the items that changed).
    public static func object(_ batch: BatchStatus, items: [ItemStatus]? = nil) -> [String: Any] {
        ["id": batch.batchID, "items": batch.itemCount, "succeeded": batch.succeeded, "failed": batch.failed,
         "cancelled": batch.cancelled, "priority": batch.priority, "idempotency_key": batch.idempotencyKey,
         "item_states": (items ?? batch.items).map(object)]
    }

    /// One item of a batch as a JSON object.
    public static func object(_ item: ItemStatus) -> [String: Any] {
        ["index": item.itemIndex, "source": item.source, "state": item.state, "error": item.error,
         "warnings": item.warnings, "location": item.location, "attempts": item.attempts,
         "failed_attempts": item.failedAttempts.map { attempt -> [String: Any] in
             ["task": attempt.task, "attempt": attempt.attempt, "code": attempt.code.name, "error": attempt.error,
              "transient": attempt.isTransient, "retried": attempt.retried,
              "retry_delay_ms": attempt.retryDelayMs, "worker": attempt.worker,
              "failed_at_unix_ms": attempt.failedUnixMilliseconds]
         }]
    }

    /// `object` as text: pretty-printed, or on one line when `compact`; keys sorted.
    public static func text(_ object: [String: Any], compact: Bool = false) -> String {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: compact ? [.sortedKeys] : [.prettyPrinted, .sortedKeys]) else {
            return "{}"
        }
        return String(decoding: data, as: UTF8.self)
    }
}
