import Cluster
import ShiftworkTestSupport
import Wire

/// Well-formed messages whose fields take extreme values, for every case of `Message`: 0, 1, the type's
/// maximum, values just past each documented limit (`MessageBounds`, `PeerInputRules`), empty and 1 MiB
/// strings, repeated fields of 100,000 entries. Deterministic under a seed (`SeededGenerator`): the seed picks
/// the in-range values (IDs, keys, which maximum goes where), the probes per type are always the same.
///
/// Each probe says what a coordinator must do with it (`Expectation`), so that a test can hold the
/// coordinator's counters to it.
struct ExtremeMessages {
    /// What a coordinator does with a probe.
    enum Expectation: Equatable {
        /// Refused for a field out of bounds, counted in `shiftwork_messages_refused_total{field}`.
        case refused(field: String)
        /// Carried out, or refused by a rule of its own (an unknown batch, a batch over `--max-batch-items`).
        case handled
        /// Dropped: a message only a coordinator sends (counted in `dropped_messages`).
        case dropped
    }

    struct Probe {
        let message: Message
        let expectation: Expectation
    }

    static let mebibyte = String(repeating: "x", count: 1 << 20)
    static let hundredThousand = 100_000

    var random: SeededGenerator

    init(seed: UInt64) { random = SeededGenerator(seed: seed) }

    private mutating func id(_ prefix: String) -> String { "\(prefix)-\(random.next() % 1_000_000)" }

    private mutating func uint32() -> UInt32 { UInt32(truncatingIfNeeded: random.next()) }

    /// Strings of every size worth trying for an ID-like field: empty, one byte, at the limit, just past it, 1 MiB.
    static func sizes(limit: Int) -> [(String, overLimit: Bool)] {
        [
            ("", false), ("a", false), (String(repeating: "a", count: limit), false),
            (String(repeating: "a", count: limit + 1), true), (mebibyte, true),
        ]
    }

    /// Relative paths of every size worth trying for an output name: one byte, at the limit, just past it,
    /// 1 MiB; made of folders of 99 bytes, so that each is a valid path but for its length.
    static func pathSizes(limit: Int) -> [(String, overLimit: Bool)] {
        func path(_ bytes: Int) -> String {
            var text = ""
            while text.utf8.count < bytes {
                let room = bytes - text.utf8.count
                text +=
                    text.isEmpty
                    ? String(repeating: "a", count: min(99, room))
                    : (room == 1 ? "a" : "/" + String(repeating: "a", count: min(99, room - 1)))
            }
            return text
        }
        return [("a", false), (path(limit), false), (path(limit + 1), true), (mebibyte, true)]
    }

    // MARK: What a client sends

