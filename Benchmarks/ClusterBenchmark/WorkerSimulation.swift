import Cluster
import ClusterSimulation
import Foundation

/// The simulation mode: many light simulated workers (`SimulatedWorkerGroup`) in this process against
/// one real coordinator, whose CPU time and memory are read from /proc: no-op tasks, or (with `photos`)
/// a batch of photo URLs submitted as `shiftwork submit --sink DIR` does, each a download and a tilt-shift
/// answered with a 12-megapixel photo's metadata.
struct WorkerSimulation {
    var endpoint: String
    var workers: Int
    var slots: Int
    var threads: Int
    var taskDelay: Duration
    var idleSeconds: Int
    var tasks: Int
    var batchSize: Int
    var warmup: Int
    var coordinatorPID: Int32
    /// Photo mode: this many items `ORIGIN/photo-N.jpg` (0: no-op tasks).
    var photos = 0
    /// The origin of the photo URLs. Nothing needs to serve them: the simulated workers do not download.
    var photoOrigin = "http://127.0.0.1:9"
    /// The batch's directory sink (`submit --sink DIR`, an absolute path); the simulated workers write nothing into it.
    var photoSink = ""
    /// How the simulated workers take a photo's chained tilt-shift (a real worker's default: announced).
    var photoChaining = PhotoChaining.on

    /// Connects the workers, measures heartbeats while idle, runs the no-op tasks, prints the figures.
    func run(_ client: ClusterClient) async throws {
        try raiseOpenFileLimit(to: rlim_t(workers) * 2 + 256)
        guard let address = ZMTPConnection.address(of: endpoint) else {
            throw SimulationError(
                "simulated workers connect to a tcp://A.B.C.D:PORT endpoint (an IPv4 address), not \(endpoint)")
        }
        let counters = SimulationCounters()
        let initial = try ProcessFigures.read(pid: coordinatorPID)
        let threadCount = max(1, min(threads, workers))
        var groups: [SimulatedWorkerGroup] = []
        for thread in 0..<threadCount {
            let numbers = (workers * thread / threadCount)..<(workers * (thread + 1) / threadCount)
            let group = SimulatedWorkerGroup(
                address: address, numbers: numbers, prefix: "sim-\(getpid())",
                slots: slots, taskDelay: taskDelay, photos: SimulatedPhotoWorker(chaining: photoChaining),
                counters: counters)
            groups.append(group)
            let body = Thread {
                group.run()
                counters.finishedThreads.add(1, ordering: .releasing)
            }
            body.name = "simulated workers \(thread)"
            body.start()
        }
        let kindText =
            photos > 0 ? "photo tasks (12 MP, sink \(photoSink), chaining \(photoChaining.rawValue))" : "no-op tasks"
        let delayText = taskDelay == .zero ? "\(kindText) answered at once" : "\(kindText) answered after \(taskDelay)"
        print(
            "simulation: \(workers) simulated workers × \(slots) slots on \(threadCount) threads (each worker a TCP "
                + "connection speaking ZMTP 3.1 as a DEALER), \(delayText); coordinator pid \(coordinatorPID) on \(endpoint)"
        )
        do {
            try await measure(client, counters: counters, initial: initial, groups: groups)
        } catch {
            await stop(counters, threadCount)
            throw error
        }
        await stop(counters, threadCount)
        let answered = groups.flatMap(\.tasksAnswered).sorted()
        if let least = answered.first, let most = answered.last {
            print(
                "tasks per simulated worker (warm-up included): min \(least), median \(answered[answered.count / 2]), max \(most); "
                    + "\(answered.filter { $0 == 0 }.count) workers got none")
        }
        print(
            "simulated workers: \(counters.hellos.load(ordering: .relaxed)) hellos, \(counters.welcomes.load(ordering: .relaxed)) welcomes, "
                + "\(counters.refusals.load(ordering: .relaxed)) refusals, \(counters.malformed.load(ordering: .relaxed)) malformed, "
                + "\(counters.connectionFailures.load(ordering: .relaxed)) connections refused or lost")
        if photos > 0 {
            // Tasks sent twice, as the simulated workers saw them: the same key received again, by any worker,
            // with a new attempt (a retry) or the same one (sent again without a failure in between).
            var attempts: [UInt64: [UInt32]] = [:]
            for group in groups { attempts.merge(group.attemptsPerTask) { $0 + $1 } }
            let twice = attempts.values.filter { $0.count > 1 }
            let sameAttempt = twice.filter { Set($0).count < $0.count }.count
            print(
                "tasks received more than once by the simulated workers (warm-up included): \(twice.count) of \(attempts.count) "
                    + "(\(sameAttempt) with the same attempt again)")
            print(
                "simulated photo answers (warm-up included): \(counters.downloadsAnswered.load(ordering: .relaxed)) downloads held, "
                    + "\(counters.tiltShiftsAnswered.load(ordering: .relaxed)) tilt-shifts, \(counters.failedAnswers.load(ordering: .relaxed)) failures; "
                    + "\(counters.assignments.load(ordering: .relaxed)) assignments received (one a photo when its tilt-shift is chained)"
            )
        }
    }

