import Foundation
import Operations
import Runtime
import ShiftworkTestSupport
import XCTest

/// Counts starts and finishes per operation and collects invariant violations.
final class StressTracker: Sendable {
    private let counts: LockedValue<[Int: (starts: Int, finishes: Int)]> = LockedValue([:])
    private let problems = LockedValue<[String]>([])

    func violation(_ message: String) { problems.withLock { $0.append(message) } }
    var violations: [String] { problems.withLock { $0 } }
    func started(_ index: Int) { counts.withLock { $0[index, default: (0, 0)].starts += 1 } }
    func finished(_ index: Int) { counts.withLock { $0[index, default: (0, 0)].finishes += 1 } }
    func record(_ index: Int) -> (starts: Int, finishes: Int) { counts.withLock { $0[index] ?? (0, 0) } }
}

final class WeakBox: Sendable {
    weak let operation: AsyncOperation?
    init(_ operation: AsyncOperation) { self.operation = operation }
}

/// Checks the invariants from the operation's own events.
struct StressObserver: OperationObserver {
    let index: Int
    let tracker: StressTracker
    let required: [WeakBox]
    let parent: WeakBox?

    func operationWillExecute(_ operation: AsyncOperation) {
        tracker.started(index)
        for dependency in operation.dependencies where !dependency.isFinished {
            tracker.violation("\(operation.name) started before its dependency \(dependency.name) finished")
        }
        for box in required {
            if let dependency = box.operation, dependency.state != .finished {
                tracker.violation(
                    "\(operation.name) started although required \(dependency.name) is \(dependency.state)")
            }
        }
        if let parent = parent?.operation, parent.state != .executing {
            tracker.violation("child \(operation.name) started while its group \(parent.name) is \(parent.state)")
        }
    }

    func operationDidFinish(_ operation: AsyncOperation, state: OperationState, errors: [any Error]) {
        tracker.finished(index)
        if let group = operation as? GroupOperation, state != .cancelled {
            for child in group.children where !child.isFinished {
                tracker.violation("group \(group.name) finished (\(state)) before its child \(child.name)")
            }
        }
    }
}

final class StressTests: XCTestCase {
    /// The seed; set OPERATIONS_STRESS_SEED to replay a failure.
    var baseSeed: UInt64 {
        ProcessInfo.processInfo.environment["OPERATIONS_STRESS_SEED"].flatMap { UInt64($0) } ?? 0x5EED_2026
    }

    func testRandomDAGsGroupsCancelsAndFailures() async throws {
        let clock = ContinuousClock()
        let start = clock.now
        for round in 0..<4 {
            let seed = baseSeed &+ UInt64(round)
            let weakOperations = try await runRound(seed: seed, operationCount: 3_000)
            // Nothing leaks: once the round's strong references are gone, every operation is freed.
            let deadline = clock.now + .seconds(10)
            while weakOperations.contains(where: { $0.operation != nil }) && clock.now < deadline {
                try await Task.sleep(for: .milliseconds(2))
            }
            let alive = weakOperations.compactMap(\.operation)
            XCTAssertTrue(alive.isEmpty, "seed \(seed): \(alive.count) operations leaked, e.g. \(alive.prefix(3))")
        }
        print("stress: 4 rounds in \(clock.now - start) (seed \(baseSeed))")
    }