    mutating func clientProbes(batchID knownBatch: String, maxBatchItems: Int) -> [(type: String, probes: [Probe])] {
        var groups: [(String, [Probe])] = []
        func expect(_ over: Bool, _ field: String) -> Expectation { over ? .refused(field: field) : .handled }

        var submits: [Probe] = []
        let item = BatchItem(source: "http://127.0.0.1:9/\(id("img")).jpg")
        for (text, over) in Self.sizes(limit: MessageBounds.maxIDBytes) {
            submits.append(
                Probe(
                    message: .submitBatch(SubmitBatch(requestID: text, items: [item], kind: .noop, deadlineSeconds: 1)),
                    expectation: expect(over, "SubmitBatch.request_id")))
        }
        // An output name is a relative path too (`OutputPath`: components of at most 200 bytes): its sizes are
        // made of 100-byte folders, so that only the length decides.
        for (text, over) in Self.pathSizes(limit: MessageBounds.maxNameBytes) {
            submits.append(
                Probe(
                    message: .submitBatch(
                        SubmitBatch(
                            requestID: id("r"), items: [BatchItem(source: item.source, outputName: text)], kind: .noop,
                            deadlineSeconds: 1)),
                    expectation: expect(over, "SubmitBatch.items.output_name")))
        }
        // 100,000 items: within the protocol's bound, over this coordinator's --max-batch-items (refused by it).
        let many = (0..<Self.hundredThousand).map { BatchItem(source: "http://127.0.0.1:9/\($0)") }
        submits.append(
            Probe(
                message: .submitBatch(SubmitBatch(requestID: id("r"), items: many, kind: .noop)), expectation: .handled)
        )
        submits.append(
            Probe(message: .submitBatch(SubmitBatch(requestID: id("r"), items: [], kind: .noop)), expectation: .handled)
        )
        let parameterCases: [(WireTiltShiftParameters, String?)] = [
            (WireTiltShiftParameters(focusPosition: 0, sharpBand: 1, transition: 1, blurRadius: 500), nil),
            (
                WireTiltShiftParameters(focusPosition: .nan, sharpBand: 0, transition: 0, blurRadius: 10),
                "focus_position"
            ),
            (
                WireTiltShiftParameters(
                    focusPosition: 0.5, sharpBand: .greatestFiniteMagnitude, transition: 0, blurRadius: 10),
                "sharp_band"
            ),
            (
                WireTiltShiftParameters(focusPosition: 0.5, sharpBand: 0, transition: -.infinity, blurRadius: 10),
                "transition"
            ),
            (
                WireTiltShiftParameters(focusPosition: 0.5, sharpBand: 0, transition: 0, blurRadius: 500.5),
                "blur_radius"
            ),
            (
                WireTiltShiftParameters(
                    focusPosition: 0.5, sharpBand: 0, transition: 0, blurRadius: 10, jpegQuality: 101), "jpeg_quality"
            ),
            (
                WireTiltShiftParameters(
                    focusPosition: 0.5, sharpBand: 0, transition: 0, blurRadius: 10, webpQuality: .max), "webp_quality"
            ),
            (
                WireTiltShiftParameters(
                    focusPosition: 0.5, sharpBand: 0, transition: 0, blurRadius: 10, avifQuality: 101), "avif_quality"
            ),
        ]
        for (parameters, field) in parameterCases {
            submits.append(
                Probe(
                    message: .submitBatch(
                        SubmitBatch(
                            requestID: id("r"), items: [item], parameters: parameters,
                            kind: .noop, deadlineSeconds: 1)),
                    expectation: field.map { .refused(field: "SubmitBatch.parameters.\($0)") } ?? .handled))
        }
        var sink = SubmitBatch(requestID: id("r"), items: [item], kind: .noop)
        sink.sink = Self.mebibyte
        submits.append(Probe(message: .submitBatch(sink), expectation: .refused(field: "SubmitBatch.sink")))
        var endpoint = SubmitBatch(requestID: id("r"), items: [item], kind: .noop)
        endpoint.s3Endpoint = String(repeating: "e", count: MessageBounds.maxEndpointBytes + 1)
        submits.append(Probe(message: .submitBatch(endpoint), expectation: .refused(field: "SubmitBatch.s3_endpoint")))
        // Numbers at their type's extremes, refused by the rules that take them (retries, deadline, priority).
        var extremes = SubmitBatch(requestID: id("r"), items: [item], kind: .noop, retries: .max, deadlineSeconds: .max)
        extremes.priority = .min
        submits.append(Probe(message: .submitBatch(extremes), expectation: .handled))
        var key = SubmitBatch(requestID: id("r"), items: [item], kind: .noop)
        key.idempotencyKey = Self.mebibyte
        submits.append(Probe(message: .submitBatch(key), expectation: .handled))
        groups.append(("SubmitBatch", submits))

        var statuses: [Probe] = []
        for (text, over) in Self.sizes(limit: MessageBounds.maxIDBytes) {
            statuses.append(
                Probe(
                    message: .statusRequest(StatusRequest(requestID: id("s"), batchID: text)),
                    expectation: expect(over, "StatusRequest.batch_id")))
        }
        groups.append(("StatusRequest", statuses))

        var cancels: [Probe] = []
        cancels.append(
            Probe(
                message: .cancelBatch(CancelBatch(requestID: id("c"), batchID: knownBatch, itemIndexes: [.max, 0, 1])),
                expectation: .handled))
        cancels.append(
            Probe(
                message: .cancelBatch(
                    CancelBatch(
                        requestID: id("c"), batchID: knownBatch,
                        itemIndexes: Array(repeating: .max, count: maxBatchItems + 1))),
                expectation: .refused(field: "CancelBatch.item_indexes")))
        cancels.append(
            Probe(
                message: .cancelBatch(
                    CancelBatch(
                        requestID: id("c"), batchID: knownBatch,
                        itemIndexes: (0..<UInt32(Self.hundredThousand)).map { $0 })),
                expectation: .refused(field: "CancelBatch.item_indexes")))
        cancels.append(
            Probe(
                message: .cancelBatch(CancelBatch(requestID: id("c"), batchID: Self.mebibyte)),
                expectation: .refused(field: "CancelBatch.batch_id")))
        groups.append(("CancelBatch", cancels))

        groups.append(
            (
                "FetchResults",
                [
                    Probe(message: .fetchResults(FetchResults(requestID: "", batchID: "")), expectation: .handled),
                    Probe(
                        message: .fetchResults(FetchResults(requestID: Self.mebibyte, batchID: knownBatch)),
                        expectation: .refused(field: "FetchResults.request_id")),
                ]
            ))

        groups.append(
            (
                "RetryBatch",
                [
                    Probe(
                        message: .retryBatch(
                            RetryBatch(requestID: id("t"), batchID: knownBatch, items: ["\(UInt32.max)", "-1", ""])),
                        expectation: .handled),
                    Probe(
                        message: .retryBatch(
                            RetryBatch(
                                requestID: id("t"), batchID: knownBatch,
                                items: Array(repeating: "0", count: Self.hundredThousand))),
                        expectation: .refused(field: "RetryBatch.items")),
                    Probe(
                        message: .retryBatch(
                            RetryBatch(requestID: id("t"), batchID: knownBatch, items: [Self.mebibyte])),
                        expectation: .refused(field: "RetryBatch.items")),
                ]
            ))

        // Messages only a coordinator sends, with extreme values: dropped and counted, whoever sends them.
        let output = TaskOutput(
            data: Array(repeating: 0xFF, count: 1 << 20), mediaType: Self.mebibyte, width: .max, height: .max,
            warnings: Array(repeating: "w", count: Self.hundredThousand))
        let finished = ItemFinished(
            batchID: knownBatch, itemIndex: .max, outputName: Self.mebibyte, outcome: .output(output))
        let assignment = TaskAssignment(
            taskID: Self.mebibyte, batchID: "", attempt: .max, kind: .tiltShift, taskKey: .max, sequence: .max)
        let coordinatorOnly: [(String, Message)] = [
            (
                "Welcome",
                .welcome(Welcome(heartbeatIntervalMs: .max, coordinatorID: Self.mebibyte, maxMessageBytes: .max))
            ),
            ("TaskAssignment", .taskAssignment(assignment)),
            (
                "TaskAssignmentBatch",
                .taskAssignments(
                    Array(
                        repeating: TaskAssignment(taskID: "t", batchID: "b", attempt: 0, kind: .noop),
                        count: Self.hundredThousand))
            ),
            ("CancelTask", .cancelTask(CancelTask(taskID: Self.mebibyte, reason: Self.mebibyte, taskKey: .max))),
            ("GiveBackTask", .giveBackTask(GiveBackTask(taskKey: .max, attempt: .max))),
            ("BatchAccepted", .batchAccepted(BatchAccepted(requestID: "", batchID: knownBatch, itemCount: .max))),
            ("ItemFinished", .itemFinished(finished)),
            ("ItemFinishedBatch", .itemsFinished([finished, finished])),
            (
                "ItemsAdded",
                .itemsAdded(
                    ItemsAdded(
                        batchID: knownBatch, parentIndex: .max, firstIndex: .max,
                        items: Array(repeating: BatchItem(source: "s"), count: Self.hundredThousand)))
            ),
            (
                "BatchFinished",
                .batchFinished(BatchFinished(batchID: knownBatch, succeeded: .max, failed: .max, cancelled: .max))
            ),
            (
                "StatusReply",
                .statusReply(
                    StatusReply(
                        requestID: "", workers: [], queuedTasks: .max, runningTasks: .max,
                        completedTasks: .max, failedTasks: .max,
                        batches: [
                            BatchStatus(batchID: knownBatch, itemCount: .max, items: [])
                        ]))
            ),
            (
                "CancelAccepted",
                .cancelAccepted(CancelAccepted(requestID: "", batchID: knownBatch, cancelledItems: .max))
            ),
            (
                "RetryAccepted",
                .retryAccepted(
                    RetryAccepted(
                        requestID: "", batchID: knownBatch, itemIndexes: [.max],
                        itemCount: .max))
            ),
            ("Refusal", .refusal(Refusal(requestID: Self.mebibyte, code: .forbidden, reason: Self.mebibyte))),
            (
                "UploadRequest",
                .uploadRequest(
                    UploadRequest(batchID: knownBatch, items: [], creditBytes: .max, awaitingItems: .max))
            ),
        ]
        // The pair's link messages have no business on the socket of clients and workers: dropped there.
        let far = WirePairPosition(term: .max, records: .max)
        let pairOnly: [(String, Message)] = [
            (
                "PairAnnouncement",
                .pairAnnouncement(
                    WirePairAnnouncement(
                        hello: WirePairHello(
                            cluster: Self.mebibyte, major: .max, pairVersion: .max, coordinatorID: Self.mebibyte),
                        role: .primary, state: .active, position: far, peerInStep: true))
            ),
            ("PairJournal", .pairJournal(WirePairJournal(from: far, reaches: far, frames: [0xFF], records: .max))),
            ("PairHeld", .pairHeld(WirePairHeld(held: far, gap: true, rejected: true))),
            (
                "PairResultFile",
                .pairResultFile(WirePairResultFile(batchID: Self.mebibyte, itemIndex: .max, data: [1], crc32: 0))
            ),
            ("PairSnapshot", .pairSnapshot(WirePairSnapshot(end: true, reaches: far))),
        ]
        for (type, message) in pairOnly {
            groups.append((type, [Probe(message: message, expectation: .dropped)]))
        }
        // Uploads no one asked for: an unknown batch or index is dropped by the upload rules; strings past their
        // bounds are refused first.
        groups.append(
            (
                "UploadData",
                [
                    Probe(
                        message: .uploadData(UploadData(batchID: Self.mebibyte, itemIndex: .max)),
                        expectation: .refused(field: "UploadData.batch_id")),
                    Probe(
                        message: .uploadData(UploadData(batchID: knownBatch, itemIndex: .max, failure: Self.mebibyte)),
                        expectation: .refused(field: "UploadData.failure")),
                    Probe(
                        message: .uploadData(UploadData(batchID: knownBatch, itemIndex: .max, data: [1, 2, 3])),
                        expectation: .handled),
                ]
            ))
        for (type, message) in coordinatorOnly {
            groups.append((type, [Probe(message: message, expectation: .dropped)]))
        }
        return groups
    }

