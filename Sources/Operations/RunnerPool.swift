import Runtime

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The launched operations waiting for a runner, and the ``OperationRunner``s that run them: one pool per
/// task priority, shared by every ``WorkQueue``.
///
/// A Swift task per operation costs about a microsecond to create, schedule and destroy, more than the
/// rest of the engine's work for an operation; a pool lets a runner that has finished an operation take
/// the next one at the price of a lock. The rule that keeps it correct: **while operations wait in the
/// pool, at least one runner is searching for work** (awake and not inside an operation). A runner inside
/// an operation may stay there indefinitely (a remote operation waits for its reply), so it never counts;
/// whenever an operation is added, or taken while others still wait, and nobody is searching, one parked
/// runner is woken, or a new one started. So no waiting operation depends on a runner that is busy, and an
/// operation waits for a runner no longer than it would wait for a task of its own to be scheduled.
///
/// Runners that find no work park (a suspended task, no thread) up to ``maxParked``; the others end.
final class RunnerPool: Sendable {
    /// The priority of this pool's tasks.
    let priority: TaskPriority
    private let state = LockedValue(State())

    /// Runners kept parked per pool; more would only hold memory.
    static let maxParked: Int = {
        let processors = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
        return max(4, 2 * processors)
    }()

    private struct State {
        var waiting = OperationFIFO()
        /// Runners awake and not inside an operation (including those woken or started and not yet running).
        var searching = 0
        var parked: [CheckedContinuation<Void, Never>] = []
        /// Runners told to park that have not registered yet (they count against ``maxParked``).
        var parking = 0

        /// Records that one more runner searches; returns the parked runner to wake, or `nil` if a new
        /// runner must be started.
        mutating func wake() -> CheckedContinuation<Void, Never>? {
            searching += 1
            return parked.popLast()
        }
    }

    private init(priority: TaskPriority) { self.priority = priority }

    /// What a runner does next.
    enum Take {
        case operation(AsyncOperation)
        case park
        case exit
    }

    /// The pools, by ``OperationPriority/taskPriority``.
    private static let pools = [
        RunnerPool(priority: .background), RunnerPool(priority: .low), RunnerPool(priority: .medium),
        RunnerPool(priority: .high),
    ]

    /// The pool whose runners run operations of `priority`.
    static func pool(for priority: OperationPriority) -> RunnerPool {
        switch priority {
        case .veryLow: return pools[0]
        case .low: return pools[1]
        case .normal: return pools[2]
        case .high, .veryHigh: return pools[3]
        }
    }

    /// Adds a launched operation; a runner will run it.
    func push(_ operation: AsyncOperation) {
        enum Wake {
            case none
            case resume(CheckedContinuation<Void, Never>)
            case start
        }
        let wake = state.withLock { s -> Wake in
            s.waiting.push(operation)
            guard s.searching == 0 else { return .none }
            return s.wake().map(Wake.resume) ?? .start
        }
        switch wake {
        case .none: break
        case .resume(let runner): runner.resume()
        case .start: OperationRunner.start(in: self)
        }
    }

    /// Adds launched operations, in order.
    func push(contentsOf operations: [AsyncOperation]) {
        let wake = state.withLock { s -> CheckedContinuation<Void, Never>?? in
            for operation in operations { s.waiting.push(operation) }
            guard s.searching == 0 else { return nil }
            return .some(s.wake())
        }
        switch wake {
        case .none: break
        case .some(.some(let runner)): runner.resume()
        case .some(.none): OperationRunner.start(in: self)
        }
    }

    /// Called by a runner that is free: the next operation, or whether to park or end. `searching` says
    /// whether the runner was counted as searching (woken or just started) rather than coming back from
    /// an operation.
    func take(searching: Bool) -> Take {
        let (take, wake) = state.withLock { s -> (Take, CheckedContinuation<Void, Never>??) in
            if searching { s.searching -= 1 }
            if let operation = s.waiting.pop() {
                // Others still wait and nobody else searches: keep the rule.
                let wake = !s.waiting.isEmpty && s.searching == 0 ? Optional(s.wake()) : nil
                return (.operation(operation), wake)
            }
            if s.parked.count + s.parking < RunnerPool.maxParked {
                s.parking += 1
                return (.park, nil)
            }
            return (.exit, nil)
        }
        switch wake {
        case .none: break
        case .some(.some(let runner)): runner.resume()
        case .some(.none): OperationRunner.start(in: self)
        }
        return take
    }

    /// Suspends a runner told to park until it is woken; it then searches.
    func park() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let searchNow = state.withLock { s -> Bool in
                s.parking -= 1
                if !s.waiting.isEmpty {
                    // An operation arrived between `take` and here.
                    s.searching += 1
                    return true
                }
                s.parked.append(continuation)
                return false
            }
            if searchNow { continuation.resume() }
        }
    }
}

/// A FIFO of operations (ready ones waiting for a slot in a queue, or launched ones waiting for a
/// runner). Popped entries are cleared at once, so the FIFO never keeps a finished operation alive.
struct OperationFIFO {
    private var items: [AsyncOperation?] = []
    private var head = 0

    var isEmpty: Bool { head == items.count }

    mutating func push(_ operation: AsyncOperation) { items.append(operation) }

    mutating func pop() -> AsyncOperation? {
        guard head < items.count else { return nil }
        let operation = items[head]
        items[head] = nil
        head += 1
        if head == items.count {
            // Keep the storage for the next burst, unless a rare huge one grew it.
            items.removeAll(keepingCapacity: items.count <= 4096)
            head = 0
        } else if head >= 1024 && head * 2 >= items.count {
            items.removeFirst(head)
            head = 0
        }
        return operation
    }
}
