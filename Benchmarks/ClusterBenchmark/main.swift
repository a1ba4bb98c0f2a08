// The cluster benchmark: no-op tasks through a running coordinator and its workers, over ZeroMQ.
//
// A measurement, never a test: `scripts/bench-cluster` starts a coordinator and workers on loopback,
// runs this program against them, and compares with Dask. Figures go to docs/benchmarks.md ("Cluster").
//
//   ClusterBenchmark --coordinator tcp://127.0.0.1:5590 [--tasks 100000] [--batch-size 25000]
//                    [--latency-rounds 2000] [--warmup 2000]
//   ClusterBenchmark --coordinator tcp://127.0.0.1:5591 --memory-tasks 1000000 --coordinator-pid PID
//   ClusterBenchmark --coordinator tcp://127.0.0.1:5593 --behind 10000 --small 10 --label fair
//   ClusterBenchmark --coordinator tcp://127.0.0.1:5592 --soak-batches 2000 --soak-batch-size 5000 \
//                    --coordinator-pid PID [--soak-cancel] [--soak-every 100] [--soak-settle 10]
//   ClusterBenchmark --coordinator tcp://127.0.0.1:5593 --cancel-rounds 20 --cancel-side 8000 --expect-workers 2
//                    (workers started with --allow-local-files on this machine)
//   ClusterBenchmark --coordinator tcp://127.0.0.1:5593 --simulate-workers 1000 --coordinator-pid PID \
//                    [--simulated-slots 4] [--simulation-threads 4] [--task-delay-ms 0] \
//                    [--idle-seconds 5] [--tasks 200000] [--batch-size 25000]
//                    [--photos 100000 --photo-sink DIR [--photo-origin http://127.0.0.1:PORT]]
//
// Modes:
// - throughput (default when --tasks > 0): `--tasks` no-op tasks as batches of `--batch-size`, all
//   submitted at once; the clock runs from the first submit to the last `BatchFinished`. With
//   --coordinator-pid, also the coordinator's CPU time per task (/proc/PID/stat).
// - latency (when --latency-rounds > 0): single-task batches, one at a time; each round trip runs from
//   `submit` to its `ItemFinished`. Prints p50, p99 and the mean.
// - memory (when --memory-tasks > 0, against a coordinator with no workers): reads the coordinator's
//   VmRSS from /proc/PID/status, submits the tasks, waits until its queue settles,
//   reads VmRSS again and prints the growth per queued task.
// - behind (when --behind > 0): a no-op batch of `--behind` tasks from one client; once its first
//   result is in, a batch of `--small` tasks from a second client. Prints the small batch's time to its
//   first result and to its end, and the large batch's end, from the small batch's submit (run against a
//   coordinator with `--scheduling fifo` and one with `--scheduling fair` to compare).
// - soak (when --soak-batches > 0): runs batches one after another through the coordinator and prints
//   its VmRSS every `--soak-every` batches, then again after `--soak-settle` seconds of idleness (long
//   enough for `--keep-finished-for` to retire what is left). With workers, no-op batches run to their
//   end; with `--soak-cancel` (no workers needed), each batch is cancelled as soon as it is accepted.
// - cancel latency (when --cancel-rounds > 0): writes a `--cancel-side`² JPEG to a temporary file, then
//   per round submits as many copies as the cluster has slots, waits until every slot is taken and one
//   more second (the local read is done, the slots filter), cancels the batch and polls status until no
//   task runs: the time from sending `CancelBatch` to every slot free (each cancel confirmed by its
//   worker). Prints p50, p99 and the maximum.
// - simulation (when --simulate-workers > 0, against a coordinator with no other workers): connects that
//   many simulated workers from this process (`SimulatedWorkerGroup`: each a TCP connection speaking
//   ZMTP 3.1 as a DEALER itself, driven by `--simulation-threads` threads with epoll, each connection owned
//   by one thread), waits until all are registered, measures the coordinator's CPU for heartbeats alone
//   over `--idle-seconds`, then runs the throughput mode's no-op tasks through them and prints tasks/s, the
//   coordinator's CPU per task (from /proc/PID/stat), the simulator's and the client's CPU per task (this
//   process's threads, from /proc/self/task) and its RSS. `--task-delay-ms` makes each simulated task take
//   that long (a chained tilt-shift that long again after its download).
//   With `--photos N`, instead of no-op tasks: N photo URLs (`--photo-origin`/photo-I.jpg; nothing serves
//   them, the simulated workers do not fetch) submitted as `shiftwork submit --sink DIR` submits them
//   (`BatchSubmission` with `--photo-sink`; the simulated workers write nothing there) in batches of
//   `--batch-size`, all at once; each photo is a download answered as held on the worker and a tilt-shift
//   answered with the sink output's metadata, as a real worker answers for a 12 MP photo
//   (`ClusterSimulation.SimulatedPhotoWorker`). `--photo-chaining on` (the default, as a real worker)
//   announces chained tasks, so the coordinator sends each download with its tilt-shift attached and the
//   worker answers both, each result its own message; `together` sends both in one message; `off` does not
//   announce them (the two-step flow). Prints photos/s, the coordinator's CPU per photo and per task, and
//   the load average.
import Cluster
import ClusterSimulation
import Foundation
import Imaging
import Messaging
import Wire

