import Wire

/// The values the golden files in Tests/WireGolden hold, written again in Swift: the `.txtpb` of the same
/// name says the same in protobuf text format, and its `.bin` is what protoc encodes from it
/// (scripts/generate-wire-golden). Change both sides together.
enum GoldenMessages {
    /// Envelope bodies, by file name (without extension) in Tests/WireGolden/envelope.
    static let envelopes: [String: Message] = [
        "10-worker-hello": .workerHello(
            WorkerHello(
                workerID: "worker-Zürich-1", slots: 8, version: "1.4.0", hostname: "render-07.example",
                acceptsBatches: true,
                acceptsChainedTasks: true, giveBackThreads: 4)),
        "11-heartbeat": .heartbeat(
            Heartbeat(
                workerID: "worker-1", running: 3, droppedMessages: 12, lastSequence: 40, holding: [7, 1 << 63, 300])),
        "11-heartbeat-witnessed": .heartbeat(Heartbeat(workerID: "worker-1", running: 1)),
        "40-batch-accepted-witnessed": .batchAccepted(
            BatchAccepted(requestID: "request-1", batchID: "b-1", itemCount: 0)),
        "12-task-result-output": .taskResult(
            TaskResult(
                taskID: "b-1/0/tilt-shift", attempt: 2, outcome: .output(everyOutputField), taskKey: 77)),
        "12-task-result-failure": .taskResult(
            TaskResult(
                taskID: "b-1/3/download", attempt: 5,
                outcome: .failure(
                    TaskFailure(
                        code: .download, message: "HTTP 503 from https://example.com/a.jpg",
                        isTransient: true, retryAfterMs: 30000)),
                taskKey: UInt64.max)),
        "13-worker-goodbye": .workerGoodbye(WorkerGoodbye(workerID: "worker-東京", draining: true)),
        "14-task-results": .taskResults([
            TaskResult(
                taskID: "b/0/download", attempt: 1,
                outcome: .output(TaskOutput(heldOnWorker: true, size: 2048, mediaType: "image/png")), taskKey: 1),
            TaskResult(
                taskID: "b/1/tilt-shift", attempt: 3,
                outcome: .failure(TaskFailure(code: .workerLost, message: "worker lost")), taskKey: 1 << 40),
        ]),
        "20-welcome": .welcome(
            Welcome(
                heartbeatIntervalMs: 1500, coordinatorID: "coordinator-0a1b2c3d", acceptsBatches: true,
                maxMessageBytes: 1 << 28)),
        "21-task-assignment": .taskAssignment(everyAssignmentField),
        "21-task-assignment-from-minor-0": .taskAssignment(
            TaskAssignment(
                taskID: "b-2/0/tilt-shift", batchID: "b-2", attempt: 1, kind: .tiltShift,
                source: "https://example.com/0.jpg",
                inputs: [
                    InjectedInput(fromTaskID: "b-2/0/download", data: [0xFF, 0xD8, 0xFF], mediaType: "image/jpeg")
                ],
                parameters: WireTiltShiftParameters(
                    focusPosition: 0.5, sharpBand: 0.25, transition: 0.125, blurRadius: 12.5))),
        "22-cancel-task": .cancelTask(
            CancelTask(
                taskID: "b-9/4/tilt-shift", reason: "cancelled by request (batch b-9)", taskKey: 1 << 50)),
        "23-task-assignments": .taskAssignments([
            TaskAssignment(
                taskID: "b/0", batchID: "b", attempt: 1, kind: .noop, source: "noop", taskKey: 1, sequence: 1),
            TaskAssignment(
                taskID: "b/1/tilt-shift", batchID: "b", attempt: 2, kind: .tiltShift, source: "/photos/x.png",
                inputs: [InjectedInput(fromTaskID: "b/1/download", data: [], onWorker: true)],
                parameters: WireTiltShiftParameters(
                    focusPosition: 0.5, sharpBand: 0.25, transition: 0.125, blurRadius: 6,
                    outputFormat: .png),
                taskKey: 2, sequence: 2),
            TaskAssignment(
                taskID: "b/2/tilt-shift", batchID: "b", attempt: 1, kind: .tiltShift, source: "/scans/page.tif",
                inputs: [
                    InjectedInput(fromTaskID: "b/2/upload", data: [0x49, 0x49, 0x2A, 0x00], crc32c: 2_882_717_090)
                ],
                parameters: WireTiltShiftParameters(
                    focusPosition: 0.5, sharpBand: 0.25, transition: 0.125, blurRadius: 6,
                    outputFormat: .tiff),
                taskKey: 3, sequence: 3),
        ]),
        "340-give-back-task": .giveBackTask(GiveBackTask(taskKey: 1 << 50, attempt: 2)),
        "341-task-given-back": .taskGivenBack(TaskGivenBack(taskKey: 1 << 50, attempt: 2, givenBack: true)),
        "30-submit-batch": .submitBatch(everySubmitField),
        "31-status-request": .statusRequest(StatusRequest(requestID: "request-3", batchID: "b-1")),
        "32-cancel-batch": .cancelBatch(
            CancelBatch(requestID: "request-6", batchID: "b-1", itemIndexes: [0, 5, 300, UInt32.max])),
        "33-fetch-results": .fetchResults(FetchResults(requestID: "request-4", batchID: "b-1")),
        "40-batch-accepted": .batchAccepted(
            {
                var accepted = BatchAccepted(
                    requestID: "request-1", batchID: "b-1", itemCount: 2, coordinatorID: "coordinator-0a1b2c3d")
                accepted.attached = true
                accepted.uploadSpool = true
                return accepted
            }()),
        "41-item-finished-output": .itemFinished(
            ItemFinished(
                batchID: "b-1", itemIndex: 1, outputName: "café",
                outcome: .output(
                    TaskOutput(
                        data: [0x89, 0x50, 0x4E, 0x47], mediaType: "image/png", width: 1, height: 2,
                        warnings: ["a CMYK JPEG was converted without a profile"])))),
        "41-item-finished-failure": .itemFinished(
            ItemFinished(
                batchID: "b-1", itemIndex: 0, outputName: "1-tilt",
                outcome: .failure(TaskFailure(code: .sink, message: "s3://bucket/prefix: access denied")))),
        "42-batch-finished": .batchFinished(BatchFinished(batchID: "b-1", succeeded: 7, failed: 2, cancelled: 1)),
        "43-status-reply": .statusReply(everyStatusField),
        "44-items-finished": .itemsFinished([
            ItemFinished(
                batchID: "b", itemIndex: 0, outputName: "item-0", outcome: .output(TaskOutput(data: [1, 2, 3]))),
            ItemFinished(
                batchID: "b", itemIndex: 9, outputName: "item-9",
                outcome: .failure(
                    TaskFailure(code: .cancelled, message: "cancelled: the batch's deadline of 60 s passed"))),
        ]),
        "45-items-added": .itemsAdded(
            ItemsAdded(
                batchID: "b-1", parentIndex: 1, firstIndex: 2,
                items: [
                    BatchItem(source: "https://example.com/from-manifest.jpg", outputName: "from-manifest"),
                    BatchItem(source: "https://example.com/second.jpg"),
                ])),
        "46-cancel-accepted": .cancelAccepted(
            CancelAccepted(requestID: "request-6", batchID: "b-1", cancelledItems: 7)),
        "50-refusal": .refusal(
            Refusal(
                requestID: "request-6", code: .unknownBatch,
                reason: "no batch b-x: `shiftwork status` lists the batches the coordinator knows")),
        "50-refusal-from-minor-1": .refusal(.unknownWorker),
        "360-upload-request": .uploadRequest(
            UploadRequest(
                batchID: "b-1",
                items: [
                    UploadWanted(
                        itemIndex: 0, path: "/home/ana/Pictures/2024/rocket.jpg",
                        expected: UploadMetadata(size: 5_242_880, modifiedUnixNanoseconds: 1_795_000_000_123_456_789)),
                    UploadWanted(
                        itemIndex: UInt32.max, path: "/home/ana/Pictures/café #1.png",
                        expected: UploadMetadata(size: 1, modifiedUnixNanoseconds: -5)),
                ],
                creditBytes: 5_242_881, awaitingItems: 5, spooled: true)),
        "361-upload-data": .uploadData(
            UploadData(batchID: "b-1", itemIndex: 7, data: [0xFF, 0xD8, 0xFF, 0xE0], crc32c: 3_808_858_755)),
        "361-upload-data-failure": .uploadData(
            UploadData(
                batchID: "b-1", itemIndex: UInt32.max,
                failure: "/home/ana/Pictures/rocket.jpg changed since it was submitted (size 5242880 then, 5242000 now)"
            )),
        "200-retry-batch": .retryBatch(
            RetryBatch(
                requestID: "request-7", batchID: "b-1", items: ["rocket", "3", "/photos/x.png"], acceptsBatches: true)),
        "201-retry-accepted": .retryAccepted(
            RetryAccepted(
                requestID: "request-7", batchID: "b-1", itemIndexes: [0, 3, UInt32.max], itemCount: 9,
                coordinatorID: "coordinator-0a1b2c3d")),
        "800-pair-announcement": .pairAnnouncement(
            WirePairAnnouncement(
                hello: WirePairHello(
                    cluster: "render-farm", major: 1, pairVersion: 1, coordinatorID: "coordinator-0a1b2c3d",
                    serviceEndpoint: "tcp://10.0.0.5:5570"),
                role: .backup, state: .active, position: WirePairPosition(term: 3, records: UInt64.max),
                peerInStep: true)),
        "800-pair-announcement-starting-primary": .pairAnnouncement(
            WirePairAnnouncement(
                hello: WirePairHello(cluster: "shiftwork", major: 1, pairVersion: 1, coordinatorID: "coordinator-1"),
                role: .primary, state: .startingPrimary, position: WirePairPosition(term: 0, records: 12))),
        "800-pair-announcement-starting-backup": .pairAnnouncement(
            WirePairAnnouncement(
                hello: WirePairHello(cluster: "shiftwork", major: 1, pairVersion: 1, coordinatorID: "coordinator-1"),
                role: .backup, state: .startingBackup, position: WirePairPosition(term: 0, records: 12))),
        "800-pair-announcement-passive": .pairAnnouncement(
            WirePairAnnouncement(
                hello: WirePairHello(cluster: "shiftwork", major: 1, pairVersion: 1, coordinatorID: "coordinator-1"),
                role: .primary, state: .passive, position: WirePairPosition(term: 0, records: 12))),
        "801-pair-journal": .pairJournal(
            WirePairJournal(
                from: WirePairPosition(term: 2, records: 40), reaches: WirePairPosition(term: 2, records: 41),
                frames: [0x02, 0x00, 0x00, 0x00, 0xB3, 0xE2, 0x96, 0xA1, 0x2A, 0x00], records: 1,
                snapshot: true)),
        "802-pair-held": .pairHeld(
            WirePairHeld(held: WirePairPosition(term: 2, records: 41), gap: true, rejected: true)),
        "803-pair-result-file": .pairResultFile(
            WirePairResultFile(
                batchID: "b-1", itemIndex: UInt32.max, data: [0xFF, 0xD8, 0xFF, 0xE0], crc32: 0xDEAD_BEEF)),
        "804-pair-snapshot": .pairSnapshot(
            WirePairSnapshot(end: true, reaches: WirePairPosition(term: 1, records: 7))),
    ]