    private func runRound(seed: UInt64, operationCount: Int) async throws -> [WeakBox] {
        var random = SeededGenerator(seed: seed)
        let tracker = StressTracker()
        let queues = [
            WorkQueue(name: "unlimited"), WorkQueue(name: "four", maxConcurrentOperationCount: 4),
            WorkQueue(name: "serial", maxConcurrentOperationCount: 1),
        ]
        var topLevel: [AsyncOperation] = []
        var everyOperation: [AsyncOperation] = []
        var remotes: [CompletableOperation<Int>] = []
        var nextIndex = 0

        func makeLeaf(_ name: String) -> AsyncOperation {
            let kind = Int.random(in: 0..<10, using: &random)
            let sleepMicros = Int.random(in: 0..<1500, using: &random)
            switch kind {
            case 0:
                return AsyncBlockOperation(name: name) { throw TestError("failure in \(name)") }
            case 1:
                return AsyncBlockOperation(name: name) { try await Task.sleep(for: .microseconds(sleepMicros)) }
            case 2:
                let remote = CompletableOperation<Int>(name: name)
                remotes.append(remote)
                return remote
            case 3:
                return AsyncBlockOperation(name: name) {
                    for _ in 0..<3 { await Task.yield() }
                }
            default:
                return AsyncBlockOperation(name: name) {}
            }
        }

        func observe(_ operation: AsyncOperation, required: [AsyncOperation], parent: AsyncOperation?) {
            operation.addObserver(
                StressObserver(
                    index: nextIndex, tracker: tracker, required: required.map(WeakBox.init),
                    parent: parent.map(WeakBox.init)))
            nextIndex += 1
            everyOperation.append(operation)
        }

        func addRandomDependencies(
            to operation: AsyncOperation, from candidates: ArraySlice<AsyncOperation>
        ) throws -> [AsyncOperation] {
            var required: [AsyncOperation] = []
            guard !candidates.isEmpty else { return [] }
            for _ in 0..<Int.random(in: 0...3, using: &random) {
                guard let dependency = candidates.randomElement(using: &random) else { break }
                let policy: DependencyPolicy = Bool.random(using: &random) ? .afterCompletion : .requireSuccess
                try operation.addDependency(dependency, policy: policy)
                if policy == .requireSuccess { required.append(dependency) }
            }
            return required
        }

        for index in 0..<operationCount {
            let window = topLevel[max(0, index - 60)..<index]
            if Int.random(in: 0..<10, using: &random) == 0 {
                let group = GroupOperation(
                    name: "group\(index)", maxConcurrentChildren: Int.random(in: 1...4, using: &random))
                var children: [AsyncOperation] = []
                for childIndex in 0..<Int.random(in: 0...6, using: &random) {
                    let child = makeLeaf("group\(index).child\(childIndex)")
                    var required = try addRandomDependencies(to: child, from: window)
                    if let sibling = children.randomElement(using: &random), Bool.random(using: &random) {
                        try child.addDependency(sibling, policy: .requireSuccess)
                        required.append(sibling)
                    }
                    observe(child, required: required, parent: group)
                    children.append(child)
                }
                // Half the children are given before the group runs, half while it runs.
                let (early, late) = (children.prefix(children.count / 2), children.dropFirst(children.count / 2))
                try group.addChildren(Array(early))
                if !late.isEmpty {
                    let lateChildren = Array(late)
                    // Added from another task once the group runs; a child that comes too late (the
                    // group already finished) is cancelled instead.
                    group.addObserver(
                        BlockObserver(
                            willExecute: { operation in
                                guard let group = operation as? GroupOperation else { return }
                                Task.detached {
                                    for child in lateChildren {
                                        do { try group.addChild(child) } catch { child.cancel() }
                                    }
                                }
                            },
                            didFinish: { _, _, _ in
                                // A group cancelled before it ran never takes its late children.
                                for child in lateChildren where child.state == .pending { child.cancel() }
                            }))
                }
                let required = try addRandomDependencies(to: group, from: window)
                observe(group, required: required, parent: nil)
                topLevel.append(group)
            } else {
                let operation = makeLeaf("op\(index)")
                let required = try addRandomDependencies(to: operation, from: window)
                observe(operation, required: required, parent: nil)
                topLevel.append(operation)
            }
        }

        // Enqueue in a random order, on random queues.
        var order = topLevel
        order.shuffle(using: &random)
        for operation in order {
            try queues[Int.random(in: 0..<queues.count, using: &random)].addOperation(operation)
        }
        // Some of the operations are cancelled at random moments; remote ones complete, fail or race.
        let cancelTargets = (0..<operationCount / 20).compactMap { _ in everyOperation.randomElement(using: &random) }
        let remoteActions = remotes.map {
            ($0, Int.random(in: 0..<4, using: &random), Int.random(in: 0..<2000, using: &random))
        }
        let cancels = Task.detached {
            for (position, target) in cancelTargets.enumerated() {
                if position % 8 == 0 { try? await Task.sleep(for: .microseconds(300)) }
                target.cancel(error: position % 2 == 0 ? TestError("random cancel") : nil)
            }
        }
        let network = Task.detached {
            await withTaskGroup(of: Void.self) { group in
                for (remote, action, delay) in remoteActions {
                    group.addTask {
                        try? await Task.sleep(for: .microseconds(delay))
                        switch action {
                        case 0: remote.fail(with: TestError("remote failure"))
                        case 1:
                            // A completion racing with a cancellation.
                            async let a: Void = { remote.cancel() }()
                            remote.complete(with: delay)
                            await a
                        default: remote.complete(with: delay)
                        }
                    }
                }
            }
        }
        await cancels.value
        await network.value

        let clock = ContinuousClock()
        let deadline = clock.now + .seconds(30)
        for queue in queues {
            let finished = await queue.waitUntilAllOperationsAreFinished(
                timeout: max(.milliseconds(1), deadline - clock.now))
            XCTAssertTrue(finished, "seed \(seed): queue \(queue) hung; unfinished: \(queue.operations.prefix(5))")
        }
        for (index, operation) in everyOperation.enumerated() {
            let record = tracker.record(index)
            XCTAssertTrue(operation.isFinished, "seed \(seed): \(operation) never finished")
            XCTAssertEqual(record.finishes, 1, "seed \(seed): \(operation.name) finished \(record.finishes) times")
            XCTAssertLessThanOrEqual(record.starts, 1, "seed \(seed): \(operation.name) started \(record.starts) times")
            if operation.state == .finished, !(operation is GroupOperation) {
                XCTAssertEqual(record.starts, 1, "seed \(seed): \(operation.name) finished without executing")
            }
        }
        XCTAssertEqual(tracker.violations, [], "seed \(seed)")
        return everyOperation.map(WeakBox.init)
    }

