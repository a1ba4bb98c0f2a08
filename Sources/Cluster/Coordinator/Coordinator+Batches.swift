import Foundation
import Messaging
import Wire

/// A batch's life on the coordinator: accepted (or restored from the journal), its operations run, its
/// items finish and are told to its clients, a manifest makes it grow, a client cancels it. The
/// `BatchRegistry` decides; this carries its decisions out on the operations, the journal and the dispatcher.
extension Coordinator {
    // MARK: Accepting

    func accept(_ submit: SubmitBatch, from sender: MessageSender) {
        let (client, owner) = (sender.identity, sender.key)
        if attachByIdempotencyKey(submit, from: sender) { return }
        if let refusal = registry.refusal(of: submit, from: client, owner: sender.client) {
            send([Outbound(peer: client, message: .refusal(refusal))])
            return
        }
        let batchID = "b-" + UUID().uuidString.lowercased().prefix(8)
        let planned = registry.plan(batchID: batchID, client: client, submit: submit,
                                    idempotencyScope: sender.client.idempotencyScope, owner: sender.client)
        do {
            try journal?.recordAccepted(batchID: batchID, client: client.bytes, submit: submit, ownerKey: owner?.z85 ?? "")
        } catch {
            logger.error("batch refused", metadata: ["client": "\(client)", "error": "\(error)"])
            send([Outbound(peer: client, message: .refusal(Refusal(
                requestID: submit.requestID, code: .unavailable, reason: "the batch could not be accepted: \(error)")))])
            return
        }
        let batch = makeOperations(for: planned, submit: submit)
        access.recordOwner(owner, of: batchID)
        let (out, _) = registry.register(planned, answering: submit.requestID, coordinatorID: dispatcher.coordinatorID)
        logger.info("batch accepted", metadata: ["batch": "\(batchID)", "client": "\(client)", "items": "\(planned.items.count)"])
        send(out)
        batchDeadlines.set(batchID, seconds: submit.deadlineSeconds, from: .now)
        share(planned, of: sender.client)
        adopt(batch)
        start(batch)
    }

    /// The operations of a planned batch (its items get theirs in turn, see `planItems`).
    private func makeOperations(for planned: RegisteredBatch, submit: SubmitBatch) -> BatchOperation {
        // Kept while the batch is: a retry plans its items again the same way.
        rerunPlans[planned.batchID] = RerunPlan(submit)
        return BatchOperation(planned, planner: makePlanner(batchID: planned.batchID, submit: submit), itemEnded: itemEnded)
    }

    /// What a batch calls when a planned item's last operation finished (on that thread): the item is
    /// gathered, then finished in groups by `finishItems()`: one task per burst, not per item (an immediate
    /// task, as `request(_:)`'s: its hop onto the actor is taken on the posting thread).
    nonisolated var itemEnded: @Sendable (Int, BatchOperation) -> Void {
        let inbox = finishedItemInbox
        return { index, batch in inbox.post((.planned(index: index), batch)) { Task.immediate { await self.finishItems() } } }
    }

    /// How the items of batch `batchID`, submitted as `submit`, become remote operations.
    func makePlanner(batchID: String, submit: SubmitBatch) -> ItemPlanner {
        var planner = ItemPlanner(
            batchID: batchID,
            parameters: submit.parameters ?? WireTiltShiftParameters(
                focusPosition: 0.5, sharpBand: 0, transition: 0.25, blurRadius: 10),
            kind: submit.kind, maxDownloadsPerHost: configuration.maxDownloadsPerHost,
            firstAttempt: (incarnation - 1) * 1_000 + 1, runner: CoordinatorTaskRunner(coordinator: self),
            retrySchedule: TaskRetrySchedule(submit))
        planner.sink = submit.sink
        planner.s3Endpoint = submit.s3Endpoint
        planner.sharesHosts = configuration.scheduling == .fairShare
        return planner
    }

    /// Keeps a registered batch's operations, counts its unfinished items' tasks as waiting to start, and
    /// plans the first of them.
    func adopt(_ batch: BatchOperation) {
        operations[batch.batchID] = batch
        if let registered = registry.batches[batch.batchID] {
            waitingTasks += registered.items.lazy.filter { $0.state == .unfinished && $0.firstTaskKey != 0 }.count
                * batch.tasksPerItem
        }
        planItems(of: batch)
    }

    /// Plans the items of `batch` whose turn has come (as earlier ones finish, up to
    /// `BatchOperation.plannedItemWindow` at once, in steps of `planningStep`) and follows them; an item
    /// whose operations the engine refused finishes with why.
    func planItems(of batch: BatchOperation) {
        guard batch.hasRoomForItems, let registered = registry.batches[batch.batchID] else { return }
        let refused = batch.planNext(in: registered).refused
        for item in refused { finishedItemInbox.post((.withoutOperations(item), batch)) { Task { self.finishItems() } } }
    }

    /// Starts a batch's operations.
    func start(_ batch: BatchOperation) {
        do {
            try engine.addOperation(batch)
        } catch {
            batch.cancel(error: error)
        }
    }