    // MARK: What a registered worker sends

    /// A registered worker's messages (its hello with `workerID` comes first, elsewhere); the goodbyes last,
    /// for the final one unregisters it. `runningTask` is a task the worker holds, for results that answer it.
    mutating func workerProbes(workerID: String, runningTask: TaskAssignment?) -> [(type: String, probes: [Probe])] {
        var groups: [(String, [Probe])] = []
        var hellos: [Probe] = []
        for (slots, over) in [(UInt32(0), false), (1, false), (4096, false), (4097, true), (.max, true)] {
            hellos.append(
                Probe(
                    message: .workerHello(WorkerHello(workerID: workerID, slots: slots, acceptsBatches: true)),
                    expectation: over ? .refused(field: "WorkerHello.slots") : .handled))
        }
        hellos.append(
            Probe(
                message: .workerHello(WorkerHello(workerID: workerID, slots: 2, hostname: Self.mebibyte)),
                expectation: .refused(field: "WorkerHello.hostname")))
        hellos.append(
            Probe(
                message: .workerHello(WorkerHello(workerID: workerID, slots: 2, version: Self.mebibyte)),
                expectation: .refused(field: "WorkerHello.version")))
        hellos.append(
            Probe(
                message: .workerHello(WorkerHello(workerID: workerID, slots: 2, giveBackThreads: .max)),
                expectation: .refused(field: "WorkerHello.give_back_threads")))
        hellos.append(
            Probe(
                message: .workerHello(WorkerHello(workerID: Self.mebibyte, slots: 2)),
                expectation: .refused(field: "WorkerHello.worker_id")))
        // Registered again, as it was, for what follows.
        hellos.append(
            Probe(
                message: .workerHello(WorkerHello(workerID: workerID, slots: 2, acceptsBatches: true)),
                expectation: .handled))
        groups.append(("WorkerHello", hellos))

        groups.append(
            (
                "Heartbeat",
                [
                    Probe(
                        message: .heartbeat(
                            Heartbeat(
                                workerID: workerID, running: 0, droppedMessages: .max, lastSequence: .max, holding: [])),
                        expectation: .handled),
                    Probe(
                        message: .heartbeat(Heartbeat(workerID: workerID, running: .max)),
                        expectation: .refused(field: "Heartbeat.running")),
                    Probe(
                        message: .heartbeat(
                            Heartbeat(
                                workerID: workerID,
                                holding: (0..<UInt64(Self.hundredThousand)).map { $0 &* random.next() })),
                        expectation: .refused(field: "Heartbeat.holding")),
                    Probe(
                        message: .heartbeat(Heartbeat(workerID: Self.mebibyte)),
                        expectation: .refused(field: "Heartbeat.worker_id")),
                ]
            ))

        let stale = TaskResult(
            taskID: id("t"), attempt: .max, outcome: .failure(TaskFailure(code: .internal, retryAfterMs: .max)),
            taskKey: .max)
        var results: [Probe] = [Probe(message: .taskResult(stale), expectation: .handled)]
        var outputs: [(TaskOutput, String)] = []
        outputs.append((TaskOutput(data: [], mediaType: Self.mebibyte), "media_type"))
        outputs.append((TaskOutput(data: [], width: .max), "width"))
        outputs.append((TaskOutput(data: [], height: MessageBounds.maxImageSide + 1), "height"))
        outputs.append((TaskOutput(data: [], warnings: Array(repeating: "w", count: Self.hundredThousand)), "warnings"))
        outputs.append((TaskOutput(data: [], warnings: [Self.mebibyte]), "warnings"))
        outputs.append((TaskOutput(location: Self.mebibyte, size: 1, mediaType: "image/png"), "location"))
        outputs.append((TaskOutput(heldOnWorker: true, size: .max, mediaType: "image/png"), "size"))
        for (output, field) in outputs {
            results.append(
                Probe(
                    message: .taskResult(
                        TaskResult(taskID: id("t"), attempt: uint32(), outcome: .output(output), taskKey: random.next())
                    ),
                    expectation: .refused(field: "TaskResult.output.\(field)")))
        }
        results.append(
            Probe(
                message: .taskResult(
                    TaskResult(
                        taskID: id("t"), attempt: 1,
                        outcome: .failure(TaskFailure(code: .download, message: Self.mebibyte)))),
                expectation: .refused(field: "TaskResult.failure.message")))
        results.append(
            Probe(
                message: .taskResult(
                    TaskResult(taskID: Self.mebibyte, attempt: 1, outcome: .output(TaskOutput(data: [])))),
                expectation: .refused(field: "TaskResult.task_id")))
        if let runningTask {
            // Answers a task the worker holds, with a field out of bounds: refused, and that attempt fails with why.
            results.append(
                Probe(
                    message: .taskResult(
                        TaskResult(
                            taskID: runningTask.taskID, attempt: runningTask.attempt,
                            outcome: .output(
                                TaskOutput(
                                    data: [], warnings: Array(repeating: "w", count: MessageBounds.maxWarnings + 1))),
                            taskKey: runningTask.taskKey)), expectation: .refused(field: "TaskResult.output.warnings")))
        }
        groups.append(("TaskResult", results))

        groups.append(
            (
                "TaskResultBatch",
                [
                    Probe(
                        message: .taskResults(Array(repeating: stale, count: Self.hundredThousand)),
                        expectation: .refused(field: "TaskResultBatch.results")),
                    Probe(
                        message: .taskResults([
                            stale,
                            TaskResult(taskID: "t", attempt: 0, outcome: .output(TaskOutput(data: [], width: .max))),
                        ]),
                        expectation: .refused(field: "TaskResultBatch.results.output.width")),
                    Probe(message: .taskResults([stale, stale]), expectation: .handled),
                ]
            ))

        groups.append(
            (
                "TaskGivenBack",
                [
                    Probe(
                        message: .taskGivenBack(TaskGivenBack(taskKey: .max, attempt: .max, givenBack: true)),
                        expectation: .handled),
                    Probe(
                        message: .taskGivenBack(TaskGivenBack(taskKey: 0, attempt: 0, givenBack: false)),
                        expectation: .handled),
                ]
            ))

        groups.append(
            (
                "WorkerGoodbye",
                [
                    Probe(
                        message: .workerGoodbye(WorkerGoodbye(workerID: Self.mebibyte, draining: true)),
                        expectation: .refused(field: "WorkerGoodbye.worker_id")),
                    Probe(
                        message: .workerGoodbye(WorkerGoodbye(workerID: workerID, draining: true)),
                        expectation: .handled),
                    Probe(message: .workerGoodbye(WorkerGoodbye(workerID: workerID)), expectation: .handled),
                ]
            ))
        // Results first (one may answer `runningTask`, which a hello again would take back), goodbyes last.
        let order = ["TaskResult", "TaskResultBatch", "TaskGivenBack", "Heartbeat", "WorkerHello", "WorkerGoodbye"]
        return groups.sorted { (order.firstIndex(of: $0.0) ?? 0) < (order.firstIndex(of: $1.0) ?? 0) }
    }