    /// Random edges, some closing cycles: every rejection names a real cycle, every acceptance keeps the
    /// graph acyclic (checked against a model), and the accepted graph then runs to completion.
    func testRandomCycleDetection() async throws {
        let seed = baseSeed &+ 100
        var random = SeededGenerator(seed: seed)
        let count = 400
        let operations = (0..<count).map { AsyncOperation(name: "n\($0)") }
        var model = Array(repeating: Set<Int>(), count: count)  // model[a] = what a waits for
        func reaches(_ from: Int, _ to: Int) -> Bool {
            var stack = [from]
            var seen: Set<Int> = [from]
            while let node = stack.popLast() {
                if node == to { return true }
                for next in model[node] where seen.insert(next).inserted { stack.append(next) }
            }
            return false
        }
        var rejected = 0
        for _ in 0..<2_000 {
            let a = Int.random(in: 0..<count, using: &random)
            let b = Int.random(in: 0..<count, using: &random)
            let closesCycle = a == b || reaches(b, a)
            do {
                try operations[a].addDependency(operations[b])
                XCTAssertFalse(closesCycle, "seed \(seed): n\(a) → n\(b) closes a cycle but was accepted")
                model[a].insert(b)
            } catch let error as DependencyCycleError {
                rejected += 1
                XCTAssertTrue(closesCycle, "seed \(seed): n\(a) → n\(b) was rejected: \(error)")
                let ids = error.cycle.compactMap { Int($0.dropFirst()) }
                XCTAssertEqual(ids.first, a)
                XCTAssertEqual(ids.last, a)
                for (x, y) in zip(ids, ids.dropFirst()) where !(x == a && y == b) {
                    XCTAssertTrue(model[x].contains(y), "seed \(seed): the reported cycle has no edge n\(x) → n\(y)")
                }
            }
        }
        XCTAssertGreaterThan(rejected, 0)
        let queue = WorkQueue()
        try queue.addOperations(operations.shuffled(using: &random))
        await waitForQueue(queue, seconds: 20)
        XCTAssertTrue(operations.allSatisfy { $0.state == .finished })
    }
}
