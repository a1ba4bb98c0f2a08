/// What one client holds on the coordinator (`BatchRegistry.clientUsage`), against its own limits
/// (`--max-queued-items-per-client`, `--max-batches-per-client`): a client is its CurveZMQ key (every
/// process with that key together), or its connection without CurveZMQ (`ClientIdentity`).
struct ClientUsage: Equatable, Sendable {
    /// Items of its batches that have not finished: queued or running.
    var queuedItems = 0
    /// Its batches the coordinator keeps: running, and finished ones kept for status and results
    /// (`BatchRetention`) until they are retired.
    var batches = 0

    var isEmpty: Bool { queuedItems <= 0 && batches <= 0 }
}

extension ClientUsage {
    /// Why a client with `usage` may not add `items` unfinished items (and, `addingBatch`, one batch), or
    /// `nil` when it may: the reason names the limit, its option and what the client has in use.
    static func refusal(of items: Int, addingBatch: Bool, usage: ClientUsage, limits: BatchRegistry.Limits) -> String? {
        if addingBatch, usage.batches >= limits.maxBatchesPerClient {
            return
                "this client already has \(usage.batches) batches on this coordinator (running, or finished and kept "
                + "for status), the most it keeps for one client (\(limits.maxBatchesPerClient), its --max-batches-per-client): "
                + "wait for them to finish and be retired, or submit fewer, larger batches"
        }
        if usage.queuedItems + items > limits.maxQueuedItemsPerClient {
            return
                "this client already has \(usage.queuedItems) unfinished items and this would add \(items), more than "
                + "this coordinator queues for one client (\(limits.maxQueuedItemsPerClient), its "
                + "--max-queued-items-per-client): wait for earlier batches to finish, or submit fewer items"
        }
        return nil
    }
}
