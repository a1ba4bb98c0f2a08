import Foundation
import Wire

/// Clients that (re-)attach to a batch with `FetchResults`: after the client or the coordinator
/// restarted, or from another process (`shiftwork results`). They are sent every item finished so far,
/// outputs read back from the journal's results directory, then the rest as the batch goes on.
extension Coordinator {
    /// With `attached`, the client sent a `SubmitBatch` whose idempotency key named the batch.
    func attach(_ peer: PeerIdentity, _ request: FetchResults, attached: Bool = false) {
        let (out, catchUp) = registry.attach(
            request, from: peer, coordinatorID: dispatcher.coordinatorID, attached: attached)
        send(out)
        guard let catchUp else { return }
        logger.info("client attached to a batch", metadata: ["batch": "\(request.batchID)", "client": "\(peer)"])
        apply(.uploadsAttached(batchID: request.batchID, client: peer))  // what awaits upload is asked of it
        catchingUp.runs.append(CatchUpQueue.Run(progress: catchUp))
        // Not now: the messages of this wake-up are still being handled, and their replies sent together.
        scheduleCatchingUp(after: .zero)
    }

    /// Sends each attached client the batch's finished items, one each in turn, while the socket's queue is
    /// short (at most `catchUpQueueLimit` messages); once a client has them all it joins the batch's audience,
    /// and gets `BatchFinished` if the batch is done. Comes back on a timer while the queue is long.
    func continueCatchingUp() {
        catchingUp.isScheduled = false
        guard isServing else { return }
        while !catchingUp.isEmpty, executor.queuedOutboundMessages <= Self.catchUpQueueLimit {
            var index = 0
            while index < catchingUp.runs.count {
                if sendNext(&catchingUp.runs[index]) {
                    catchingUp.runs.remove(at: index)
                } else {
                    index += 1
                }
            }
        }
        if !catchingUp.isEmpty { scheduleCatchingUp(after: .milliseconds(2)) }
    }

    /// The socket's queue a catch-up waits below.
    static let catchUpQueueLimit = 64

    private func scheduleCatchingUp(after delay: Duration) {
        guard !catchingUp.isScheduled else { return }
        catchingUp.isScheduled = true
        executor.schedule(after: delay) { [weak self] in
            self?.assumeIsolated { $0.continueCatchingUp() }
        }
    }

    /// Sends `run`'s next finished item (with the announcements of items added before it); `true` once the
    /// client has them all and has joined the batch's audience.
    private func sendNext(_ run: inout CatchUpQueue.Run) -> Bool {
        if run.pending.isEmpty {
            let (added, finished) = registry.catchUp(&run.progress)
            // Manifests added items since the client was told the batch's size.
            send(added.map { Outbound(peer: run.progress.peer, message: .itemsAdded($0)) })
            if finished.isEmpty {
                send(registry.caughtUp(run.progress))
                return true
            }
            run.pending = finished[...]
        }
        if let item = run.pending.popFirst() {
            send([Outbound(peer: run.progress.peer, message: .itemFinished(withStoredOutput(item)))])
        }
        return false
    }

    /// A finished item with its output's bytes read back from the results directory.
    private func withStoredOutput(_ item: ItemFinished) -> ItemFinished {
        // An output written to a sink has no bytes here: its location is the result.
        guard case .output(var output) = item.outcome, !output.mediaType.isEmpty, output.location.isEmpty else {
            return item
        }
        var item = item
        do {
            output.data = try journal?.storedOutput(batchID: item.batchID, itemIndex: item.itemIndex) ?? []
            item.outcome = .output(output)
        } catch {
            item.outcome = .failure(
                TaskFailure(
                    code: .internal,
                    message:
                        "the output was made but cannot be read back from the results directory: \(error.localizedDescription)"
                ))
        }
        return item
    }
}
