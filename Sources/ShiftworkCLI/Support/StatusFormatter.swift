import Cluster
import Fetching
import Foundation
import Wire

/// Formats a status reply as a table for people or JSON for scripts.
///
/// Every string in a reply came from the network (worker IDs and versions from workers, sources and
/// errors from clients and origins): the table shows them through `PrintableText.escape`, so that none
/// can write escape sequences or extra lines to the operator's terminal. JSON keeps the exact values.
enum StatusFormatter {
    static func text(_ reply: StatusReply, batchRequested: Bool) -> String {
        // Credentials in a source are masked (the coordinator masks them too; an older one did not).
        let shown = { (text: String) in PrintableText.escape(SourceRedaction.redactURLs(in: text)) }
        var lines: [String] = []
        if batchRequested, let batch = reply.batches.first {
            let key = batch.idempotencyKey.isEmpty ? "" : ", key \(shown(batch.idempotencyKey))"
            lines.append(
                "batch \(shown(batch.batchID)): \(batch.itemCount) items, \(batch.succeeded) succeeded, \(batch.failed) failed, \(batch.cancelled) cancelled, priority \(batch.priority)\(key)"
            )
            for item in batch.items {
                let error =
                    (item.error.isEmpty ? "" : "  \(shown(item.error))")
                    + item.warnings.map { "  warning: \(shown($0))" }.joined()
                let location = item.location.isEmpty ? "" : "  → \(shown(item.location))"
                let attempts = item.attempts > 1 ? "  (\(item.attempts) attempts)" : ""
                lines.append(
                    "  \(String(item.itemIndex).padding(toLength: 5, withPad: " ", startingAt: 0)) \(shown(item.state).padding(toLength: 10, withPad: " ", startingAt: 0)) \(shown(item.source))\(location)\(attempts)\(error)"
                )
                lines += item.failedAttempts.map { "        " + attemptLine($0) }
            }
            return lines.joined(separator: "\n")
        }
        lines.append(
            "workers: \(reply.workers.count)   queued tasks: \(reply.queuedTasks)   running: \(reply.runningTasks)   completed: \(reply.completedTasks)   failed: \(reply.failedTasks)   throughput: \(String(format: "%.1f", reply.tasksPerSecond)) tasks/s   dropped messages: \(reply.droppedMessages)"
        )
        if let pair = reply.pair {
            let lag =
                pair.state == .active
                ? "; backup behind by \(pair.lagRecords) records for \(String(format: "%.1f", Double(pair.lagMs) / 1000)) s, \(pair.heldMessages) acknowledgements held"
                : ""
            lines.append(
                "pair: this coordinator \(StatusJSON.name(pair.role)), \(StatusJSON.name(pair.state)); peer \(StatusJSON.name(pair.peerState)) at \(shown(pair.peer)); journal term \(pair.position?.term ?? 0), record \(pair.position?.records ?? 0)\(lag)"
            )
        }
        if !reply.workers.isEmpty {
            lines.append(
                "WORKER                                   SLOTS  RUNNING  DONE    FAILED  DROPPED  VERSION  LAST SEEN")
            for worker in reply.workers {
                lines.append(
                    "\(shown(worker.workerID).padding(toLength: 40, withPad: " ", startingAt: 0)) \(pad(worker.slots, 6)) \(pad(worker.running, 8)) \(pad(worker.completed, 7)) \(pad(worker.failed, 7)) \(pad(worker.droppedMessages, 8)) \((worker.version.isEmpty ? "-" : shown(worker.version)).padding(toLength: 8, withPad: " ", startingAt: 0)) \(worker.lastSeenMsAgo) ms ago"
                )
            }
        }
        if !reply.batches.isEmpty {
            lines.append("BATCH        ITEMS  SUCCEEDED  FAILED  CANCELLED")
            for batch in reply.batches {
                lines.append(
                    "\(shown(batch.batchID).padding(toLength: 12, withPad: " ", startingAt: 0)) \(pad(batch.itemCount, 6)) \(pad(batch.succeeded, 10)) \(pad(batch.failed, 7)) \(pad(batch.cancelled, 9))"
                )
            }
        }
        if !reply.clients.isEmpty {
            // Against the per-client limits (a limit of 0: an older coordinator that does not say).
            func of(_ limit: UInt32) -> String { limit == 0 ? "" : " of \(limit)" }
            lines.append("CLIENT                                             QUEUED ITEMS        BATCHES")
            for client in reply.clients {
                lines.append(
                    "\(shown(client.client).padding(toLength: 50, withPad: " ", startingAt: 0)) \((String(client.queuedItems) + of(reply.maxQueuedItemsPerClient)).padding(toLength: 19, withPad: " ", startingAt: 0)) \(client.batches)\(of(reply.maxBatchesPerClient))"
                )
            }
        }
        return lines.joined(separator: "\n")
    }

    /// One failed attempt under its item:
    /// `download attempt 1 on w-1 at 2026-11-23T15:20:01Z: download (transient), retried after 0.4 s: …`.
    static func attemptLine(_ attempt: AttemptStatus) -> String {
        // Credentials in a source are masked (the coordinator masks them too; an older one did not).
        let shown = { (text: String) in PrintableText.escape(SourceRedaction.redactURLs(in: text)) }
        var worker = attempt.worker.isEmpty ? "" : " on \(shown(attempt.worker))"
        if attempt.failedUnixMilliseconds > 0 {
            let time = Date(timeIntervalSince1970: Double(attempt.failedUnixMilliseconds) / 1000)
            worker += " at " + time.formatted(.iso8601)
        }
        let next =
            attempt.retried
            ? ", retried after \(String(format: "%.1f", Double(attempt.retryDelayMs) / 1000)) s"
            : ", not retried"
        return "\(shown(attempt.task)) attempt \(attempt.attempt)\(worker): \(attempt.code.name)"
            + "\(attempt.isTransient ? " (transient)" : "")\(next): \(shown(attempt.error))"
    }

    private static func pad(_ value: some BinaryInteger, _ width: Int) -> String {
        String(value).padding(toLength: width, withPad: " ", startingAt: 0)
    }

    /// The reply as JSON (`StatusJSON`, which the dashboard serves too): pretty-printed, or one line per
    /// reply when `compact` (for `--watch`).
    static func json(_ reply: StatusReply, compact: Bool = false) -> String {
        StatusJSON.text(StatusJSON.object(reply), compact: compact)
    }
}
