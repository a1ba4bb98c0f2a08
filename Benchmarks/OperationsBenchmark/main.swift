// Operations engine benchmark: the same workloads on the engine (WorkQueue + AsyncOperation) and on
// Foundation's OperationQueue (BlockOperation + addDependency), in the same run.
//
// 100,000 operations in all, in units of 100 operations:
//   chains          334 chains of 100 operations, each waiting for the previous one
//   fan-out/fan-in  333 diamonds: a root, 98 operations waiting for it, a sink waiting for the 98
//   groups          333 groups of 99 children (engine: GroupOperation, whose completion is counted;
//                   Foundation: 99 operations and a completion operation depending on them, the closest
//                   equivalent)
// Units are streamed with a window (default 8 units in flight, `--window N`), as a coordinator feeds
// tasks: Foundation's OperationQueue on Linux rescans its waiting operations whenever one finishes, so
// with everything enqueued at once it is quadratic (about 300 operations/s with 20,000 waiting
// operations); `--window 0` enqueues everything at once to show it (use with `--scale 0.1`).
// Each figure is the best of `--repeat` runs (default 3) and counts building, enqueueing and running.
// The operations' work is one locked increment, so the figures measure scheduling overhead.
//
// Usage: OperationsBenchmark [--repeat N] [--window N] [--scale F] [--engine-only] [--workload NAME]
//   --scale multiplies the unit counts; --engine-only skips Foundation and --workload runs one workload
//   (chains, fan-out/fan-in or groups): both for profiling the engine (e.g. under perf), never for figures.

import Dispatch
import Foundation
import Operations
import Runtime

let arguments = CommandLine.arguments
func argument(_ name: String, default value: Double) -> Double {
    guard let index = arguments.firstIndex(of: name), index + 1 < arguments.count,
        let parsed = Double(arguments[index + 1])
    else { return value }
    return parsed
}
let repeats = max(1, Int(argument("--repeat", default: 3)))
let window = max(0, Int(argument("--window", default: 8)))
let scale = argument("--scale", default: 1)
let engineOnly = arguments.contains("--engine-only")
let onlyWorkload = arguments.firstIndex(of: "--workload").flatMap { $0 + 1 < arguments.count ? arguments[$0 + 1] : nil }

/// The operations' work: one increment under a lock (LockedValue, so the benchmark builds wherever the
/// package does, without Synchronization's macOS 15 requirement).
final class Counter: Sendable {
    let value = LockedValue(0)
    func tick() { value.withLock { $0 += 1 } }
    var count: Int { value.withLock { $0 } }
}

enum Shape { case chain, diamond, group }

struct Workload {
    let name: String
    let shape: Shape
    let units: Int
    let width = 100  // operations per unit
    var operations: Int { units * width }
}

let workloads = [
    Workload(name: "chains", shape: .chain, units: max(1, Int(334 * scale))),
    Workload(name: "fan-out/fan-in", shape: .diamond, units: max(1, Int(333 * scale))),
    Workload(name: "groups", shape: .group, units: max(1, Int(333 * scale))),
].filter { onlyWorkload == nil || $0.name == onlyWorkload }

// MARK: - Engine

/// Builds one unit; returns its operations and the one that finishes last.
func engineUnit(_ shape: Shape, width: Int, counter: Counter) throws -> ([AsyncOperation], AsyncOperation) {
    switch shape {
    case .chain:
        var operations: [AsyncOperation] = []
        operations.reserveCapacity(width)
        var previous: AsyncOperation?
        for _ in 0..<width {
            let operation = AsyncBlockOperation { counter.tick() }
            if let previous { try operation.addDependency(previous) }
            previous = operation
            operations.append(operation)
        }
        return (operations, operations[operations.count - 1])
    case .diamond:
        let root = AsyncBlockOperation { counter.tick() }
        let sink = AsyncBlockOperation { counter.tick() }
        var operations: [AsyncOperation] = [root]
        operations.reserveCapacity(width)
        for _ in 0..<(width - 2) {
            let middle = AsyncBlockOperation { counter.tick() }
            try middle.addDependency(root)
            try sink.addDependency(middle)
            operations.append(middle)
        }
        operations.append(sink)
        return (operations, sink)
    case .group:
        let children = (0..<(width - 1)).map { _ in AsyncBlockOperation { counter.tick() } as AsyncOperation }
        let group = GroupOperation(operations: children)
        group.onCompletion { _ in counter.tick() }
        return ([group], group)
    }
}

func runEngine(_ workload: Workload) async throws -> Int {
    let counter = Counter()
    let queue = WorkQueue(name: "bench")
    var inFlight: [AsyncOperation] = []
    var head = 0
    for _ in 0..<workload.units {
        if window > 0 && inFlight.count - head >= window {
            await inFlight[head].waitUntilFinished()
            head += 1
        }
        let (operations, last) = try engineUnit(workload.shape, width: workload.width, counter: counter)
        try queue.addOperations(operations)
        inFlight.append(last)
    }
    await queue.waitUntilAllOperationsAreFinished()
    return counter.count
}

