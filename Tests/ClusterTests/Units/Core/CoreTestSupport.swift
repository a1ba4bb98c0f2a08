import Wire
import XCTest

@testable import Cluster

/// Drives a `CoordinatorCore` event by event, with a clock of its own, and reads its effects.
struct CoreDriver {
    var core: CoordinatorCore
    var now = ContinuousClock.now
    var wallClock: UInt64 = 1_800_000_000_000
    /// Every effect so far, in order.
    private(set) var log: [CoreEffect] = []

    init(
        maxBatchesPerClient: Int = ClusterDefaults.maxBatchesPerClient, maxDownloadsPerHost: Int = 6,
        scheduling: SchedulingPolicy = .fairShare, incarnation: UInt32 = 1, keepsResults: Bool = false,
        taskTimeout: Duration = CoordinatorConfiguration.defaultTaskTimeout
    ) {
        let dispatcher = Dispatcher(
            heartbeatInterval: .seconds(1), workerTimeout: .seconds(5), coordinatorID: "c-test",
            scheduling: scheduling)
        var limits = BatchRegistry.Limits(maxBatchItems: 1_000, maxPendingItemsPerClient: 10_000)
        limits.maxBatchesPerClient = maxBatchesPerClient
        let registry = BatchRegistry(limits: limits, keepsResults: keepsResults)
        core = CoordinatorCore(
            dispatcher: dispatcher, registry: registry,
            settings: CoordinatorCore.Settings(
                maxDownloadsPerHost: maxDownloadsPerHost, scheduling: scheduling, incarnation: incarnation,
                taskTimeout: taskTimeout))
    }

    /// Hands the core one event; returns its effects.
    @discardableResult
    /// A record a decision waits for (`CoreEffect.recordDurably`) is recorded, as by an actor whose journal
    /// takes it, unless `journalRefuses`; the core's answer to that comes after it in the effects returned.
    mutating func handle(_ event: CoreEvent, journalRefuses: Bool = false) -> [CoreEffect] {
        var effects = core.handle(event, now: now, wallClockMilliseconds: wallClock)
        for case .recordDurably(_, let decision) in effects {
            let answer: CoreEvent =
                journalRefuses ? .notRecorded(decision, reason: "the disk is full") : .recorded(decision)
            effects += core.handle(answer, now: now, wallClockMilliseconds: wallClock)
        }
        log += effects
        return effects
    }

    mutating func advance(_ duration: Duration) {
        now += duration
        wallClock += UInt64(duration.components.seconds * 1_000)
    }
}

enum CoreFixtures {
    static let client = MessageSender(identity: PeerIdentity(Array("client".utf8)), key: nil)
    static let otherClient = MessageSender(identity: PeerIdentity(Array("other".utf8)), key: nil)
    static let w1 = PeerIdentity(Array("w1".utf8))
    static let w2 = PeerIdentity(Array("w2".utf8))

    static func images(
        _ count: Int, host: String = "photos.test", retries: UInt32? = 0, deadline: UInt32 = 0
    ) -> SubmitBatch {
        SubmitBatch(
            requestID: "r",
            items: (0..<count).map { BatchItem(source: "http://\(host)/\($0).jpg", outputName: "o\($0)") },
            retries: retries, deadlineSeconds: deadline)
    }

    static func noops(_ count: Int, retries: UInt32? = 0) -> SubmitBatch {
        SubmitBatch(
            requestID: "r", items: (0..<count).map { BatchItem(source: "noop:\($0)", outputName: "o\($0)") },
            kind: .noop, retries: retries)
    }

    static let image = TaskOutput(heldOnWorker: true, size: 1_000, mediaType: "image/jpeg")
    static let filtered = TaskOutput(data: [1, 2, 3], mediaType: "image/png", width: 2, height: 2)
}

extension [CoreEffect] {
    var sent: [Outbound] {
        flatMap { effect -> [Outbound] in
            guard case .send(let out) = effect else { return [] }
            return out
        }
    }

    var journaled: [JournalEntry] {
        compactMap { effect -> JournalEntry? in
            switch effect {
            case .journal(let entry), .recordDurably(let entry, _): entry
            default: nil
            }
        }
    }

    var timers: [(Duration, CoreTimer)] {
        compactMap { effect -> (Duration, CoreTimer)? in
            guard case .setTimer(let wait, let timer) = effect else { return nil }
            return (wait, timer)
        }
    }

    /// The codes of the failed attempts journaled.
    var failedAttemptCodes: [FailureCode] {
        journaled.compactMap { entry -> FailureCode? in
            guard case .attemptFailed(_, _, let attempt) = entry else { return nil }
            return attempt.code
        }
    }

    /// The assignments sent, to `peer` if given.
    func assignments(to peer: PeerIdentity? = nil) -> [TaskAssignment] {
        sent.filter { peer == nil || $0.peer == peer }.compactMap { outbound -> TaskAssignment? in
            guard case .taskAssignment(let assignment) = outbound.message else { return nil }
            return assignment
        }
    }

    var finishedItems: [ItemFinished] {
        sent.compactMap { outbound -> ItemFinished? in
            guard case .itemFinished(let item) = outbound.message else { return nil }
            return item
        }
    }

    var batchesFinished: [BatchFinished] {
        sent.compactMap { outbound -> BatchFinished? in
            guard case .batchFinished(let summary) = outbound.message else { return nil }
            return summary
        }
    }

    /// The position of the first effect matching `predicate`.
    func position(_ predicate: (CoreEffect) -> Bool) -> Int? { firstIndex(where: predicate) }
}

extension TaskResult {
    static func success(_ assignment: TaskAssignment, _ output: TaskOutput) -> TaskResult {
        TaskResult(
            taskID: assignment.taskID, attempt: assignment.attempt, outcome: .output(output),
            taskKey: assignment.taskKey)
    }

    static func failure(_ assignment: TaskAssignment, _ failure: TaskFailure) -> TaskResult {
        TaskResult(
            taskID: assignment.taskID, attempt: assignment.attempt, outcome: .failure(failure),
            taskKey: assignment.taskKey)
    }
}
