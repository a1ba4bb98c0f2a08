import Wire

/// A status reply as JSON: what `shiftwork status --json` prints and what the dashboard's `/api/status`
/// and `/api/batches/ID` serve, from one function so that they agree (written by ``JSONValue``, the same
/// bytes `JSONSerialization` wrote).
///
/// Strings keep their exact values (they came from the network: readers escape them where they show
/// them, as the dashboard's page does by setting text, never markup).
package enum StatusJSON {
    /// The reply as a JSON object.
    package static func object(_ reply: StatusReply) -> JSONValue {
        .object(
            [
                ("queued_tasks", .unsigned(UInt64(reply.queuedTasks))),
                ("running_tasks", .unsigned(UInt64(reply.runningTasks))),
                ("completed_tasks", .unsigned(reply.completedTasks)), ("failed_tasks", .unsigned(reply.failedTasks)),
                ("dropped_messages", .unsigned(reply.droppedMessages)),
                ("tasks_per_second", .number(reply.tasksPerSecond)),
                (
                    "workers",
                    .array(
                        reply.workers.map { worker in
                            .object([
                                ("id", .string(worker.workerID)), ("hostname", .string(worker.hostname)),
                                ("slots", .unsigned(UInt64(worker.slots))),
                                ("running", .unsigned(UInt64(worker.running))),
                                ("completed", .unsigned(worker.completed)), ("failed", .unsigned(worker.failed)),
                                ("last_seen_ms_ago", .unsigned(worker.lastSeenMsAgo)),
                                ("dropped_messages", .unsigned(worker.droppedMessages)),
                                ("version", .string(worker.version)),
                            ])
                        })
                ),
                ("batches", .array(reply.batches.map { object($0) })),
                (
                    "clients",
                    .array(
                        reply.clients.map { client in
                            .object([
                                ("client", .string(client.client)),
                                ("queued_items", .unsigned(UInt64(client.queuedItems))),
                                ("batches", .unsigned(UInt64(client.batches))),
                            ])
                        })
                ),
                ("max_queued_items_per_client", .unsigned(UInt64(reply.maxQueuedItemsPerClient))),
                ("max_batches_per_client", .unsigned(UInt64(reply.maxBatchesPerClient))),
            ] + (reply.pair.map { [("pair", object($0))] } ?? []))
    }

    /// A coordinator of a pair: its role and state, its peer's, and the backup's lag.
    package static func object(_ pair: WirePairStatus) -> JSONValue {
        .object([
            ("role", .string(name(pair.role))), ("state", .string(name(pair.state))),
            ("peer_state", .string(name(pair.peerState))), ("peer", .string(pair.peer)),
            ("history", .string(pair.history)),
            ("term", .unsigned(pair.position?.term ?? 0)), ("records", .unsigned(pair.position?.records ?? 0)),
            ("lag_records", .unsigned(pair.lagRecords)), ("lag_ms", .unsigned(pair.lagMs)),
            ("held_messages", .unsigned(UInt64(pair.heldMessages))),
        ])
    }

    /// A pair role as status shows it.
    package static func name(_ role: WirePairRole) -> String {
        switch role {
        case .primary: "primary"
        case .backup: "backup"
        case .unspecified: "unknown"
        }
    }

    /// A pair state as status shows it.
    package static func name(_ state: WirePairState) -> String {
        switch state {
        case .startingPrimary: "starting-primary"
        case .startingBackup: "starting-backup"
        case .active: "active"
        case .passive: "passive"
        case .unspecified: "unknown"
        }
    }

    /// One batch as a JSON object, its items (`item_states`) included when the reply carried them, or
    /// `items` instead when given (the dashboard's event streams send only the items that changed).
    package static func object(_ batch: BatchStatus, items: [ItemStatus]? = nil) -> JSONValue {
        .object([
            ("id", .string(batch.batchID)), ("items", .unsigned(UInt64(batch.itemCount))),
            ("succeeded", .unsigned(UInt64(batch.succeeded))), ("failed", .unsigned(UInt64(batch.failed))),
            ("cancelled", .unsigned(UInt64(batch.cancelled))), ("priority", .integer(Int(batch.priority))),
            ("idempotency_key", .string(batch.idempotencyKey)),
            ("item_states", .array((items ?? batch.items).map(object))),
        ])
    }

    /// One item of a batch as a JSON object.
    package static func object(_ item: ItemStatus) -> JSONValue {
        .object([
            ("index", .unsigned(UInt64(item.itemIndex))), ("source", .string(item.source)),
            ("state", .string(item.state)),
            ("error", .string(item.error)), ("warnings", .array(item.warnings.map(JSONValue.string))),
            ("location", .string(item.location)), ("attempts", .unsigned(UInt64(item.attempts))),
            (
                "failed_attempts",
                .array(
                    item.failedAttempts.map { attempt in
                        .object([
                            ("task", .string(attempt.task)), ("attempt", .unsigned(UInt64(attempt.attempt))),
                            ("code", .string(attempt.code.name)), ("error", .string(attempt.error)),
                            ("transient", .bool(attempt.isTransient)), ("retried", .bool(attempt.retried)),
                            ("retry_delay_ms", .unsigned(UInt64(attempt.retryDelayMs))),
                            ("worker", .string(attempt.worker)),
                            ("failed_at_unix_ms", .unsigned(attempt.failedUnixMilliseconds)),
                        ])
                    })
            ),
        ])
    }

    /// `object` as text: pretty-printed, or on one line when `compact`; keys sorted.
    package static func text(_ object: JSONValue, compact: Bool = false) -> String {
        compact ? object.compactText : object.text
    }
}