    /// The CPU time of the simulated workers' threads (`groups`), in seconds.
    private func simulatorCPUSeconds(_ groups: [SimulatedWorkerGroup]) throws -> Double {
        try groups.reduce(0) { $0 + (try ProcessFigures.threadCPUSeconds(tid: $1.threadID.load(ordering: .acquiring))) }
    }

    /// "simulator X µs + client Y µs per UNIT": this process's CPU over a span split between the simulated
    /// workers' threads and the rest (the client: its Swift tasks and its ZeroMQ socket's threads).
    private func split(ownCPU: Double, simulatorCPU: Double, per count: Int, _ unit: String) -> String {
        let simulator = simulatorCPU / Double(max(count, 1)) * 1e6
        let client = (ownCPU - simulatorCPU) / Double(max(count, 1)) * 1e6
        return "simulator + client CPU per \(unit): \(format(ownCPU / Double(max(count, 1)) * 1e6, 2)) µs "
            + "(simulator \(format(simulator, 2)) µs, client \(format(client, 2)) µs)"
    }

    private func measure(
        _ client: ClusterClient, counters: SimulationCounters, initial: ProcessFigures,
        groups: [SimulatedWorkerGroup]
    ) async throws {
        let clock = ContinuousClock()
        let connecting = clock.now
        var registered = 0
        for _ in 0..<1200 {
            registered = try await client.status().workers.count
            if registered >= workers { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        guard registered >= workers else {
            throw SimulationError("\(registered) of \(workers) simulated workers registered within 120 s")
        }
        print("registered: \(workers) workers in \(format(seconds(clock.now - connecting), 2)) s")

        // Heartbeats alone: the coordinator's CPU while every worker is idle and heartbeating.
        let idleStart = try ProcessFigures.read(pid: coordinatorPID)
        let heartbeatsBefore = counters.heartbeats.load(ordering: .relaxed)
        let refusalsBefore = counters.refusals.load(ordering: .relaxed)
        let idleClock = clock.now
        try await Task.sleep(for: .seconds(idleSeconds))
        let idleElapsed = seconds(clock.now - idleClock)
        let idleEnd = try ProcessFigures.read(pid: coordinatorPID)
        let heartbeats = counters.heartbeats.load(ordering: .relaxed) - heartbeatsBefore
        let idleCPU = idleEnd.cpuSeconds - idleStart.cpuSeconds
        let stillRegistered = try await client.status().workers.count
        print(
            "heartbeats: \(Int((Double(heartbeats) / idleElapsed).rounded()))/s over \(format(idleElapsed, 1)) s idle; "
                + "coordinator CPU \(format(idleCPU / idleElapsed * 100, 1)) % of a core, "
                + "\(format(idleCPU / Double(max(heartbeats, 1)) * 1e6, 1)) µs per heartbeat; "
                + "\(stillRegistered) workers registered after, \(counters.refusals.load(ordering: .relaxed) - refusalsBefore) refusals"
        )

        if photos > 0 {
            try await measurePhotos(
                client, counters: counters, idleCPUPerHeartbeat: idleCPU / Double(max(heartbeats, 1)), groups: groups)
        } else if tasks > 0 {
            if warmup > 0 { _ = try await throughput(client, tasks: warmup, batchSize: batchSize) }
            print("load average before: \(Self.loadAverage())")
            let before = try ProcessFigures.read(pid: coordinatorPID)
            let ownBefore = ProcessFigures.ownCPUSeconds()
            let simulatorBefore = try simulatorCPUSeconds(groups)
            let heartbeatsAtStart = counters.heartbeats.load(ordering: .relaxed)
            let (elapsed, succeeded) = try await throughput(client, tasks: tasks, batchSize: batchSize)
            let after = try ProcessFigures.read(pid: coordinatorPID)
            let ownCPU = ProcessFigures.ownCPUSeconds() - ownBefore
            let simulatorCPU = try simulatorCPUSeconds(groups) - simulatorBefore
            print("load average after: \(Self.loadAverage())")
            if succeeded != tasks {
                // Reported, not fatal: the figures still stand, and the failures are a finding (see stderr for why).
                print(
                    "FAILED TASKS: \(tasks - succeeded) of \(tasks) no-op tasks did not succeed (the first failure of each batch is on stderr)"
                )
            }
            let cpu = after.cpuSeconds - before.cpuSeconds
            let heartbeatsDuring = counters.heartbeats.load(ordering: .relaxed) - heartbeatsAtStart
            let batches = (tasks + batchSize - 1) / batchSize
            print(
                "simulation no-op tasks: \(tasks) in \(batches) batches of up to \(batchSize), \(format(elapsed, 3)) s, "
                    + "\(heartbeatsDuring) heartbeats meanwhile")
            print("simulation throughput: \(Int((Double(tasks) / elapsed).rounded())) tasks/s with \(workers) workers")
            print(
                "coordinator CPU per task: \(format(cpu / Double(tasks) * 1e6, 2)) µs "
                    + "(\(format(cpu, 2)) s CPU, \(format(cpu / elapsed * 100, 0)) % of a core during the run); "
                    + split(ownCPU: ownCPU, simulatorCPU: simulatorCPU, per: tasks, "task"))
            let registeredAfter = try await client.status().workers.count
            print("workers registered after the run: \(registeredAfter) of \(workers)")
        }
        let final = try ProcessFigures.read(pid: coordinatorPID)
        print(
            "coordinator RSS: \(initial.residentBytes >> 10) KiB before the workers, \(idleStart.residentBytes >> 10) KiB with "
                + "\(workers) registered, \(final.residentBytes >> 10) KiB at the end, peak \(final.peakResidentBytes >> 10) KiB; "
                + "\((idleStart.residentBytes - initial.residentBytes) / max(workers, 1)) bytes per registered worker")
    }

    /// The photo batches: `batchSize` photos each, all submitted at once, after a warm-up batch of
    /// `warmup` photos (at most a tenth of them); prints photos/s and the coordinator's CPU per photo and per task.
    private func measurePhotos(
        _ client: ClusterClient, counters: SimulationCounters, idleCPUPerHeartbeat: Double,
        groups: [SimulatedWorkerGroup]
    ) async throws {
        let warmupPhotos = min(warmup, photos / 10)
        if warmupPhotos > 0 { _ = try await photoBatches(client, range: 0..<warmupPhotos) }
        print("load average before: \(Self.loadAverage())")
        let before = try ProcessFigures.read(pid: coordinatorPID)
        let ownBefore = ProcessFigures.ownCPUSeconds()
        let simulatorBefore = try simulatorCPUSeconds(groups)
        let heartbeatsAtStart = counters.heartbeats.load(ordering: .relaxed)
        let tasksAtStart = counters.results.load(ordering: .relaxed)
        let clock = ContinuousClock()
        let start = clock.now
        let (succeeded, inSink) = try await photoBatches(client, range: warmupPhotos..<(warmupPhotos + photos))
        let elapsed = seconds(clock.now - start)
        let after = try ProcessFigures.read(pid: coordinatorPID)
        let ownCPU = ProcessFigures.ownCPUSeconds() - ownBefore
        let simulatorCPU = try simulatorCPUSeconds(groups) - simulatorBefore
        print("load average after: \(Self.loadAverage())")
        let cpu = after.cpuSeconds - before.cpuSeconds
        let heartbeatsDuring = counters.heartbeats.load(ordering: .relaxed) - heartbeatsAtStart
        let tasksDone = counters.results.load(ordering: .relaxed) - tasksAtStart
        let batches = (photos + batchSize - 1) / batchSize
        if succeeded != photos {
            print(
                "FAILED PHOTOS: \(photos - succeeded) of \(photos) photos did not succeed (the first failure of each batch is on stderr)"
            )
        }
        print(
            "simulation photos: \(photos) photos in \(batches) batches of up to \(batchSize), \(format(elapsed, 3)) s, "
                + "\(tasksDone) tasks answered, \(heartbeatsDuring) heartbeats meanwhile; \(succeeded) succeeded, "
                + "\(inSink) reported in the sink by the client")
        print(
            "simulation photo throughput: \(format(Double(photos) / elapsed, 0)) photos/s "
                + "(\(format(Double(tasksDone) / elapsed, 0)) tasks/s) with \(workers) workers × \(slots) slots")
        let heartbeatCPU = idleCPUPerHeartbeat * Double(heartbeatsDuring)
        print(
            "coordinator CPU per photo: \(format(cpu / Double(photos) * 1e6, 2)) µs "
                + "(\(format((cpu - heartbeatCPU) / Double(photos) * 1e6, 2)) µs net of heartbeats at their idle cost; "
                + "per task \(format(cpu / Double(max(tasksDone, 1)) * 1e6, 2)) µs; \(format(cpu, 2)) s CPU, "
                + "\(format(cpu / elapsed * 100, 0)) % of a core during the run); "
                + split(ownCPU: ownCPU, simulatorCPU: simulatorCPU, per: photos, "photo"))
        let registeredAfter = try await client.status().workers.count
        print("workers registered after the run: \(registeredAfter) of \(workers)")
    }

    /// Submits the photos `range` as batches of `batchSize`, all at once, as `shiftwork submit` does
    /// (`BatchSubmission`, with the sink); returns the photos that succeeded and those the client was told
    /// are in the sink.
    private func photoBatches(_ client: ClusterClient, range: Range<Int>) async throws -> (Int, Int) {
        var submissions: [BatchSubmission] = []
        for first in stride(from: range.lowerBound, to: range.upperBound, by: batchSize) {
            let inputs = (first..<min(first + batchSize, range.upperBound)).map { "\(photoOrigin)/photo-\($0).jpg" }
            // With a sink the client writes no file: the output directory is never created.
            var submission = BatchSubmission(inputs: inputs, outputDirectory: URL(fileURLWithPath: photoSink))
            submission.sink = photoSink
            submissions.append(submission)
        }
        return try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for submission in submissions {
                group.addTask {
                    let summary = try await submission.run(with: client)
                    if let failed = summary.items.first(where: { $0.error != nil }) {
                        FileHandle.standardError.write(
                            Data("ClusterBenchmark: photo \(failed.source) failed: \(failed.error ?? "")\n".utf8))
                    }
                    return (summary.succeeded, summary.items.filter(\.inSink).count)
                }
            }
            return try await group.reduce((0, 0)) { ($0.0 + $1.0, $0.1 + $1.1) }
        }
    }

    /// The 1-, 5- and 15-minute load averages, from /proc/loadavg.
    static func loadAverage() -> String {
        guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return "unknown" }
        return text.split(separator: " ").prefix(3).joined(separator: " ")
    }

    private func stop(_ counters: SimulationCounters, _ threads: Int) async {
        counters.stop.store(true, ordering: .relaxed)
        while counters.finishedThreads.load(ordering: .acquiring) < threads {
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Raises this process's soft limit on open files to `wanted` (at most the hard limit): each simulated
    /// worker holds a TCP connection. Says so when it changes the limit.
    private func raiseOpenFileLimit(to wanted: rlim_t) throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        guard limit.rlim_cur < wanted else { return }
        guard limit.rlim_max >= wanted else {
            throw SimulationError(
                "\(workers) workers need about \(wanted) open files; the hard limit is \(limit.rlim_max): raise it (ulimit -Hn)"
            )
        }
        let old = limit.rlim_cur
        limit.rlim_cur = wanted
        guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else {
            throw SimulationError("cannot raise the open-file limit to \(wanted): \(String(cString: strerror(errno)))")
        }
        print("open-file limit raised from \(old) to \(wanted)")
    }
}
