import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Threads this process owns, for CPU-bound or blocking work (decoding, filtering, encoding, file I/O):
/// work that must never run on Swift's cooperative pool.
///
/// The cooperative pool has one thread per core. An image filtered there for seconds takes one of them
/// away from every actor and task of the process, so with as many images as cores, heartbeats, socket
/// bridges and cancels wait behind pixels. ``run(_:)`` hands the work to one of these threads instead and
/// suspends the calling task (which frees its pool thread) until the work is done:
///
/// ```swift
/// let threads = ComputeThreads(name: "filter", count: 2)
/// let output = try await threads.run { cancellation in
///     try expensiveWork(stoppingWhen: cancellation)   // runs on a thread of `threads`
/// }
/// ```
///
/// Cancelling the awaiting task raises the work's ``CancellationFlag`` (the work checks it, as the
/// tilt-shift pipeline does every few rows); work still waiting for a thread is withdrawn at once and
/// ends with `CancellationError`. Jobs are started in the order they were given. Each thread holds the
/// pool until ``shutdown()``: call it when the pool's owner stops (``shared`` lives as long as the process).
public final class ComputeThreads: Sendable {
    /// A pool with one thread per core, created on first use: the default for operations that are not
    /// given a pool of their own.
    public static let shared = ComputeThreads(
        name: "compute", count: ProcessInfo.processInfo.activeProcessorCount)

    /// The name the threads carry, numbered when there are several (visible in debuggers and `top -H`;
    /// Linux keeps 15 characters of a thread name and ignores longer ones).
    public let name: String
    /// How many threads run work at once.
    public let count: Int
    private let state = LockedValue(JobQueue())
    /// Counts the jobs (and the exit requests) waiting; each thread takes one per wake-up.
    private let wakeUps = CountingSemaphore()

    /// Starts `count` threads (at least 1) named `name`.
    public init(name: String, count: Int) {
        self.name = name
        self.count = max(1, count)
        for index in 0..<self.count {
            PoolThread.start(name: self.count == 1 ? name : "\(name) \(index + 1)") { [self] in self.serve() }
        }
    }

    /// Runs `work` on one of the threads and returns its result.
    ///
    /// - Throws: what `work` throws; `CancellationError` when the calling task was cancelled before the
    ///   work started; ``ComputeThreadsError/shutDown`` after ``shutdown()``.
    public func run<Result: Sendable>(
        _ work: @escaping @Sendable (CancellationFlag) throws -> Result
    ) async throws -> Result {
        let flag = CancellationFlag()
        let id = state.withLock { $0.makeID() }
        // The result is written on a pool thread and read by this task: ThreadSanitizer is told of that
        // hand-off (`flag` names it), which Swift's runtime leaves out when the work ends before this task
        // has suspended (ThreadSanitizerAnnotations.handingOver). No effect outside TSan builds.
        defer { ThreadSanitizerAnnotations.tookOver(flag) }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
                let job = Job(id: id) {
                    guard !flag.isRaised else {
                        ThreadSanitizerAnnotations.handingOver(flag)
                        return continuation.resume(throwing: CancellationError())
                    }
                    let result = Swift.Result { try work(flag) }
                    ThreadSanitizerAnnotations.handingOver(flag)
                    continuation.resume(with: result)
                } abandon: { error in
                    ThreadSanitizerAnnotations.handingOver(flag)
                    continuation.resume(throwing: error)
                }
                submit(job)
            }
        } onCancel: {
            flag.raise()
            withdraw(id)
        }
    }

    /// Runs `work` on one of these threads, then `next` with its result on one of `nextThreads`' threads, and
    /// returns what `next` returns. The hand-over goes straight from thread to thread: the awaiting task is
    /// woken once, at the end, not in between (one trip through Swift's cooperative pool less; a worker's
    /// pipeline hands its output to a sink thread so). Cancelling the awaiting task raises the flag both
    /// see; work not started yet is withdrawn from either queue, and `next` does not start once it is raised.
    ///
    /// - Throws: what `work` or `next` throws; `CancellationError` when the calling task was cancelled
    ///   before either started; ``ComputeThreadsError/shutDown`` when either pool was shut down.
    public func run<Intermediate: Sendable, Result: Sendable>(
        _ work: @escaping @Sendable (CancellationFlag) throws -> Intermediate,
        then nextThreads: ComputeThreads,
        _ next: @escaping @Sendable (Intermediate, CancellationFlag) throws -> Result
    ) async throws -> Result {
        let flag = CancellationFlag()
        let id = state.withLock { $0.makeID() }
        let nextID = nextThreads.state.withLock { $0.makeID() }
        // As in `run(_:)`: the result is handed from a thread to this task, told to ThreadSanitizer.
        defer { ThreadSanitizerAnnotations.tookOver(flag) }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Result, any Error>) in
                let finish = { @Sendable (result: Swift.Result<Result, any Error>) in
                    ThreadSanitizerAnnotations.handingOver(flag)
                    continuation.resume(with: result)
                }
                let handOver = { @Sendable (intermediate: Intermediate) in
                    nextThreads.submit(
                        Job(id: nextID) {
                            guard !flag.isRaised else { return finish(.failure(CancellationError())) }
                            finish(Swift.Result { try next(intermediate, flag) })
                        } abandon: { error in
                            finish(.failure(error))
                        })
                }
                submit(
                    Job(id: id) {
                        guard !flag.isRaised else { return finish(.failure(CancellationError())) }
                        do {
                            handOver(try work(flag))
                        } catch {
                            finish(.failure(error))
                        }
                    } abandon: { error in
                        finish(.failure(error))
                    })
            }
        } onCancel: {
            flag.raise()
            withdraw(id)
            nextThreads.withdraw(nextID)
        }
    }

    /// Lets the threads end once the work they run has finished; work not started yet ends with
    /// ``ComputeThreadsError/shutDown``, and so does every later ``run(_:)``. Does not wait.
    public func shutdown() {
        let (abandoned, wasRunning) = state.withLock { queue -> ([Job], Bool) in
            guard !queue.isShutDown else { return ([], false) }
            queue.isShutDown = true
            return (queue.removeAll(), true)
        }
        guard wasRunning else { return }
        for job in abandoned { job.abandon(ComputeThreadsError.shutDown) }
        for _ in 0..<count { wakeUps.signal() }
    }

    private func submit(_ job: Job) {
        let accepted = state.withLock { queue -> Bool in
            guard !queue.isShutDown else { return false }
            queue.append(job)
            return true
        }
        if accepted {
            wakeUps.signal()
        } else {
            job.abandon(ComputeThreadsError.shutDown)
        }
    }

    /// Takes a job that no thread has started out of the queue, and ends it as cancelled.
    private func withdraw(_ id: UInt64) {
        if let job = state.withLock({ $0.remove(id) }) {
            job.abandon(CancellationError())
        }
    }

    /// The loop of each thread: wait for a wake-up, take the oldest job, run it.
    private func serve() {
        while true {
            wakeUps.wait()
            let next = state.withLock { queue -> (job: Job?, exit: Bool) in
                if let job = queue.popFirst() { return (job, false) }
                return (nil, queue.isShutDown)
            }
            if let job = next.job { job.run() }
            if next.exit { return }
        }
    }
}

