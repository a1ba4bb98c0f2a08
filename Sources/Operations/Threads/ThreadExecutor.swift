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
/// It is a `TaskExecutor` too: a task started with `Task(executorPreference: executor)` runs its
/// nonisolated code on the same thread, and is resumed there (by a continuation resumed on another
/// thread, a stream's element, a timer) instead of on a thread of the cooperative pool. Such a task that
/// calls the actor then needs no second hop: one wake-up of this thread instead of two (a pool thread's,
/// then this one's). Every job of the thread runs isolated to the executor (it runs one job at a time),
/// so the actor's code runs inline.
///
/// Jobs run in the order they were enqueued. The thread ends when the executor is released (an actor
/// holds it as long as the actor lives; a job in flight holds the actor).
public final class ThreadExecutor: SerialExecutor, TaskExecutor, Sendable {
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

    /// Queues `job` to run on the executor's thread (an actor's job, or a job of a task that prefers this
    /// executor).
    public func enqueue(_ job: consuming ExecutorJob) {
        state.enqueue(UnownedJob(job), on: (asUnownedSerialExecutor(), asUnownedTaskExecutor()))
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    public func asUnownedTaskExecutor() -> UnownedTaskExecutor {
        UnownedTaskExecutor(ordinary: self)
    }
}

/// The jobs waiting for the thread, and the loop that runs them. Separate from the executor so that the
/// thread does not keep the executor alive.
private final class ThreadExecutorState: Sendable {
    /// The executor a job runs on, as an actor's (serial) and as a task's preference.
    typealias Executors = (serial: UnownedSerialExecutor, task: UnownedTaskExecutor)

    private struct Queue {
        var jobs: [(UnownedJob, Executors)] = []
        var isStopped = false
    }

    private let queue = LockedValue(Queue())
    /// Signalled when a job arrives in an empty queue (the thread may be asleep) and on stop.
    private let wakeUps = CountingSemaphore()

    func enqueue(_ job: UnownedJob, on executor: Executors) {
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
        var batch: [(UnownedJob, Executors)] = []
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
                for (job, executor) in batch {
                    job.runSynchronously(isolatedTo: executor.serial, taskExecutor: executor.task)
                }
                batch.removeAll(keepingCapacity: true)
            }
        }
    }
}
