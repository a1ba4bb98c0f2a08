import Wire

/// One thing that happens to the coordinator, as `CoordinatorCore` takes it: a message from a client or a
/// worker (already decoded, within bounds and authorized by the actor), a timer, a journal replayed.
/// Every event carries the instant it is taken at, so that the core never reads a clock.
enum CoreEvent {
    /// A client submits a batch; `batchID` is the name the coordinator gives it if accepted.
    case submit(SubmitBatch, from: MessageSender, batchID: String)
    /// A client runs the failed (or cancelled) items of a finished batch again (`shiftwork retry`).
    case retryBatch(RetryBatch, from: PeerIdentity)
    /// A client cancels a batch or some of its items.
    case cancel(CancelBatch, from: PeerIdentity)
    /// A worker joins.
    case workerHello(WorkerHello, from: MessageSender)
    /// A worker's heartbeat.
    case heartbeat(Heartbeat, from: PeerIdentity)
    /// A worker leaves (or starts draining).
    case workerGoodbye(WorkerGoodbye, from: PeerIdentity)
    /// A worker answers which of the tasks it was asked to give back it gave back (tail stealing).
    case taskGivenBack(TaskGivenBack, from: PeerIdentity)
    /// A message could not be routed to this peer: if it is a worker, its connection is gone.
    case peerUnreachable(PeerIdentity)
    /// Results of tasks, from the worker that ran them, in the order they came.
    case results([TaskResult], from: PeerIdentity)
    /// The liveness timer: batch deadlines, finished batches past their retention.
    case tick
    /// Workers' silence is judged as of now (every message received before it handled).
    case judgeSilence
    /// A timer the core set (`CoreEffect.setTimer`) is due.
    case timerFired(CoreTimer)
    /// A restart: the batches a previous run of the coordinator journaled and did not retire.
    case restore(RecoveredState, wallClockMilliseconds: UInt64)
    /// The journal holds the record a decision waited for (`CoreEffect.recordDurably`): the batch is
    /// registered (or the retry reopened), its client told, its items started.
    case recorded(DurableDecision)
    /// The journal could not take it: the decision is dropped and the client refused with why.
    case notRecorded(DurableDecision, reason: String)
    /// A client sends an uploaded file's bytes (or why it cannot), as asked (`UploadWindow`).
    case uploadData(UploadData, from: PeerIdentity)
    /// A client attached to a batch (`FetchResults`, `submit --key`): it is asked for what awaits upload.
    case uploadsAttached(batchID: String, client: PeerIdentity)
    /// The actor wrote an upload to the spool (`written`), or could not (`UploadIO.spool`).
    case uploadSpooled(UploadWindow.Item, written: Bool)
    /// The actor read an upload back from the spool; `nil`: gone or damaged (`UploadIO.load`).
    case uploadLoaded(UploadWindow.Item, bytes: [UInt8]?, crc32c: UInt32)
}

/// A timer the core asks the actor to set; it comes back as `CoreEvent.timerFired`.
enum CoreTimer: Hashable {
    /// The wait before a failed task's next attempt is over (`TaskRetrySchedule`).
    case retry(TaskKey)
}
