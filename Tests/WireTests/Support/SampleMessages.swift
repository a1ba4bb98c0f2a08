import ShiftworkTestSupport
import Wire

/// One message of every case with non-default values in every field, plus edge cases (empty and
/// multi-megabyte bytes, unicode, many repeated elements).
enum SampleMessages {
    static let unicode = "Zürich — 東京 🚀 naïve café ∑"

    static let parameters = WireTiltShiftParameters(
        focusPosition: 0.4, sharpBand: 0.15, transition: 0.2, blurRadius: 12.5,
        outputFormat: .png, jpegQuality: 87)

    static func payload(_ count: Int, seed: UInt64) -> [UInt8] {
        var generator = SeededGenerator(seed: seed)
        return generator.bytes(count)
    }

    /// Every case, with small payloads (suitable for fuzzing).
    static var small: [Message] {
        [
            .workerHello(
                WorkerHello(workerID: "worker-\(unicode)", slots: 4, version: "1.2.3", hostname: "host.example")),
            .heartbeat(
                Heartbeat(
                    workerID: "worker-1", running: 3, droppedMessages: 12, lastSequence: 40, holding: [7, 1 << 63, 9])),
            .taskResult(
                TaskResult(
                    taskID: "task-7", attempt: 2,
                    outcome: .output(
                        TaskOutput(data: payload(300, seed: 1), mediaType: "image/jpeg", width: 640, height: 480)))),
            .taskResult(
                TaskResult(
                    taskID: "task-8", attempt: 5, outcome: .failure(TaskFailure(code: .dependency, message: unicode)))),
            .workerGoodbye(WorkerGoodbye(workerID: "worker-\(unicode)", draining: true)),
            .welcome(Welcome(heartbeatIntervalMs: 1500, coordinatorID: "coordinator-α", maxMessageBytes: 1 << 28)),
            .taskAssignment(
                TaskAssignment(
                    taskID: "task-9", batchID: "batch-1", attempt: 3, kind: .tiltShift,
                    source: "https://example.com/a.jpg",
                    inputs: [
                        InjectedInput(fromTaskID: "task-8", data: payload(200, seed: 2), mediaType: "image/png"),
                        InjectedInput(fromTaskID: "task-6", data: [], mediaType: "image/jpeg", onWorker: true),
                    ],
                    parameters: parameters)),
            .taskAssignment(
                TaskAssignment(
                    taskID: "task-10", batchID: "batch-1", attempt: 1, kind: .download,
                    source: "file:///tmp/\(unicode).png",
                    taskKey: 77, sequence: 41)),
            .cancelTask(CancelTask(taskID: "task-9", reason: "batch cancelled by \(unicode)")),
            .submitBatch(
                SubmitBatch(
                    requestID: "request-1",
                    items: [
                        BatchItem(source: "https://example.com/1.jpg", outputName: "1-tilt.jpg"),
                        BatchItem(source: "/photos/\(unicode).png", outputName: "\(unicode).png"),
                    ],
                    parameters: parameters)),
            .submitBatch(SubmitBatch(requestID: "request-2", items: [], kind: .noop)),
            .statusRequest(StatusRequest(requestID: "request-3", batchID: "batch-1")),
            .cancelBatch(CancelBatch(batchID: "batch-1", itemIndexes: [0, 5, 300, UInt32.max])),
            .cancelBatch(CancelBatch(batchID: "batch-2")),
            .fetchResults(FetchResults(requestID: "request-4", batchID: "batch-1")),
            .batchAccepted(
                BatchAccepted(requestID: "request-1", batchID: "batch-1", itemCount: 2, coordinatorID: "coordinator-1")),
            .itemFinished(
                ItemFinished(
                    batchID: "batch-1", itemIndex: 1, outputName: "\(unicode).png",
                    outcome: .output(
                        TaskOutput(data: payload(100, seed: 3), mediaType: "image/png", width: 1, height: 2)))),
            .itemFinished(
                ItemFinished(
                    batchID: "batch-1", itemIndex: 0, outputName: "1-tilt.jpg",
                    outcome: .failure(TaskFailure(code: .download, message: "HTTP 404")))),
            .itemsAdded(
                ItemsAdded(
                    batchID: "batch-1", parentIndex: 1, firstIndex: 2,
                    items: [
                        BatchItem(source: "https://example.com/from-manifest.jpg", outputName: "from-manifest")
                    ])),
            .batchFinished(BatchFinished(batchID: "batch-1", succeeded: 7, failed: 2, cancelled: 1)),
            .statusReply(
                StatusReply(
                    requestID: "request-3",
                    workers: [
                        WorkerStatus(
                            workerID: "worker-1", hostname: "a", slots: 4, running: 2, completed: 1 << 40, failed: 3,
                            lastSeenMsAgo: 250, droppedMessages: 4, version: "0.1.0"),
                        WorkerStatus(
                            workerID: "worker-\(unicode)", hostname: "b", slots: 1, running: 1, completed: 9, failed: 0,
                            lastSeenMsAgo: UInt64.max),
                    ],
                    queuedTasks: 12, runningTasks: 3, completedTasks: 1000, failedTasks: 7,
                    batches: [
                        BatchStatus(
                            batchID: "batch-1", itemCount: 3, succeeded: 1, failed: 1, cancelled: 1,
                            items: [
                                ItemStatus(itemIndex: 0, source: "https://example.com/1.jpg", state: "succeeded"),
                                ItemStatus(itemIndex: 1, source: "/photos/x.png", state: "failed", error: unicode),
                                ItemStatus(itemIndex: 2, source: "/photos/y.png", state: "cancelled", error: "by user"),
                            ]),
                        BatchStatus(batchID: "batch-2", itemCount: 9, succeeded: 9),
                    ],
                    droppedMessages: 42,
                    tasksPerSecond: 1234.5, coordinatorID: "coordinator-\(unicode)")),
            .refusal(Refusal(requestID: "request-4", reason: "unsupported major version 2")),
            // Minor 1: batches, and the fields that say a peer understands them.
            .workerHello(WorkerHello(workerID: "worker-2", slots: 64, acceptsBatches: true)),
            .welcome(Welcome(heartbeatIntervalMs: 1000, acceptsBatches: true)),
            .submitBatch(
                SubmitBatch(
                    requestID: "request-5", items: [BatchItem(source: "noop")], kind: .noop, acceptsBatches: true)),
            .taskAssignments([
                TaskAssignment(taskID: "b/0", batchID: "b", attempt: 1, kind: .noop, source: "noop", taskKey: 1),
                TaskAssignment(
                    taskID: "b/1/tilt-shift", batchID: "b", attempt: 2, kind: .tiltShift, source: unicode,
                    inputs: [
                        InjectedInput(fromTaskID: "b/1/download", data: payload(50, seed: 4), mediaType: "image/png")
                    ],
                    parameters: parameters, taskKey: UInt64.max),
            ]),
            .taskAssignments([]),
            .taskResults([
                TaskResult(taskID: "b/0", attempt: 1, outcome: .output(TaskOutput(data: [])), taskKey: 1),
                TaskResult(
                    taskID: "b/1", attempt: 3,
                    outcome: .output(TaskOutput(data: payload(70, seed: 5), mediaType: "image/jpeg"))),
                TaskResult(
                    taskID: "b/2", attempt: 1, outcome: .failure(TaskFailure(code: .cancelled, message: unicode)),
                    taskKey: 1 << 40),
            ]),
            .itemsFinished([
                ItemFinished(
                    batchID: "b", itemIndex: 0, outputName: "item-0",
                    outcome: .output(TaskOutput(data: payload(30, seed: 6)))),
                ItemFinished(
                    batchID: "b", itemIndex: 9, outputName: unicode,
                    outcome: .failure(TaskFailure(code: .download, message: "404"))),
            ]),
            // Minor 2: refusal codes, request IDs on cancels and their acknowledgement, task keys in cancels.
            .refusal(Refusal(requestID: "request-6", code: .unknownBatch, reason: "no batch \(unicode)")),
            .cancelBatch(CancelBatch(requestID: "request-6", batchID: "batch-1", itemIndexes: [3])),
            .cancelAccepted(CancelAccepted(requestID: "request-6", batchID: "batch-1", cancelledItems: 7)),
            .cancelTask(CancelTask(taskID: "b/1/download", reason: "cancelled", taskKey: 1 << 50)),
            // Retries of finished batches (`shiftwork retry`).
            .retryBatch(
                RetryBatch(
                    requestID: "request-7", batchID: "batch-1", items: ["rocket", "3", unicode], acceptsBatches: true)),
            .retryAccepted(
                RetryAccepted(
                    requestID: "request-7", batchID: "batch-1", itemIndexes: [0, 3, UInt32.max],
                    itemCount: 9, coordinatorID: "coordinator-1")),
            // Work stealing at a batch's tail.
            .giveBackTask(GiveBackTask(taskKey: 1 << 50, attempt: 2)),
            .taskGivenBack(TaskGivenBack(taskKey: 1 << 50, attempt: 2, givenBack: true)),
            .workerHello(
                WorkerHello(
                    workerID: "w-\(unicode)", slots: 4, acceptsBatches: true, acceptsChainedTasks: true,
                    giveBackThreads: 2)),
        ]
    }