    /// The envelope's witnessed position (a pair of coordinators, docs/failover.md), by file name: every other
    /// file leaves it out. The first says it back to a coordinator (a worker's heartbeat), the second is a
    /// coordinator's acknowledgement that sets it.
    static let witnessed: [String: WirePairPosition] = [
        "11-heartbeat-witnessed": WirePairPosition(term: 3, records: UInt64.max),
        "40-batch-accepted-witnessed": WirePairPosition(term: 2, records: 41),
    ]

    /// Files that only decode: what an older peer sends (another minor, fields it did not have), which this
    /// build would encode differently.
    static let decodeOnly: Set<String> = ["50-refusal-from-minor-1", "21-task-assignment-from-minor-0"]

    /// Journal records, by file name in Tests/WireGolden/journal.
    static let journal: [String: JournalRecord] = [
        "1-started": .started(
            coordinatorID: "coordinator-0a1b2c3d", incarnation: 3, unixMilliseconds: 1_795_000_000_000),
        "2-batch-accepted": .batchAccepted(
            batchID: "b-1", client: [0x00, 0x80, 0x01, 0x02], submit: journaledSubmit,
            unixMilliseconds: 1_795_000_000_001,
            ownerKey: "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"),
        "3-item-finished": .itemFinished(
            ItemFinished(
                batchID: "b-1", itemIndex: 0, outputName: "1-tilt",
                outcome: .output(
                    {
                        var output = TaskOutput(
                            location: "/shared/out/1-tilt.jpg", size: 4096, crc32c: 12345, mediaType: "image/jpeg",
                            width: 640, height: 480)
                        output.warnings = ["profile ignored"]
                        return output
                    }()))),
        "4-batch-cancelled": .batchCancelled(CancelBatch(requestID: "request-6", batchID: "b-1", itemIndexes: [2, 7])),
        "5-batch-retired": .batchRetired(batchID: "b-1"),
        "800-pair-position": .pairPosition(term: 4, records: 1234),
        "801-pair-term": .pairTerm(5),
        "802-pair-history": .pairHistory("active-with-peer"),
        "6-items-added": .itemsAdded(
            ItemsAdded(
                batchID: "b-1", parentIndex: 1, firstIndex: 2,
                items: [
                    BatchItem(source: "https://example.com/from-manifest.jpg", outputName: "from-manifest")
                ])),
        "200-batch-retried": .batchRetried(batchID: "b-1", itemIndexes: [1, 4], unixMilliseconds: 1_795_000_000_002),
        "210-attempt-failed": .attemptFailed(
            batchID: "b-1", itemIndex: 4,
            attempt: AttemptStatus(
                task: "tilt-shift", attempt: 2, code: .processing, error: "filtering failed", isTransient: true,
                retried: true,
                retryDelayMs: 2000, worker: "worker-2", failedUnixMilliseconds: 1_795_000_000_003)),
    ]