    // MARK: What a worker receives

    /// Assignments with extreme fields, each with a task key of its own from `firstKey` on (the one field a
    /// test coordinator matches answers by), and a group of 100,000 in one `TaskAssignmentBatch`.
    mutating func assignments(firstKey: UInt64) -> [(type: String, assignments: [TaskAssignment])] {
        var key = firstKey
        func next(_ taskID: String? = nil, kind: TaskKind, source: String = "", attempt: UInt32 = 1) -> TaskAssignment {
            defer { key += 1 }
            return TaskAssignment(
                taskID: taskID ?? "gen-\(key)", batchID: "b-gen", attempt: attempt, kind: kind,
                source: source, taskKey: key, sequence: key)
        }
        let unreachable = "http://127.0.0.1:9/\(id("img")).jpg"
        var single: [TaskAssignment] = []
        for (text, _) in Self.sizes(limit: MessageBounds.maxIDBytes) {
            single.append(next(text.isEmpty ? nil : text, kind: .noop))
        }
        single.append(next(kind: .noop, attempt: 0))
        single.append(next(kind: .noop, attempt: .max))
        single.append(next(kind: .unspecified))
        single.append(next(kind: .download, source: ""))
        single.append(next(kind: .download, source: unreachable))
        single.append(next(kind: .download, source: Self.mebibyte))
        single.append(next(kind: .tiltShift))
        var garbage = next(kind: .tiltShift, source: unreachable)
        garbage.inputs = [InjectedInput(fromTaskID: "d", data: random.bytes(64))]
        single.append(garbage)
        var manyInputs = next(kind: .tiltShift)
        manyInputs.inputs = Array(repeating: InjectedInput(fromTaskID: "d", data: []), count: Self.hundredThousand)
        single.append(manyInputs)
        var onWorker = next(kind: .tiltShift)
        onWorker.inputs = [InjectedInput(fromTaskID: Self.mebibyte, data: [], onWorker: true)]
        single.append(onWorker)
        for parameters in [
            WireTiltShiftParameters(focusPosition: .nan, sharpBand: 0, transition: 0, blurRadius: 10),
            WireTiltShiftParameters(
                focusPosition: 0.5, sharpBand: 0, transition: 0, blurRadius: .greatestFiniteMagnitude),
            WireTiltShiftParameters(focusPosition: 0.5, sharpBand: 0, transition: 0, blurRadius: 10, jpegQuality: .max),
        ] {
            var assignment = next(kind: .tiltShift)
            assignment.inputs = [InjectedInput(fromTaskID: "d", data: random.bytes(16))]
            assignment.parameters = parameters
            single.append(assignment)
        }
        var sink = next(kind: .tiltShift)
        sink.sink = Self.mebibyte
        single.append(sink)
        var sinkName = next(kind: .tiltShift)
        sinkName.sink = "/nonexistent-\(id("sink"))"
        sinkName.sinkName = "../../\(Self.mebibyte)"
        single.append(sinkName)
        var endpoint = next(kind: .download, source: "s3://bucket/key.jpg")
        endpoint.s3Endpoint = Self.mebibyte
        single.append(endpoint)
        var chained = next(kind: .download, source: unreachable)
        chained.keepOutput = true
        chained.followOn = ChainedTask(
            taskID: Self.mebibyte, attempt: .max, taskKey: .max, parameters: nil, sink: "", sinkName: "")
        single.append(chained)
        // The same task ID twice, running at once: both are answered.
        single.append(next("gen-twice", kind: .download, source: unreachable))
        single.append(next("gen-twice", kind: .download, source: unreachable))
        var groups: [(String, [TaskAssignment])] = [("TaskAssignment", single)]
        groups.append(("TaskAssignmentBatch", (0..<Self.hundredThousand).map { _ in next(kind: .noop) }))
        return groups
    }
}
