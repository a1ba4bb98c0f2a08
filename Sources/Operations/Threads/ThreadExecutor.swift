/// A serial executor with a thread of its own: an actor that uses it runs every job on that thread, never
/// on Swift's cooperative pool.
///
/// For an actor whose jobs may block, by design, for short moments (the coordinator writes and syncs its
/// journal in order, before it tells anyone of what it wrote): on its own thread, a blocking call stops
/// only that actor, and the cooperative pool's threads (one per core) stay free for everything else.
///
/// ```swift
/// actor Journaled {
///     private let executor = ThreadExecutor(name: "journaled")
///     nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }
/// }
/// ```
///
/// Jobs run in the order they were enqueued. The thread ends when the executor is released (an actor
/// holds it as long as the actor lives; a job in flight holds the actor).
public final class ThreadExecutor: SerialExecutor, Sendable {
    /// The thread's name (Linux keeps 15 characters).
    public let name: String
    private let state: ThreadExecutorState

    /// Starts the thread.
    public init(name: String) {
        self.name = name
        let state = ThreadExecutorState()
        self.state = state
        PoolThread.start(name: name) { state.serve() }
    }

    deinit {
        state.stop()
    }

    /// Queues `job` to run on the executor's thread.
    public func enqueue(_ job: consuming ExecutorJob) {
        state.enqueue(UnownedJob(job), on: asUnownedSerialExecutor())
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }
}

/// The jobs waiting for the thread, and the loop that runs them. Separate from the executor so that the
/// thread does not keep the executor alive.
private final class ThreadExecutorState: Sendable {
    private struct Queue {
        var jobs: [(UnownedJob, UnownedSerialExecutor)] = []
        var isStopped = false
    }

    private let queue = LockedValue(Queue())
    /// Signalled when a job arrives in an empty queue (the thread may be asleep) and on stop.
    private let wakeUps = CountingSemaphore()

    func enqueue(_ job: UnownedJob, on executor: UnownedSerialExecutor) {
        let wasEmpty = queue.withLock { queue -> Bool in
            queue.jobs.append((job, executor))
            return queue.jobs.count == 1
        }
        if wasEmpty { wakeUps.signal() }
    }

    func stop() {
        queue.withLock { $0.isStopped = true }
        wakeUps.signal()
    }

    /// Takes every waiting job at once and runs them in order; sleeps when there are none.
    func serve() {
        var batch: [(UnownedJob, UnownedSerialExecutor)] = []
        while true {
            wakeUps.wait()
            while true {
                let stopped = queue.withLock { queue -> Bool in
                    swap(&batch, &queue.jobs)
                    return queue.isStopped
                }
                if batch.isEmpty {
                    if stopped { return }
                    break
                }
                for (job, executor) in batch { job.runSynchronously(on: executor) }
                batch.removeAll(keepingCapacity: true)
            }
        }
    }
}
