import Wire

/// Simulated workers' task runs that take a fixed delay each, in the order they end: a pure state machine
/// over a clock in nanoseconds (`SimulatedWorkerGroup` gives it `CLOCK_MONOTONIC`, tests any numbers).
///
/// An assignment's runs (``SimulatedPhotoWorker/runs(answering:coordinatorAcceptsBatches:)``) take the
/// delay one after the other, as on a real worker: a download's chained tilt-shift starts in the slot when
/// the download's run ends, and takes the delay again. Since every run takes the same time from its start,
/// the runs end in the order they start, and the queue is a FIFO.
public struct DelayedRunQueue {
    /// A run that has ended.
    public struct Ended: Equatable {
        /// The worker it ran on.
        public var worker: Int
        /// Whether its messages go as they are (a photo task's), not batched with the wake-up's other results.
        public var alone: Bool
        /// The messages the worker sends now (none for a result held back for the next run).
        public var messagesAtEnd: [[TaskResult]]
        /// The key of the assignment's next run, which starts now (`nil`: the assignment is done).
        public var nextTaskKey: UInt64?

        /// A run ended on `worker`.
        public init(worker: Int, alone: Bool, messagesAtEnd: [[TaskResult]], nextTaskKey: UInt64?) {
            self.worker = worker
            self.alone = alone
            self.messagesAtEnd = messagesAtEnd
            self.nextTaskKey = nextTaskKey
        }
    }

    private struct Pending {
        let dueNs: UInt64
        let worker: Int
        let registration: Int
        let alone: Bool
        let runs: [SimulatedRun]
        let index: Int
    }

    private let delayNs: UInt64
    private var pending: [Pending] = []
    private var head = 0

    /// An empty queue whose runs each take `delayNs`.
    public init(delayNs: UInt64) {
        self.delayNs = delayNs
    }

    /// When the next run ends, if any runs.
    public var nextDueNs: UInt64? { head < pending.count ? pending[head].dueNs : nil }

    /// Starts the first of an assignment's `runs` at `now` on `worker` (in its `registration`); `alone` as in ``Ended``.
    public mutating func start(_ runs: [SimulatedRun], worker: Int, registration: Int, alone: Bool, now: UInt64) {
        guard !runs.isEmpty else { return }
        pending.append(
            Pending(
                dueNs: now + delayNs, worker: worker, registration: registration, alone: alone,
                runs: runs, index: 0))
    }

    /// Ends every run due by `now`, in order, and hands each to `handle`. An ended run's next run starts at
    /// `now` when `isCurrent(worker, registration)` says the worker still holds it (a `Welcome` since the
    /// assignment came drops the assignment: its runs end with no messages and start nothing).
    public mutating func end(upTo now: UInt64, isCurrent: (Int, Int) -> Bool, _ handle: (Ended) -> Void) {
        while head < pending.count, pending[head].dueNs <= now {
            let due = pending[head]
            head += 1
            guard isCurrent(due.worker, due.registration) else { continue }
            let next = due.index + 1
            let nextKey = next < due.runs.count ? due.runs[next].taskKey : nil
            if nextKey != nil {
                pending.append(
                    Pending(
                        dueNs: now + delayNs, worker: due.worker, registration: due.registration,
                        alone: due.alone, runs: due.runs, index: next))
            }
            handle(
                Ended(
                    worker: due.worker, alone: due.alone, messagesAtEnd: due.runs[due.index].messagesAtEnd,
                    nextTaskKey: nextKey))
        }
        if head > 4096, head * 2 > pending.count {
            pending.removeFirst(head)
            head = 0
        }
    }
}