struct Arguments {
    var coordinator = "tcp://127.0.0.1:5570"
    var tasks = 100_000
    var batchSize = 25_000
    var latencyRounds = 2_000
    var warmup = 2_000
    var memoryTasks = 0
    var memoryBatchSize = 100_000
    var coordinatorPID: Int32 = 0
    var expectWorkers = 0
    var soakBatches = 0
    var soakBatchSize = 5_000
    var soakEvery = 100
    var soakSettle = 0
    var soakCancel = false
    var cancelRounds = 0
    var cancelSide = 8_000
    var simulateWorkers = 0
    var simulatedSlots = 4
    var simulationThreads = 4
    var taskDelayMs = 0
    var idleSeconds = 5
    var behind = 0
    var photos = 0
    var photoSink = ""
    var photoOrigin = "http://127.0.0.1:9"
    var photoChaining = PhotoChaining.on
    var small = 10
    var label = ""

    static let usage = """
        usage: ClusterBenchmark --coordinator ENDPOINT [--tasks N] [--batch-size N] [--latency-rounds N]
                                [--warmup N] [--expect-workers N]
                                [--memory-tasks N --coordinator-pid PID [--memory-batch-size N]]
                                [--soak-batches N --coordinator-pid PID [--soak-batch-size N] [--soak-every N]
                                 [--soak-settle SECONDS] [--soak-cancel]]
                                [--cancel-rounds N [--cancel-side PIXELS]]
                                [--simulate-workers N --coordinator-pid PID [--simulated-slots N]
                                 [--simulation-threads N] [--task-delay-ms N] [--idle-seconds N]
                                 [--photos N --photo-sink DIR [--photo-origin URL] [--photo-chaining off|on|together]]]
                                [--behind N [--small N] [--label TEXT]]
        """