    /// Carries on with the batches a previous run of this coordinator had accepted and not finished.
    func restore(_ recovered: RecoveredState) {
        if recovered.discardedBytes > 0 || recovered.skippedRecords > 0 {
            logger.warning("the journal had damaged records (a crash while writing?); they were skipped", metadata: [
                "bytes cut": "\(recovered.discardedBytes)", "records skipped": "\(recovered.skippedRecords)",
            ])
        }
        for saved in recovered.batches {
            let client = MessageSender(identity: PeerIdentity(saved.client), key: try? CurvePublicKey(z85: saved.ownerKey)).client
            let planned = registry.plan(batchID: saved.batchID, client: PeerIdentity(saved.client), submit: saved.submit,
                                        recovered: saved, idempotencyScope: client.idempotencyScope, owner: client)
            let batch = makeOperations(for: planned, submit: saved.submit)
            access.recordOwner(try? CurvePublicKey(z85: saved.ownerKey), of: saved.batchID)
            let (_, retired) = registry.register(planned, answering: nil, coordinatorID: dispatcher.coordinatorID)
            forget(retired)
            logger.info("batch restored from the journal", metadata: [
                "batch": "\(saved.batchID)", "items": "\(planned.items.count)", "finished": "\(saved.finished.count)",
            ])
            if saved.isComplete { continue }
            // From the original submit (or the last retry), not from this restart.
            batchDeadlines.set(saved.batchID, seconds: saved.submit.deadlineSeconds,
                               acceptedUnixMilliseconds: max(saved.acceptedUnixMilliseconds, saved.retriedUnixMilliseconds ?? 0),
                               nowUnixMilliseconds: Journal.nowMilliseconds(), now: .now)
            share(planned, of: client)
            // The attempts of unfinished items before the restart count against their retries.
            batch.restore(failedAttempts: saved.failedAttempts)
            adopt(batch)
            for request in saved.cancellations { carryOut(registry.cancel(request, from: nil), of: request.batchID) }
            start(batch)
        }
    }

    // MARK: Finishing items

    /// Finishes the items gathered in `finishedItemInbox`, their messages sent together. Returns whether
    /// there were any.
    @discardableResult
    func finishItems() -> Bool {
        let finished = finishedItemInbox.drain()
        guard !finished.isEmpty else { return false }
        sendingTogether {
            for (ended, batch) in finished {
                switch ended {
                case .planned(let index):
                    // Its operations leave the batch here (once: a second event would find none).
                    if let item = batch.release(index) { finish(item, of: batch, released: true) }
                case .withoutOperations(let item):
                    finish(item, of: batch)
                }
            }
        }
        finishedItemInbox.recycle(finished)
        return true
    }

    /// Streams one finished item to its clients; after the last item, the batch summary. `released`: the
    /// batch has let go of the item's operations already (`BatchOperation.release`).
    private func finish(_ item: BatchOperation.Item, of batch: BatchOperation, released: Bool = false) {
        let attempts = item.tasks.isEmpty ? batch.failedAttempts(ofItem: item.index) : item.tasks.flatMap(\.failedAttempts)
        if !released { batch.release(item.index) }  // its place goes to the next item (planned at the end)
        guard registry.batches[batch.batchID]?.items[item.index].state.isFinished == false else { return }
        var outcome = BatchOperation.outcome(of: item)
        registry.noteFailedAttempts(attempts, item: item.index, of: batch.batchID)
        // An item that ends without operations (cancelled before its turn): its tasks never waited in the dispatcher.
        if item.tasks.isEmpty { waitingTasks -= batch.tasksPerItem }
        for task in item.tasks {
            task.releasePayloads()
            if task.claimStart() {
                // It never ran (cancelled, or its download failed): nothing waits for it, nor for a slot kept for it.
                waitingTasks -= 1
                send(dispatcher.release(task.template.taskKey))
            }
        }
        var added: ItemsAdded?
        if case .output(let output) = outcome, ManifestList.isList(output) {
            // A manifest: the batch grows by the images it lists, announced before the manifest's own result.
            do {
                added = try expand(item, of: batch, listing: ManifestList.entries(in: output.data))
                outcome = .output(TaskOutput(data: [], mediaType: ManifestList.mediaType))
            } catch {
                let source = registry.batches[batch.batchID]?.items[item.index].source ?? "item \(item.index)"
                outcome = .failure(TaskFailure(code: .limit, message: "\(source): \(error)"))
            }
        }
        if case .failure(let failure) = outcome {
            // A cancelled item is counted in its batch's summary line; failures are logged, a few per window
            // (a batch whose origin is down fails every item at once).
            if failure.code == .cancelled {
                logger.debug("item cancelled", metadata: ["batch": "\(batch.batchID)", "item": "\(item.index)"])
            } else if logThrottle.admit("item failed", now: .now) {
                logger.info("item failed", metadata: ["batch": "\(batch.batchID)", "item": "\(item.index)", "error": "\(failure.message)"])
            }
        }
        guard let end = registry.finish(item: item.index, of: batch.batchID, outcome: outcome, added: added) else { return }
        do {
            // Before the client hears of it: what a client was told survives a crash of the coordinator.
            try journal?.recordFinished(end.finished)
        } catch {
            logger.error("could not record a finished item in the journal; it would run again after a restart",
                         metadata: ["batch": "\(batch.batchID)", "item": "\(item.index)", "error": "\(error)"])
        }
        if let summary = end.batchFinished {
            batch.close()
            operations[batch.batchID] = nil
            dispatcher.forgetShare(of: batch.batchID)
            AllocatorTrim.request()  // its operations are let go as its group ends
            logger.info("batch finished", metadata: [
                "batch": "\(batch.batchID)", "succeeded": "\(summary.succeeded)", "failed": "\(summary.failed)",
                "cancelled": "\(summary.cancelled)",
            ])
        }
        forget(end.retired)
        send(end.out)
        if end.batchFinished == nil { planItems(of: batch) }  // its place goes to the next item
    }