    /// Messages with multi-megabyte payloads and many repeated elements.
    static var large: [Message] {
        [
            .taskResult(
                TaskResult(
                    taskID: "task-big", attempt: 1,
                    outcome: .output(
                        TaskOutput(data: payload(6 << 20, seed: 10), mediaType: "image/jpeg", width: 4000, height: 3000)
                    ))),
            .taskAssignment(
                TaskAssignment(
                    taskID: "task-big-2", batchID: "batch-9", attempt: 4, kind: .tiltShift,
                    inputs: [
                        InjectedInput(fromTaskID: "a", data: payload(3 << 20, seed: 11), mediaType: "image/jpeg"),
                        InjectedInput(fromTaskID: "b", data: payload(2 << 20, seed: 12), mediaType: "image/png"),
                    ],
                    parameters: parameters)),
            // More inputs than PinnedPayloads pins: the rest are copied into the arena.
            .taskAssignment(
                TaskAssignment(
                    taskID: "task-many", batchID: "batch-9", attempt: 1, kind: .tiltShift,
                    inputs: (0..<40).map {
                        InjectedInput(
                            fromTaskID: "t\($0)", data: payload($0 * 37, seed: UInt64($0)), mediaType: "x/\($0)")
                    })),
            .itemFinished(
                ItemFinished(
                    batchID: "batch-9", itemIndex: 77, outputName: "big.jpg",
                    outcome: .output(
                        TaskOutput(data: payload(5 << 20, seed: 13), mediaType: "image/jpeg", width: 9, height: 9)))),
            .submitBatch(
                SubmitBatch(
                    requestID: "request-many",
                    items: (0..<5000).map {
                        BatchItem(source: "https://example.com/\($0).jpg", outputName: "\($0).jpg")
                    },
                    parameters: parameters)),
            .cancelBatch(CancelBatch(batchID: "batch-9", itemIndexes: (0..<10000).map { UInt32($0 * 3) })),
            // More payloads than PinnedPayloads pins, across the elements of one batch.
            .taskResults(
                (0..<40).map {
                    TaskResult(
                        taskID: "r\($0)", attempt: 1,
                        outcome: .output(TaskOutput(data: payload($0 * 1000, seed: UInt64(100 + $0)))))
                }),
            .itemsFinished(
                (0..<3000).map {
                    ItemFinished(
                        batchID: "b", itemIndex: UInt32($0), outputName: "item-\($0)",
                        outcome: .output(TaskOutput(data: [])))
                }),
        ]
    }
}
