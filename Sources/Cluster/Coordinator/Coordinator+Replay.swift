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
        background.append(Task { await self.catchUp(catchUp) })
    }

    /// Sends a client the batch's finished items, a few at a time so that the socket's queue stays short,
    /// until it has them all; then it joins the batch's audience, and gets `BatchFinished` if the batch is done.
    private func catchUp(_ start: BatchRegistry.CatchUp) async {
        var progress = start
        while true {
            let (added, finished) = registry.catchUp(&progress)
            // Manifests added items since the client was told the batch's size.
            send(added.map { Outbound(peer: progress.peer, message: .itemsAdded($0)) })
            if finished.isEmpty { break }
            for item in finished {
                send([Outbound(peer: progress.peer, message: .itemFinished(withStoredOutput(item)))])
                while executor.queuedOutboundMessages > 64, !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(2))
                }
                if Task.isCancelled { return }
            }
        }
        send(registry.caughtUp(progress))
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