// MARK: - Foundation

func foundationUnit(_ shape: Shape, width: Int, counter: Counter) -> ([Operation], Operation) {
    switch shape {
    case .chain:
        var operations: [Operation] = []
        operations.reserveCapacity(width)
        var previous: Operation?
        for _ in 0..<width {
            let operation = BlockOperation { counter.tick() }
            if let previous { operation.addDependency(previous) }
            previous = operation
            operations.append(operation)
        }
        return (operations, operations[operations.count - 1])
    case .diamond:
        let root = BlockOperation { counter.tick() }
        let sink = BlockOperation { counter.tick() }
        var operations: [Operation] = [root]
        operations.reserveCapacity(width)
        for _ in 0..<(width - 2) {
            let middle = BlockOperation { counter.tick() }
            middle.addDependency(root)
            sink.addDependency(middle)
            operations.append(middle)
        }
        operations.append(sink)
        return (operations, sink)
    case .group:
        let completion = BlockOperation { counter.tick() }
        var operations: [Operation] = []
        operations.reserveCapacity(width)
        for _ in 0..<(width - 1) {
            let child = BlockOperation { counter.tick() }
            completion.addDependency(child)
            operations.append(child)
        }
        operations.append(completion)
        return (operations, completion)
    }
}

func runFoundation(_ workload: Workload) -> Int {
    let counter = Counter()
    let queue = OperationQueue()
    var inFlight: [Operation] = []
    var head = 0
    for _ in 0..<workload.units {
        if window > 0 && inFlight.count - head >= window {
            inFlight[head].waitUntilFinished()
            head += 1
        }
        let (operations, last) = foundationUnit(workload.shape, width: workload.width, counter: counter)
        queue.addOperations(operations, waitUntilFinished: false)
        inFlight.append(last)
    }
    queue.waitUntilAllOperationsAreFinished()
    return counter.count
}

// MARK: - Measurement

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func format(_ value: Double) -> String { String(format: "%.0f", value) }

let clock = ContinuousClock()
print(
    "Operations benchmark: \(repeats) run(s) per figure, best kept; window \(window == 0 ? "none (all at once)" : "\(window) units"); \(ProcessInfo.processInfo.activeProcessorCount) CPUs"
)
var ratios: [Double] = []
var engineTotal = 0.0
var foundationTotal = 0.0
var totalOperations = 0
for workload in workloads {
    var bestEngine = Double.infinity
    var bestFoundation = Double.infinity
    for _ in 0..<repeats {
        let start = clock.now
        let done = try await runEngine(workload)
        bestEngine = min(bestEngine, seconds(clock.now - start))
        precondition(done == workload.operations, "engine ran \(done) of \(workload.operations)")

        if engineOnly { continue }
        let foundationStart = clock.now
        let foundationDone = runFoundation(workload)
        bestFoundation = min(bestFoundation, seconds(clock.now - foundationStart))
        precondition(
            foundationDone == workload.operations, "Foundation ran \(foundationDone) of \(workload.operations)")
    }
    let engineRate = Double(workload.operations) / bestEngine
    let foundationRate = Double(workload.operations) / bestFoundation
    let ratio = engineRate / foundationRate
    ratios.append(ratio)
    engineTotal += bestEngine
    foundationTotal += bestFoundation
    totalOperations += workload.operations
    let label = workload.name.padding(toLength: 15, withPad: " ", startingAt: 0)
    if engineOnly {
        print("\(label) \(workload.operations) ops  engine \(format(engineRate)) ops/s")
        continue
    }
    print(
        "\(label) \(workload.operations) ops  engine \(format(engineRate)) ops/s  foundation \(format(foundationRate)) ops/s  ratio \(String(format: "%.2f", ratio))"
    )
}
if engineOnly {
    print("overall: engine \(format(Double(totalOperations) / engineTotal)) ops/s (Foundation not run)")
    exit(0)
}
let geometricMean = exp(ratios.map { log($0) }.reduce(0, +) / Double(ratios.count))
let overallRatio = foundationTotal / engineTotal
print(
    "overall: engine \(format(Double(totalOperations) / engineTotal)) ops/s, foundation \(format(Double(totalOperations) / foundationTotal)) ops/s; geometric mean of the per-workload ratios \(String(format: "%.2f", geometricMean))"
)
print(
    "engine/foundation throughput ratio: \(String(format: "%.2f", overallRatio)) (overall: all \(totalOperations) operations, total time on Foundation / total time on the engine)"
)
