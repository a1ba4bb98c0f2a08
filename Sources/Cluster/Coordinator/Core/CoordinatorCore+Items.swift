import Wire

/// Results reaching an item's tasks, and items finishing: the one place an item ends.
extension CoordinatorCore {
    /// Tells the item whose task `result` answers (its `taskKey` set by the dispatcher); `peer`: the worker
    /// it came from (a retry avoids it), `workerID` names the worker when it is gone (a loss).
    mutating func deliver(
        _ result: TaskResult, from peer: PeerIdentity? = nil, workerID: String = "",
        lossReason: TaskResends.Reason? = nil
    ) {
        guard let owner = owners[result.taskKey], var item = runs[owner.batchID]?.items[owner.itemIndex],
            item.phase == .dispatched
        else { return }  // cancelled meanwhile, or waiting for a retry: stale
        let received: Result<TaskOutput, RemoteTaskError>
        switch result.outcome {
        case .output(let output): received = .success(output)
        case .failure(let failure):
            received = .failure(
                RemoteTaskError(
                    failure: failure, attempt: result.attempt, worker: peer,
                    workerID: peer.flatMap { dispatcher.workers[$0]?.workerID } ?? workerID, lossReason: lossReason))
        }
        let stageBefore = item.stage
        let step = item.received(received, wallClockMilliseconds: eventWallClock, fraction: randomFraction())
        runs[owner.batchID]?.items[owner.itemIndex] = item
        if stageBefore == 0, item.stage > 0 { releaseHost(of: owner) }  // the download ended
        switch step {
        case .send(let request):
            enqueue(request, of: item, in: owner.batchID)
        case .retry(let wait, let failed):
            journal(.attemptFailed(batchID: owner.batchID, itemIndex: UInt32(owner.itemIndex), attempt: failed))
            setTimer(after: wait, .retry(item.currentKey))
        case .finish(let outcome, let failed):
            if let failed {
                journal(.attemptFailed(batchID: owner.batchID, itemIndex: UInt32(owner.itemIndex), attempt: failed))
            }
            finishItem(owner.itemIndex, of: owner.batchID, outcome: outcome)
        }
    }

    /// Gives back the host place of an item's download, once.
    private mutating func releaseHost(of owner: TaskOwner) {
        guard let item = runs[owner.batchID]?.items[owner.itemIndex], item.holdsHost else { return }
        runs[owner.batchID]?.items[owner.itemIndex]?.holdsHost = false
        giveBackHost(of: item)
    }

    /// Ends an item with `outcome`: its tasks leave the dispatcher and the host line, its attempts go to the
    /// registry, a manifest grows the batch, the end is journaled before its clients are told, and the next
    /// item of its batch starts. An item that ended already is left alone (an end is applied once).
    mutating func finishItem(_ index: Int, of batchID: String, outcome: TaskOutcome) {
        var outcome = outcome
        if let item = runs[batchID]?.items.removeValue(forKey: index) {
            if item.holdsHost { giveBackHost(of: item) }
            if item.phase == .waitingForHost, let host = item.host, let group = runs[batchID]?.hostGroup {
                downloadTurns.leave(host, DownloadTurns.Waiter(batchID: batchID, itemIndex: index), group: group)
            }
            for (stage, task) in item.tasks.enumerated() {
                owners[task.taskKey] = nil
                // A slot kept for a dependent that never ran (its download failed, or it was cancelled).
                if stage > item.stage { send(dispatcher.release(task.taskKey)) }
            }
            registry.noteFailedAttempts(item.failedAttempts, item: index, of: batchID)
        } else if let restored = runs[batchID]?.restoredAttempts.removeValue(forKey: index) {
            registry.noteFailedAttempts(restored, item: index, of: batchID)
        }
        releaseUpload(index, of: batchID)
        guard registry.batches[batchID]?.items[index].state.isFinished == false else { return }
        var added: ItemsAdded?
        if case .output(let output) = outcome, ManifestList.isList(output) {
            // A manifest: the batch grows by the images it lists, announced before the manifest's own result.
            do throws(ManifestRefusal) {
                added = try registry.expand(item: index, of: batchID, entries: ManifestList.entries(in: output.data))
                if let added {
                    journal(.itemsAdded(added))
                    log(
                        .info, "manifest expanded",
                        ["batch": batchID, "item": "\(index)", "added": "\(added.items.count)"])
                }
                outcome = .output(TaskOutput(data: [], mediaType: ManifestList.mediaType))
            } catch {
                let source = registry.batches[batchID]?.items[index].source ?? "item \(index)"
                outcome = .failure(TaskFailure(code: .limit, message: "\(source): \(error)"))
            }
        }
        if case .failure(let failure) = outcome {
            if failure.code == .cancelled {
                log(.debug, "item cancelled", ["batch": batchID, "item": "\(index)"])
            } else {
                log(.info, "item failed", ["batch": batchID, "item": "\(index)", "error": failure.message])
            }
        }
        guard let end = registry.finish(item: index, of: batchID, outcome: outcome, added: added, now: eventInstant)
        else { return }
        // Before the client hears of it: what a client was told survives a crash of the coordinator.
        journal(.finished(end.finished))
        if let summary = end.batchFinished {
            forgetUploads(of: batchID)
            runs[batchID] = nil
            dispatcher.forgetShare(of: batchID)
            append(.released(batchID: batchID))
            log(
                .info, "batch finished",
                [
                    "batch": batchID, "succeeded": "\(summary.succeeded)",
                    "failed": "\(summary.failed)", "cancelled": "\(summary.cancelled)",
                ])
        }
        forget(end.retired)
        send(end.out)
        if end.batchFinished == nil { startItems(of: batchID) }  // its place goes to the next item
    }
}