/// Why ``ComputeThreads/run(_:)`` did not run the work.
public enum ComputeThreadsError: Error, CustomStringConvertible, Sendable {
    /// ``ComputeThreads/shutdown()`` was called: the process is stopping.
    case shutDown

    public var description: String { "the compute threads were shut down: the process is stopping" }
}

/// One piece of work and the two ways it ends: run by a thread, or abandoned before it started.
private struct Job: Sendable {
    let id: UInt64
    let run: @Sendable () -> Void
    let abandon: @Sendable (any Error) -> Void

    init(id: UInt64, run: @escaping @Sendable () -> Void, abandon: @escaping @Sendable (any Error) -> Void) {
        self.id = id
        self.run = run
        self.abandon = abandon
    }
}

/// The jobs not started yet, oldest first. A job leaves it exactly once: taken by a thread, withdrawn on
/// cancel, or abandoned at shutdown; whoever removes it ends it, so its continuation resumes once.
///
/// A taken job's slot is emptied at once: a job holds what its work captured (a photo's downloaded bytes,
/// its encoded output), which must go when the work is done, not when the queue next compacts (dozens of
/// photos later: the worker then held every photo of a batch, and each new body was fresh memory).
private struct JobQueue {
    private var jobs: [Job?] = []
    private var head = 0
    private var nextID: UInt64 = 0
    var isShutDown = false

    mutating func makeID() -> UInt64 {
        nextID &+= 1
        return nextID
    }

    mutating func append(_ job: Job) { jobs.append(job) }

    /// Slots from `head` on always hold a job; those before it are emptied.
    mutating func popFirst() -> Job? {
        guard head < jobs.count else { return nil }
        let job = jobs[head]
        jobs[head] = nil
        head += 1
        if head == jobs.count {
            jobs.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 64, head * 2 > jobs.count {
            jobs.removeFirst(head)
            head = 0
        }
        return job
    }

    mutating func remove(_ id: UInt64) -> Job? {
        guard let index = jobs[head...].firstIndex(where: { $0?.id == id }) else { return nil }
        return jobs.remove(at: index)
    }

    mutating func removeAll() -> [Job] {
        let rest = jobs[head...].compactMap { $0 }
        jobs = []
        head = 0
        return rest
    }
}