    init(_ argv: [String]) {
        var index = 1
        func value(_ name: String) -> String {
            index += 1
            guard index < argv.count else { Self.fail("\(name) needs a value") }
            return argv[index]
        }
        func number(_ name: String) -> Int {
            let text = value(name).replacingOccurrences(of: "_", with: "")
            guard let n = Int(text), n >= 0 else { Self.fail("\(name) needs a non-negative integer, not \(text)") }
            return n
        }
        while index < argv.count {
            switch argv[index] {
            case "--coordinator": coordinator = value("--coordinator")
            case "--tasks": tasks = number("--tasks")
            case "--batch-size": batchSize = max(1, number("--batch-size"))
            case "--latency-rounds": latencyRounds = number("--latency-rounds")
            case "--warmup": warmup = number("--warmup")
            case "--memory-tasks": memoryTasks = number("--memory-tasks")
            case "--memory-batch-size": memoryBatchSize = max(1, number("--memory-batch-size"))
            case "--coordinator-pid": coordinatorPID = Int32(number("--coordinator-pid"))
            case "--expect-workers": expectWorkers = number("--expect-workers")
            case "--soak-batches": soakBatches = number("--soak-batches")
            case "--soak-batch-size": soakBatchSize = max(1, number("--soak-batch-size"))
            case "--soak-every": soakEvery = max(1, number("--soak-every"))
            case "--soak-settle": soakSettle = number("--soak-settle")
            case "--soak-cancel": soakCancel = true
            case "--cancel-rounds": cancelRounds = number("--cancel-rounds")
            case "--cancel-side": cancelSide = max(16, number("--cancel-side"))
            case "--simulate-workers": simulateWorkers = number("--simulate-workers")
            case "--simulated-slots": simulatedSlots = max(1, number("--simulated-slots"))
            case "--simulation-threads": simulationThreads = max(1, number("--simulation-threads"))
            case "--task-delay-ms": taskDelayMs = number("--task-delay-ms")
            case "--idle-seconds": idleSeconds = number("--idle-seconds")
            case "--behind": behind = number("--behind")
            case "--small": small = max(1, number("--small"))
            case "--label": label = value("--label")
            case "--photos": photos = number("--photos")
            case "--photo-sink": photoSink = value("--photo-sink")
            case "--photo-origin": photoOrigin = value("--photo-origin")
            case "--photo-chaining":
                let text = value("--photo-chaining")
                guard let chaining = PhotoChaining(named: text) else {
                    Self.fail("--photo-chaining takes off, on or together (as SHIFTWORK_CHAINED_TASKS), not \(text)")
                }
                photoChaining = chaining
            case "-h", "--help":
                print(Self.usage)
                exit(0)
            default: Self.fail("unknown argument \(argv[index])")
            }
            index += 1
        }
        if memoryTasks > 0 && coordinatorPID <= 0 { Self.fail("--memory-tasks needs --coordinator-pid") }
        if soakBatches > 0 && coordinatorPID <= 0 { Self.fail("--soak-batches needs --coordinator-pid") }
        if simulateWorkers > 0 && coordinatorPID <= 0 { Self.fail("--simulate-workers needs --coordinator-pid") }
        if photos > 0 && simulateWorkers == 0 { Self.fail("--photos needs --simulate-workers") }
        if photos > 0 && !photoSink.hasPrefix("/") {
            Self.fail(
                "--photo-sink needs an absolute directory path (the simulated workers write only to directory sinks), not \(photoSink)"
            )
        }
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("ClusterBenchmark: \(message)\n\(usage)\n".utf8))
        exit(2)
    }
}

struct BenchmarkError: Error, CustomStringConvertible {
    let description: String
}

func noopBatch(_ count: Int) -> SubmitBatch {
    SubmitBatch(requestID: "", items: [BatchItem](repeating: BatchItem(source: "noop"), count: count), kind: .noop)
}

/// Runs one batch to its end; returns how many items succeeded.
func runBatch(_ client: ClusterClient, _ batch: SubmitBatch) async throws -> Int {
    var succeeded = 0
    var items = 0
    for try await event in await client.submit(batch) {
        switch event {
        case .accepted, .attached, .retrying, .itemsAdded: break
        case .itemFinished(let item):
            items += 1
            reportFirstFailure([item])
        case .itemsFinished(let group):
            items += group.count
            reportFirstFailure(group)
        case .finished(let finished):
            succeeded = Int(finished.succeeded)
            guard items == batch.items.count else {
                throw BenchmarkError(
                    description: "batch \(finished.batchID): \(items) ItemFinished for \(batch.items.count) items")
            }
        }
    }
    return succeeded
}

/// Prints the first failed item's failure of a batch run, so that a run with failures says why.
func reportFirstFailure(_ items: [ItemFinished]) {
    for item in items {
        if case .failure(let failure) = item.outcome {
            FileHandle.standardError.write(
                Data(
                    "ClusterBenchmark: item \(item.itemIndex) of \(item.batchID) failed: \(failure.code) \(failure.message)\n"
                        .utf8))
            return
        }
    }
}