    /// Adds the images a manifest item lists to its batch, and records that in the journal.
    ///
    /// - Throws: `ManifestRefusal` when the manifest is nested too deep or would make the batch larger
    ///   than `maxBatchItems`; an engine error if the batch can no longer grow.
    private func expand(_ item: BatchOperation.Item, of batch: BatchOperation, listing entries: [String]) throws -> ItemsAdded {
        let added = try registry.expand(item: item.index, of: batch.batchID, entries: entries)
        do {
            try journal?.recordItemsAdded(added)
        } catch {
            registry.retract(added)
            throw error
        }
        // Planned in turn, after the items before them (`planItems`).
        waitingTasks += added.items.count * batch.tasksPerItem
        logger.info("manifest expanded", metadata: [
            "batch": "\(batch.batchID)", "item": "\(item.index)", "added": "\(entries.count)",
        ])
        return added
    }

    /// Retires the finished batches kept longer than the retention allows (`--keep-finished-for`), and
    /// gives the memory of the batches let go back to the system (`AllocatorTrim`); the coordinator's
    /// timer calls it.
    func releaseFinishedBatches(now: ContinuousClock.Instant) {
        forget(registry.retireExpired(now: now))
        AllocatorTrim.trimIfRequested(idle: registry.runningBatchCount == 0, now: now)
    }

    /// Forgets batches the registry retired, in the journal too.
    func forget(_ retired: [String]) {
        if !retired.isEmpty { AllocatorTrim.request() }
        for batchID in retired {
            operations[batchID] = nil
            rerunPlans[batchID] = nil
            access.forget(batchID)
            do {
                try journal?.recordRetired(batchID: batchID)
            } catch {
                logger.error("could not record a retired batch in the journal", metadata: ["batch": "\(batchID)", "error": "\(error)"])
            }
        }
    }

    // MARK: Cancelling

    /// A client cancels a batch or some of its items: the registry decides which items and answers; their
    /// operations are cancelled and their tasks withdrawn from the dispatcher, here and now.
    func cancel(_ request: CancelBatch, from peer: PeerIdentity) {
        finishItems()  // items that ended already are not counted as cancelled
        let cancellation = registry.cancel(request, from: peer)
        if cancellation.isAccepted {
            logger.info("cancelling", metadata: [
                "batch": "\(request.batchID)", "items": "\(request.itemIndexes.isEmpty ? "all" : "\(request.itemIndexes)")",
                "cancelled": "\(cancellation.items.count)",
            ])
            do {
                try journal?.recordCancelled(request)
            } catch {
                logger.error("could not record a cancellation in the journal", metadata: ["batch": "\(request.batchID)", "error": "\(error)"])
            }
        }
        carryOut(cancellation, of: request.batchID)
        send(cancellation.out)
    }

    /// Cancels the operations of the items a cancel names (first, so that a request they post later is
    /// answered at once), then withdraws their tasks from the dispatcher. `reason` is the cause the items
    /// finish with (by default: cancelled by request).
    func carryOut(_ cancellation: BatchRegistry.Cancellation, of batchID: String, reason: (any Error)? = nil) {
        guard let batch = operations[batchID] else { return }
        let reason = reason ?? BatchCancelledError(batchID: batchID)
        if cancellation.isWholeBatch {
            batch.cancel(error: reason)
        } else {
            for index in cancellation.items {
                for task in batch.item(index)?.tasks ?? [] { task.cancel(error: reason) }
            }
        }
        // Items not planned yet have no operations to cancel: they finish as cancelled, like the others, in
        // the next `finishItems` (after the answer to the cancel).
        let failure = BatchOperation.failure(cancelledBy: reason)
        for index in cancellation.items where batch.isWaitingForTurn(index) {
            finishedItemInbox.post((.withoutOperations(BatchOperation.Item(index: index, tasks: [], failure: failure)), batch)) {
                Task { self.finishItems() }
            }
        }
        withdraw(cancellation.taskKeys)
    }
}
