/// Every message of the Shiftwork wire protocol: one case per body of the proto's `Envelope`.
///
/// Encode and decode with ``WireCodec``; the envelope's version numbers are handled there.
public enum Message: Sendable, Equatable {
    /// Worker → coordinator, on connecting.
    case workerHello(WorkerHello)
    /// Worker → coordinator, periodically.
    case heartbeat(Heartbeat)
    /// Worker → coordinator, when a task finishes.
    case taskResult(TaskResult)
    /// Worker → coordinator, several results at once (minor 1; only to a coordinator whose
    /// ``Welcome/acceptsBatches`` is set). Each means what it means alone, in order.
    case taskResults([TaskResult])
    /// Worker → coordinator, on an orderly shutdown.
    case workerGoodbye(WorkerGoodbye)
    /// Coordinator → worker, in answer to a hello.
    case welcome(Welcome)
    /// Coordinator → worker, when the worker has a free slot.
    case taskAssignment(TaskAssignment)
    /// Coordinator → worker, several assignments at once (minor 1; only to a worker whose
    /// ``WorkerHello/acceptsBatches`` is set). Each means what it means alone, in order.
    case taskAssignments([TaskAssignment])
    /// Coordinator → worker, to stop a running task.
    case cancelTask(CancelTask)
    /// Coordinator → worker, to take back a task that has not started (work stealing at a batch's tail;
    /// only to a worker that announced ``WorkerHello/giveBackThreads``).
    case giveBackTask(GiveBackTask)
    /// Worker → coordinator, the answer to ``giveBackTask(_:)``.
    case taskGivenBack(TaskGivenBack)
    /// Client → coordinator, to submit a batch.
    case submitBatch(SubmitBatch)
    /// Client → coordinator, to ask for status.
    case statusRequest(StatusRequest)
    /// Client → coordinator, to cancel a batch or some of its items.
    case cancelBatch(CancelBatch)
    /// Client → coordinator, to (re-)attach to a batch and receive its results.
    case fetchResults(FetchResults)
    /// Coordinator → client, in answer to a submission.
    case batchAccepted(BatchAccepted)
    /// Coordinator → client, for each finished item.
    case itemFinished(ItemFinished)
    /// Coordinator → client, when a manifest makes a batch grow.
    case itemsAdded(ItemsAdded)
    /// Coordinator → client, several finished items at once (minor 1; only for a batch submitted with
    /// ``SubmitBatch/acceptsBatches``). Each means what it means alone, in order.
    case itemsFinished([ItemFinished])
    /// Coordinator → client, after the last item of a batch.
    case batchFinished(BatchFinished)
    /// Coordinator → client, in answer to a cancel request that carries a request id (minor 2).
    case cancelAccepted(CancelAccepted)
    /// Client → coordinator, to re-run a finished batch's failed and cancelled items (or those named).
    case retryBatch(RetryBatch)
    /// Coordinator → client, in answer to a retry request.
    case retryAccepted(RetryAccepted)
    /// Coordinator → client, in answer to a status request.
    case statusReply(StatusReply)
    /// Either direction: a request or a peer is refused.
    case refusal(Refusal)
    /// Coordinator ↔ coordinator of a pair (`--ha`), on the pair's own link: every heartbeat, both ways.
    case pairAnnouncement(WirePairAnnouncement)
    /// Active → passive coordinator: journal records.
    case pairJournal(WirePairJournal)
    /// Passive → active coordinator: how far it holds the stream.
    case pairHeld(WirePairHeld)
    /// Active → passive coordinator: a stored result, before the record that names it.
    case pairResultFile(WirePairResultFile)
    /// Active → passive coordinator: a whole journal follows, or has followed.
    case pairSnapshot(WirePairSnapshot)
}