/// All batches at once; returns (seconds, succeeded).
func throughput(_ client: ClusterClient, tasks: Int, batchSize: Int) async throws -> (Double, Int) {
    var sizes: [Int] = []
    var left = tasks
    while left > 0 {
        sizes.append(min(batchSize, left))
        left -= sizes.last!
    }
    let batches = sizes.map(noopBatch)  // built before the clock starts
    let clock = ContinuousClock()
    let start = clock.now
    let succeeded = try await withThrowingTaskGroup(of: Int.self) { group in
        for batch in batches { group.addTask { try await runBatch(client, batch) } }
        return try await group.reduce(0, +)
    }
    let elapsed = clock.now - start
    return (seconds(elapsed), succeeded)
}

/// Single-task batches one at a time; returns the round trips in seconds (submit → ItemFinished).
func latency(_ client: ClusterClient, rounds: Int) async throws -> [Double] {
    var samples: [Double] = []
    samples.reserveCapacity(rounds)
    let clock = ContinuousClock()
    let batch = noopBatch(1)
    for _ in 0..<rounds {
        let start = clock.now
        var sample: Double?
        for try await event in await client.submit(batch) {
            if case .itemFinished = event, sample == nil { sample = seconds(clock.now - start) }
        }
        guard let sample else {
            throw BenchmarkError(description: "a single-task batch ended without its ItemFinished")
        }
        samples.append(sample)
    }
    return samples
}

/// A small batch from a second client behind a large one that runs: the small batch's time to its first
/// result and to its end, and the large one's end, from the small batch's submit.
func behind(_ endpoint: String, large: Int, small: Int, label: String) async throws {
    try await ClusterClient.withConnection(endpoint: endpoint, responseTimeout: .seconds(30)) { bigClient in
        try await ClusterClient.withConnection(endpoint: endpoint, responseTimeout: .seconds(30)) { smallClient in
            try await behind(bigClient, smallClient, large: large, small: small, label: label)
        }
    }
}

/// `behind` with its two clients.
func behind(
    _ bigClient: ClusterClient, _ smallClient: ClusterClient, large: Int, small: Int, label: String
) async throws {
    let running = AsyncStream<Void>.makeStream()
    let bigDone = Task { () throws -> ContinuousClock.Instant in
        var signalled = false
        for try await event in await bigClient.submit(noopBatch(large)) {
            switch event {
            case .itemFinished, .itemsFinished:
                if !signalled {
                    running.continuation.yield()
                    signalled = true
                }
            case .finished: return .now
            case .accepted, .attached, .retrying, .itemsAdded: break
            }
        }
        throw BenchmarkError(description: "the large batch did not finish")
    }
    for await _ in running.stream { break }
    let start = ContinuousClock.now
    var first: ContinuousClock.Instant?
    var end: ContinuousClock.Instant?
    for try await event in await smallClient.submit(noopBatch(small)) {
        switch event {
        case .itemFinished, .itemsFinished: if first == nil { first = .now }
        case .finished: end = .now
        case .accepted, .attached, .retrying, .itemsAdded: break
        }
    }
    let bigEnd = try await bigDone.value
    guard let first, let end else { throw BenchmarkError(description: "the small batch did not finish") }
    print(
        "shiftwork behind \(label): \(small)-task batch behind a running \(large)-task batch: first result "
            + "\(format(seconds(first - start) * 1000, 1)) ms, done \(format(seconds(end - start) * 1000, 1)) ms; "
            + "large batch done \(format(seconds(bigEnd - start) * 1000, 1)) ms after the small submit")
}

func seconds(_ duration: Duration) -> Double {
    let parts = duration.components
    return Double(parts.seconds) + Double(parts.attoseconds) / 1e18
}

func percentile(_ sorted: [Double], _ p: Double) -> Double {
    guard !sorted.isEmpty else { return .nan }
    let rank = Int((p / 100 * Double(sorted.count)).rounded(.up)) - 1
    return sorted[min(max(rank, 0), sorted.count - 1)]
}

/// VmRSS of a process in bytes, from /proc/PID/status.
func residentBytes(pid: Int32) throws -> Int {
    try ProcessFigures.read(pid: pid).residentBytes
}

