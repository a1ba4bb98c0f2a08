import Messaging
import Wire

/// Batches accepted, restored from the journal, and retired; their items started in turn.
extension CoordinatorCore {
    /// A client's submission: refused with why, or planned, journaled, answered, and its first items started.
    mutating func accept(_ submit: SubmitBatch, from sender: MessageSender, batchID: String) {
        let client = sender.identity
        if let refusal = registry.refusal(of: submit, from: client, owner: sender.client) {
            send([Outbound(peer: client, message: .refusal(refusal))])
            return
        }
        let planned = registry.plan(
            batchID: batchID, client: client, submit: submit,
            idempotencyScope: sender.client.idempotencyScope, owner: sender.client)
        // Before the client hears of it: an accepted batch survives a crash of the coordinator. The batch
        // waits for the journal's answer (`admit`, or `refuseUnrecorded`).
        pendingAcceptances[batchID] = PendingAcceptance(planned: planned, submit: submit, sender: sender)
        append(
            .recordDurably(
                .accepted(batchID: batchID, client: client.bytes, submit: submit, ownerKey: sender.key?.z85 ?? ""),
                awaiting: .acceptance(batchID: batchID)))
    }

    /// The journal holds the acceptance: the batch is registered, its client told, its first items started.
    mutating func admit(_ batchID: String) {
        guard let pending = pendingAcceptances.removeValue(forKey: batchID) else { return }
        let (planned, submit, client) = (pending.planned, pending.submit, pending.sender.identity)
        var (out, _) = registry.register(
            planned, answering: submit.requestID, coordinatorID: dispatcher.coordinatorID,
            now: eventInstant)
        log(.info, "batch accepted", ["batch": batchID, "client": "\(client)", "items": "\(planned.items.count)"])
        if uploads.spools { out = out.map(Self.sayingUploadsAreSpooled) }
        send(out)
        deadlines.set(batchID, seconds: submit.deadlineSeconds, from: eventInstant)
        rerunPlans[batchID] = RerunPlan(submit)  // kept while the batch is: a retry plans its items the same way
        adopt(planned, submit: submit, client: pending.sender.client, uploadClient: client)
    }

    /// The journal could not take the acceptance: nothing of the batch was registered or sent, so it is
    /// dropped, and the client is refused with why (it may submit again, with the same idempotency key).
    mutating func refuseUnrecorded(_ batchID: String, reason: String) {
        guard let pending = pendingAcceptances.removeValue(forKey: batchID) else { return }
        log(
            .error, "batch refused: the journal could not record it",
            ["client": "\(pending.sender.identity)", "error": reason])
        send([
            Outbound(
                peer: pending.sender.identity,
                message: .refusal(
                    Refusal(
                        requestID: pending.submit.requestID, code: .unavailable,
                        reason: "the batch could not be accepted: \(reason)")))
        ])
    }

    /// Carries on with the batches a previous run of the coordinator accepted and did not finish: the same
    /// registry state as before the restart (finished items keep their outcome, cancellations apply again),
    /// and the unfinished items run again, their journaled failed attempts counting against their retries.
    mutating func restore(_ recovered: RecoveredState, wallClockMilliseconds: UInt64) {
        if recovered.discardedBytes > 0 || recovered.skippedRecords > 0 {
            log(
                .warning, "the journal had damaged records (a crash while writing?); they were skipped",
                ["bytes cut": "\(recovered.discardedBytes)", "records skipped": "\(recovered.skippedRecords)"])
        }
        for saved in recovered.batches {
            let owner = MessageSender(
                identity: PeerIdentity(saved.client), key: try? CurvePublicKey(z85: saved.ownerKey)
            ).client
            let planned = registry.plan(
                batchID: saved.batchID, client: PeerIdentity(saved.client), submit: saved.submit,
                recovered: saved, idempotencyScope: owner.idempotencyScope, owner: owner)
            rerunPlans[saved.batchID] = RerunPlan(saved.submit)
            let (_, retired) = registry.register(
                planned, answering: nil, coordinatorID: dispatcher.coordinatorID, now: eventInstant)
            forget(retired)
            log(
                .info, "batch restored from the journal",
                ["batch": saved.batchID, "items": "\(planned.items.count)", "finished": "\(saved.finished.count)"])
            if saved.isComplete { continue }
            // From the original submit (or the last retry), not from this restart.
            deadlines.set(
                saved.batchID, seconds: saved.submit.deadlineSeconds,
                acceptedUnixMilliseconds: max(saved.acceptedUnixMilliseconds, saved.retriedUnixMilliseconds ?? 0),
                nowUnixMilliseconds: wallClockMilliseconds, now: eventInstant)
            // Cancellations apply before anything starts: a cancelled item does not run again.
            for request in saved.cancellations {
                let cancellation = registry.cancel(request, from: nil, now: eventInstant)
                for index in cancellation.items {
                    finishItem(
                        index, of: request.batchID,
                        outcome: .failure(ItemRun.cancelled(by: BatchCancelledError(batchID: request.batchID))))
                }
            }
            guard registry.batches[saved.batchID]?.isComplete == false else { continue }
            adopt(
                planned, submit: saved.submit, client: owner, restoredAttempts: saved.failedAttempts,
                restoredUploads: true)
        }
    }