    // MARK: Messages with every field set

    private static var everyOutputField: TaskOutput {
        var output = TaskOutput(
            data: [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + Array("JFIF".utf8), mediaType: "image/jpeg", width: 640,
            height: 480,
            warnings: ["the embedded ICC profile was broken and was ignored", "second warning ✓"])
        output.heldOnWorker = true
        output.location = "s3://bucket/prefix/photo.jpg"
        output.size = 123_456_789
        output.crc32c = 3_808_858_755
        return output
    }

    private static var everyAssignmentField: TaskAssignment {
        var assignment = TaskAssignment(
            taskID: "b-9/4/download", batchID: "b-9", attempt: 3, kind: .download,
            source: "https://example.com/photos/ä.jpg",
            inputs: [
                InjectedInput(
                    fromTaskID: "b-9/3/download", data: [0x89] + Array("PNG\r\n".utf8) + [0x1A, 0x0A],
                    mediaType: "image/png"),
                InjectedInput(fromTaskID: "b-9/2/download", data: [], mediaType: "image/jpeg", onWorker: true),
            ],
            parameters: WireTiltShiftParameters(
                focusPosition: 0.5, sharpBand: 0.25, transition: 0.125, blurRadius: 12.5, outputFormat: .webp,
                jpegQuality: 87,
                webpQuality: 80, avifQuality: 60, colourSRGB: true, stripMetadata: true, angle: 22.5,
                falloff: .progressive),
            taskKey: 1 << 32, sequence: 41)
        assignment.keepOutput = true
        assignment.sink = "s3://bucket/out"
        assignment.sinkName = "photo-4"
        assignment.s3Endpoint = "http://127.0.0.1:9000"
        assignment.followOn = ChainedTask(
            taskID: "b-9/4/tilt-shift", attempt: 1, taskKey: (1 << 32) + 1,
            parameters: WireTiltShiftParameters(
                focusPosition: 0.75, sharpBand: 0.5, transition: 0.25, blurRadius: 3,
                outputFormat: .avif, avifQuality: 50),
            sink: "/shared/out", sinkName: "photo-4-tilt")
        return assignment
    }

    private static var everySubmitField: SubmitBatch {
        var submit = SubmitBatch(
            requestID: "request-1",
            items: [
                BatchItem(source: "https://example.com/1.jpg", outputName: "1-tilt"),
                BatchItem(
                    source: "/photos/café.png", outputName: "café",
                    upload: UploadMetadata(size: 12_582_912, modifiedUnixNanoseconds: -1)),
            ],
            parameters: WireTiltShiftParameters(
                focusPosition: 0.5, sharpBand: 0.25, transition: 0.125, blurRadius: 12.5,
                outputFormat: .jpeg, jpegQuality: 90),
            kind: .noop, acceptsBatches: true, retries: 0, deadlineSeconds: 3600)
        submit.sink = "s3://bucket/prefix"
        submit.s3Endpoint = "http://127.0.0.1:9000"
        submit.priority = -3
        submit.idempotencyKey = "nightly-2026-11-28@host"
        return submit
    }

    private static var journaledSubmit: SubmitBatch {
        var submit = SubmitBatch(
            requestID: "request-1", items: [BatchItem(source: "https://example.com/1.jpg", outputName: "1-tilt")],
            parameters: WireTiltShiftParameters(
                focusPosition: 0.5, sharpBand: 0.25, transition: 0.125, blurRadius: 12.5),
            acceptsBatches: true, retries: 3, deadlineSeconds: 60)
        submit.priority = 2
        submit.idempotencyKey = "key-1"
        return submit
    }

    private static var everyStatusField: StatusReply {
        var first = BatchStatus(
            batchID: "b-1", itemCount: 3, succeeded: 1, failed: 1, cancelled: 1,
            items: [
                ItemStatus(
                    itemIndex: 0, source: "https://example.com/1.jpg", state: "succeeded",
                    warnings: ["profile ignored"],
                    location: "s3://bucket/prefix/1-tilt.jpg", attempts: 1),
                ItemStatus(
                    itemIndex: 1, source: "/photos/x.png", state: "failed", error: "HTTP 404", attempts: 2,
                    failedAttempts: [
                        AttemptStatus(
                            task: "download", attempt: 1, code: .timedOut,
                            error: "timed out after 30 s on worker worker-1",
                            isTransient: true, retried: true, retryDelayMs: 1500, worker: "worker-1",
                            failedUnixMilliseconds: 1_795_000_000_000),
                        AttemptStatus(
                            task: "download", attempt: 2, code: .download, error: "HTTP 404", worker: "worker-2"),
                    ]),
            ])
        first.priority = 4
        first.idempotencyKey = "nightly"
        var second = BatchStatus(batchID: "b-2", itemCount: 9, succeeded: 9)
        second.priority = -10
        var reply = StatusReply(
            requestID: "request-3",
            workers: [
                WorkerStatus(
                    workerID: "worker-1", hostname: "render-07", slots: 4, running: 2, completed: 1 << 40, failed: 3,
                    lastSeenMsAgo: 250, droppedMessages: 4, version: "1.4.0"),
                WorkerStatus(workerID: "worker-2", slots: 1, lastSeenMsAgo: UInt64.max),
            ],
            queuedTasks: 12, runningTasks: 3, completedTasks: 1000, failedTasks: 7, batches: [first, second],
            droppedMessages: 42, tasksPerSecond: 1234.5, coordinatorID: "coordinator-0a1b2c3d")
        reply.clients = [
            ClientStatus(client: "key rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7", queuedItems: 250_000, batches: 3),
            ClientStatus(client: "peer 00a1b2c3d4", queuedItems: 0, batches: 1),
        ]
        reply.maxQueuedItemsPerClient = 250_000
        reply.maxBatchesPerClient = 1000
        reply.pair = WirePairStatus(
            role: .primary, state: .active, peerState: .passive, position: WirePairPosition(term: 2, records: 1234),
            lagRecords: 17, lagMs: 250, heldMessages: 4, peer: "tcp://10.0.0.6:5570", history: "active-with-peer")
        return reply
    }
}