/// Submits `tasks` no-op tasks to a coordinator without workers and measures its memory once they are all queued.
func memory(_ client: ClusterClient, tasks: Int, batchSize: Int, pid: Int32) async throws {
    let initial = try await client.status()
    guard initial.workers.isEmpty else {
        throw BenchmarkError(
            description: "the memory measurement needs a coordinator without workers; it has \(initial.workers.count)")
    }
    let before = try residentBytes(pid: pid)
    let clock = ContinuousClock()
    let start = clock.now
    var accepted = 0
    var left = tasks
    // The submitted batches' streams stay open (nothing finishes without workers) until the end.
    var streams: [AsyncThrowingStream<BatchEvent, any Error>.Iterator] = []
    while left > 0 {
        let size = min(batchSize, left)
        left -= size
        var iterator = await client.submit(noopBatch(size)).makeAsyncIterator()
        guard case .accepted(_, let count)? = try await iterator.next() else {
            throw BenchmarkError(description: "a batch was not accepted")
        }
        accepted += count
        streams.append(iterator)
    }
    let acceptedAfter = seconds(clock.now - start)
    let atAcceptance = try residentBytes(pid: pid)
    // Acceptance answers before the engine has started the tasks. A batch starts at most a few thousand
    // of its tasks (they enter the dispatcher's queue); the rest wait as operations. Wait until the
    // queue count is stable, then a second for the started ones to settle.
    var queued = -1
    var stablePolls = 0
    for _ in 0..<600 {
        let status = try await client.status()
        let now = Int(status.queuedTasks)
        stablePolls = (now == queued && now > 0) ? stablePolls + 1 : 0
        queued = now
        if stablePolls >= 2 { break }
        try await Task.sleep(for: .milliseconds(500))
    }
    let settledAfter = seconds(clock.now - start)
    try await Task.sleep(for: .seconds(1))
    let after = try residentBytes(pid: pid)
    let perTask = Double(after - before) / Double(max(accepted, 1))
    print(
        "coordinator holds \(accepted) queued tasks (status: \(queued) queued; "
            + "accepted in \(format(acceptedAfter, 2)) s, settled after \(format(settledAfter, 2)) s)")
    print(
        "coordinator RSS before: \(before / 1024) KiB, when the last batch was accepted: \(atAcceptance / 1024) KiB, "
            + "settled: \(after / 1024) KiB")
    print("coordinator memory per queued task: \(Int(perTask.rounded())) bytes")
    if stablePolls < 2 {
        throw BenchmarkError(description: "the coordinator's queue did not settle within 300 s")
    }
    streams.removeAll()
}

/// Runs `batches` batches of `batchSize` no-op items one after another (each cancelled once accepted, with
/// `cancel`) and prints the coordinator's RSS every `every` batches and after `settle` idle seconds.
func soak(
    _ client: ClusterClient, batches: Int, batchSize: Int, every: Int, settle: Int, cancel: Bool, pid: Int32
) async throws {
    let clock = ContinuousClock()
    let start = clock.now
    let before = try residentBytes(pid: pid)
    var peak = before
    func report(_ label: String) throws {
        let rss = try residentBytes(pid: pid)
        peak = max(peak, rss)
        print("soak \(label) t=\(format(seconds(clock.now - start), 1)) s rss=\(rss >> 20) MiB")
        fflush(nil)
    }
    print("soak: \(batches) \(cancel ? "cancelled " : "")batches of \(batchSize) no-op items, one after another")
    try report("batches=0")
    let batch = noopBatch(batchSize)
    for done in 1...batches {
        var items = 0
        var finished: BatchFinished?
        for try await event in await client.submit(batch) {
            switch event {
            case .accepted(let batchID, _):
                if cancel { _ = try await client.cancel(batchID: batchID) }
            case .itemFinished: items += 1
            case .itemsFinished(let group): items += group.count
            case .itemsAdded, .attached, .retrying: break
            case .finished(let summary): finished = summary
            }
        }
        guard let finished, items == batchSize else {
            throw BenchmarkError(description: "batch \(done) ended with \(items) of \(batchSize) items and no summary")
        }
        if !cancel && finished.succeeded != UInt32(batchSize) {
            throw BenchmarkError(
                description: "batch \(done): \(finished.succeeded) of \(batchSize) no-op items succeeded")
        }
        if done % every == 0 || done == batches { try report("batches=\(done)") }
    }
    if settle > 0 {
        try await Task.sleep(for: .seconds(settle))
        try report("settled=\(settle)s")
    }
    let end = try residentBytes(pid: pid)
    print("soak coordinator RSS: start \(before >> 20) MiB, peak \(peak >> 20) MiB, end \(end >> 20) MiB")
}