    /// Gives a registered batch its running part, tells the dispatcher whose it is, and starts its first items.
    mutating func adopt(
        _ planned: RegisteredBatch, submit: SubmitBatch, client: ClientIdentity,
        restoredAttempts: [Int: [AttemptStatus]] = [:], uploadClient: PeerIdentity? = nil,
        restoredUploads: Bool = false,
        uploads: [Int: UploadMetadata]? = nil
    ) {
        dispatcher.share(batch: planned.batchID, as: ShareClass(client: client, priority: planned.priority))
        runs[planned.batchID] = BatchRun(
            batchID: planned.batchID, submit: submit, firstAttempt: (settings.incarnation - 1) * 1_000 + 1,
            sharesHosts: settings.scheduling == .fairShare, capsHosts: settings.maxDownloadsPerHost > 0,
            uploads: uploads)
        runs[planned.batchID]?.restoredAttempts = restoredAttempts
        registerUploads(of: planned.batchID, client: uploadClient, restored: restoredUploads)
        startItems(of: planned.batchID)
    }

    /// Starts the items of a batch whose turn has come (as earlier ones finish, up to `BatchRun.maxStartedItems`).
    mutating func startItems(of batchID: String) {
        guard registry.batches[batchID] != nil, var run = runs.removeValue(forKey: batchID) else { return }
        // Taken out while it changes: a copy left in `runs` would make it copy its items.
        let started = registry.batches[batchID].map { run.startNext(in: $0) } ?? []
        runs[batchID] = consume run  // moved, not copied: a copy left here would make each start copy the items
        for index in started { startItem(index, of: batchID) }
    }

    /// An item's first task: a download takes a place at its origin host first (or waits for its turn).
    private mutating func startItem(_ index: Int, of batchID: String) {
        guard var item = runs[batchID]?.items[index], let group = runs[batchID]?.hostGroup else { return }
        for task in item.tasks { owners[task.taskKey] = TaskOwner(batchID: batchID, itemIndex: index) }
        if item.phase == .awaitingUpload {
            runs[batchID]?.items[index] = item
            return wantUpload(index, of: batchID)  // queued once its bytes are in
        }
        if let host = item.host {
            guard downloadTurns.take(host, for: DownloadTurns.Waiter(batchID: batchID, itemIndex: index), group: group)
            else {
                runs[batchID]?.items[index] = item  // waits for a place (`giveBackHost`)
                return
            }
            item.holdsHost = true
            item.phase = .dispatched
        }
        runs[batchID]?.items[index] = item
        enqueue(item.firstRequest, of: item, in: batchID)
    }

    /// Queues a request of an item's current task in the dispatcher.
    mutating func enqueue(_ request: RemoteRun.Request, of item: ItemRun, in batchID: String) {
        if let reason = request.resend { dispatcher.resends.record(reason) }
        send(
            dispatcher.enqueue(
                request.assignment, priority: item.priority,
                dependentKey: request.keepsSlotForDependent ? item.dependentKey : request.dependentKey,
                avoiding: request.avoiding, followOn: request.followOn?.value))
    }

    /// Gives back the place an item's download held at its host; the next waiter's download starts.
    mutating func giveBackHost(of item: ItemRun) {
        guard item.holdsHost, let host = item.host else { return }
        guard let next = downloadTurns.giveBack(host), var waiting = runs[next.batchID]?.items[next.itemIndex] else {
            return
        }
        waiting.holdsHost = true
        waiting.phase = .dispatched
        runs[next.batchID]?.items[next.itemIndex] = waiting
        enqueue(waiting.firstRequest, of: waiting, in: next.batchID)
    }

    /// Forgets the batches the registry retired, in the journal too.
    mutating func forget(_ retired: [String]) {
        for batchID in retired {
            forgetUploads(of: batchID)
            runs[batchID] = nil
            rerunPlans[batchID] = nil
            journal(.retired(batchID: batchID))
            append(.released(batchID: batchID))
        }
    }

    /// A `BatchAccepted` that tells the client its uploads are spooled (it may leave once they are in).
    private static func sayingUploadsAreSpooled(_ outbound: Outbound) -> Outbound {
        guard case .batchAccepted(var accepted) = outbound.message else { return outbound }
        accepted.uploadSpool = true
        return Outbound(peer: outbound.peer, message: .batchAccepted(accepted))
    }
}