/// Cancel latency with every slot busy on large images: see the header. Returns the samples in seconds.
func cancelLatency(_ client: ClusterClient, rounds: Int, side: Int) async throws -> [Double] {
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("cancel-bench-\(UUID().uuidString).jpg")
        .path
    try writeLargeJPEG(side: side, to: path)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let slots = Int(try await client.status().workers.reduce(0) { $0 + $1.slots })
    guard slots > 0 else { throw BenchmarkError(description: "the cancel latency needs workers") }
    print(
        "cancel latency: \(rounds) rounds, \(slots) slots busy on \(side)×\(side) JPEGs (\(side * side / 1_000_000) MP)"
    )
    let clock = ContinuousClock()
    var samples: [Double] = []
    let batch = SubmitBatch(requestID: "", items: (0..<slots).map { BatchItem(source: path, outputName: "big-\($0)") })
    for _ in 0..<rounds {
        var events = await client.submit(batch).makeAsyncIterator()
        guard case .accepted(let batchID, _)? = try await events.next() else {
            throw BenchmarkError(description: "the batch was not accepted")
        }
        var busy = false
        for _ in 0..<6_000 where !busy {
            busy = try await client.status().runningTasks >= UInt32(slots)
            if !busy { try await Task.sleep(for: .milliseconds(10)) }
        }
        guard busy else { throw BenchmarkError(description: "the slots did not all fill within 60 s") }
        try await Task.sleep(for: .seconds(1))  // the local reads are done: every slot filters
        let start = clock.now
        _ = try await client.cancel(batchID: batchID)
        while try await client.status().runningTasks > 0 { try await Task.sleep(for: .milliseconds(2)) }
        samples.append(seconds(clock.now - start))
        while try await events.next() != nil {}  // the batch's stream ends with its BatchFinished
    }
    return samples
}

/// A `side`×`side` JPEG with detail everywhere (so every row is real work), written to `path`.
func writeLargeJPEG(side: Int, to path: String) throws {
    var pixels = [UInt8](repeating: 0, count: side * side * 3)
    pixels.withUnsafeMutableBufferPointer { buffer in
        for y in 0..<side {
            for x in 0..<side {
                let base = (y * side + x) * 3
                let value = UInt8(truncatingIfNeeded: (x ^ y) &* 7 &+ (x / 9) &+ (y / 5))
                buffer[base] = value
                buffer[base + 1] = value &+ 60
                buffer[base + 2] = 255 &- value
            }
        }
    }
    let image = try ImageBuffer(width: side, height: side, channels: 3, pixels: pixels)
    let bytes = try ImageCodec.encode(image, as: .jpeg)
    guard FileManager.default.createFile(atPath: path, contents: Data(bytes)) else {
        throw BenchmarkError(description: "could not write \(path)")
    }
}

func format(_ value: Double, _ digits: Int) -> String {
    String(format: "%.\(digits)f", value)
}

let arguments = Arguments(CommandLine.arguments)
do {
    try await ClusterClient.withConnection(endpoint: arguments.coordinator, responseTimeout: .seconds(120)) { client in
        if arguments.expectWorkers > 0 {
            // Wait (at most 30 s) until the workers have registered.
            var workers = 0
            for _ in 0..<300 {
                workers = try await client.status().workers.count
                if workers >= arguments.expectWorkers { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            guard workers >= arguments.expectWorkers else {
                throw BenchmarkError(
                    description: "\(workers) of \(arguments.expectWorkers) workers registered within 30 s")
            }
        }
        if arguments.memoryTasks > 0 {
            try await memory(
                client, tasks: arguments.memoryTasks, batchSize: arguments.memoryBatchSize,
                pid: arguments.coordinatorPID)
        }
        if arguments.soakBatches > 0 {
            try await soak(
                client, batches: arguments.soakBatches, batchSize: arguments.soakBatchSize, every: arguments.soakEvery,
                settle: arguments.soakSettle, cancel: arguments.soakCancel, pid: arguments.coordinatorPID)
        }
        if arguments.behind > 0 {
            try await behind(
                arguments.coordinator, large: arguments.behind, small: arguments.small, label: arguments.label)
        }
        if arguments.simulateWorkers > 0 {
            let simulation = WorkerSimulation(
                endpoint: arguments.coordinator, workers: arguments.simulateWorkers, slots: arguments.simulatedSlots,
                threads: arguments.simulationThreads,
                taskDelay: .milliseconds(arguments.taskDelayMs), idleSeconds: arguments.idleSeconds,
                tasks: arguments.tasks,
                batchSize: arguments.batchSize, warmup: arguments.warmup, coordinatorPID: arguments.coordinatorPID,
                photos: arguments.photos, photoOrigin: arguments.photoOrigin, photoSink: arguments.photoSink,
                photoChaining: arguments.photoChaining)
            try await simulation.run(client)
        } else if arguments.tasks > 0 {
            if arguments.warmup > 0 {
                _ = try await throughput(client, tasks: arguments.warmup, batchSize: arguments.batchSize)
            }
            let cpuBefore =
                arguments.coordinatorPID > 0 ? try ProcessFigures.read(pid: arguments.coordinatorPID).cpuSeconds : 0
            let (elapsed, succeeded) = try await throughput(
                client, tasks: arguments.tasks, batchSize: arguments.batchSize)
            let cpuAfter =
                arguments.coordinatorPID > 0 ? try ProcessFigures.read(pid: arguments.coordinatorPID).cpuSeconds : 0
            guard succeeded == arguments.tasks else {
                throw BenchmarkError(description: "\(succeeded) of \(arguments.tasks) no-op tasks succeeded")
            }
            let batches = (arguments.tasks + arguments.batchSize - 1) / arguments.batchSize
            print(
                "shiftwork no-op tasks: \(arguments.tasks) in \(batches) batches of up to \(arguments.batchSize), \(format(elapsed, 3)) s"
            )
            print("shiftwork no-op throughput: \(Int((Double(arguments.tasks) / elapsed).rounded())) tasks/s")
            if arguments.coordinatorPID > 0 {
                print(
                    "shiftwork coordinator CPU per task: \(format((cpuAfter - cpuBefore) / Double(arguments.tasks) * 1e6, 2)) µs"
                )
            }
        }
        if arguments.cancelRounds > 0 {
            let samples = try await cancelLatency(client, rounds: arguments.cancelRounds, side: arguments.cancelSide)
                .sorted()
            print(
                "shiftwork cancel latency p50: \(format(percentile(samples, 50) * 1000, 1)) ms p99: "
                    + "\(format(percentile(samples, 99) * 1000, 1)) ms max: \(format((samples.last ?? .nan) * 1000, 1)) ms "
                    + "(\(samples.count) cancels, CancelBatch sent → every slot free)")
        }
        if arguments.latencyRounds > 0 {
            _ = try await latency(client, rounds: min(100, arguments.latencyRounds))  // warm-up
            let samples = try await latency(client, rounds: arguments.latencyRounds).sorted()
            let mean = samples.reduce(0, +) / Double(samples.count)
            print(
                "shiftwork no-op latency p50: \(format(percentile(samples, 50) * 1000, 3)) ms p99: \(format(percentile(samples, 99) * 1000, 3)) ms "
                    + "(mean \(format(mean * 1000, 3)) ms, \(samples.count) single-task batches)")
        }
    }
} catch {
    FileHandle.standardError.write(Data("ClusterBenchmark: \(error)\n".utf8))
    exit(1)
}
