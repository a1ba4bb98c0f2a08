import Imaging
import Wire

/// One check per message type a peer sends, each against `MessageBounds`' limits; a check throws the first
/// field out of bounds. `check(_:maxBatchItems:)` picks the check of any message a coordinator receives;
/// workers check their assignments (`check(_ assignment:)`), clients the coordinator's answers
/// (`checkAnswer`). Values checked elsewhere, where they are taken, are named in docs/protocol.md: worker
/// IDs and slots (`PeerInputRules`, in `Dispatcher.register`), a submission's item count, kind, sources,
/// retries, deadline, priority and idempotency key (`BatchRegistry.refusal(of:from:)`).
extension MessageBounds {
    // MARK: What the coordinator receives

    /// The first field of `message` out of bounds, for a coordinator whose batches hold at most
    /// `maxBatchItems` items; `nil` when every field is within its bounds (or the message is one only a
    /// coordinator sends, dropped anyway).
    public static func violation(in message: Message, maxBatchItems: Int) -> Violation? {
        do {
            switch message {
            case .workerHello(let hello): try check(hello)
            case .heartbeat(let heartbeat): try check(heartbeat)
            case .workerGoodbye(let goodbye):
                try Checker(message: "WorkerGoodbye").bytes(
                    goodbye.workerID, "WorkerGoodbye.worker_id", max: maxWorkerIDBytes)
            case .taskResult(let result): try check(result, message: "TaskResult", field: "TaskResult")
            case .taskResults(let results):
                try Checker(message: "TaskResultBatch").count(
                    results.count, "TaskResultBatch.results", max: maxHeldTasks)
                for (index, result) in results.enumerated() {
                    try check(result, message: "TaskResultBatch", field: "TaskResultBatch.results[\(index)]")
                }
            case .taskGivenBack: break  // a task key and an attempt: looked up, never used as a size
            case .submitBatch(let submit): try check(submit)
            case .statusRequest(let request):
                let checker = Checker(message: "StatusRequest")
                try checker.bytes(request.requestID, "StatusRequest.request_id", max: maxIDBytes)
                try checker.bytes(request.batchID, "StatusRequest.batch_id", max: maxIDBytes)
            case .fetchResults(let request):
                let checker = Checker(message: "FetchResults")
                try checker.bytes(request.requestID, "FetchResults.request_id", max: maxIDBytes)
                try checker.bytes(request.batchID, "FetchResults.batch_id", max: maxIDBytes)
            case .cancelBatch(let request):
                let checker = Checker(message: "CancelBatch")
                try checker.bytes(request.requestID, "CancelBatch.request_id", max: maxIDBytes)
                try checker.bytes(request.batchID, "CancelBatch.batch_id", max: maxIDBytes)
                try checker.count(request.itemIndexes.count, "CancelBatch.item_indexes", max: maxBatchItems)
            case .retryBatch(let request): try check(request, maxBatchItems: maxBatchItems)
            case .uploadData(let upload):
                let checker = Checker(message: "UploadData")
                try checker.bytes(upload.batchID, "UploadData.batch_id", max: maxIDBytes)
                try checker.atMost(UInt64(upload.data.count), "UploadData.data", max: ClusterDefaults.uploadFileBytes)
                // Becomes the item's failure message: journaled, stored and shown to clients.
                try checker.bytes(upload.failure, "UploadData.failure", max: maxTextBytes)
            case .welcome, .taskAssignment, .taskAssignments, .cancelTask, .giveBackTask, .batchAccepted, .itemFinished,
                .itemsFinished, .itemsAdded, .batchFinished, .statusReply, .cancelAccepted, .retryAccepted, .refusal,
                .uploadRequest:
                break
            case .pairAnnouncement, .pairJournal, .pairHeld, .pairResultFile, .pairSnapshot:
                break  // the pair's link checks its own (`ReplicationReceiver`); dropped on the clients' socket
            }
            return nil
        } catch {
            return error
        }
    }

    static func check(_ hello: WorkerHello) throws(Violation) {
        let checker = Checker(message: "WorkerHello")
        try checker.bytes(hello.workerID, "WorkerHello.worker_id", max: maxWorkerIDBytes)
        try checker.bytes(hello.version, "WorkerHello.version", max: maxVersionBytes)
        try checker.bytes(hello.hostname, "WorkerHello.hostname", max: maxHostnameBytes)
        try checker.atMost(
            hello.slots, "WorkerHello.slots", max: UInt32(maxWorkerSlots),
            advice: "start the worker with a lower --slots")
        try checker.atMost(
            hello.giveBackThreads, "WorkerHello.give_back_threads", max: UInt32(maxWorkerSlots),
            advice: "start the worker with fewer --compute-threads")
    }

    static func check(_ heartbeat: Heartbeat) throws(Violation) {
        let checker = Checker(message: "Heartbeat")
        try checker.bytes(heartbeat.workerID, "Heartbeat.worker_id", max: maxWorkerIDBytes)
        try checker.atMost(heartbeat.running, "Heartbeat.running", max: UInt32(maxHeldTasks))
        try checker.count(heartbeat.holding.count, "Heartbeat.holding", max: maxHeldTasks)
    }

    /// A result's fields; `field` names it (made only for a violation: a coordinator checks thousands of
    /// results a second).
    static func check(_ result: TaskResult, message: String, field: @autoclosure () -> String) throws(Violation) {
        let checker = Checker(message: message)
        try checker.bytes(result.taskID, "\(field()).task_id", max: maxIDBytes)
        switch result.outcome {
        case .output(let output):
            try checker.bytes(output.mediaType, "\(field()).output.media_type", max: maxMediaTypeBytes)
            try checker.atMost(output.width, "\(field()).output.width", max: maxImageSide)
            try checker.atMost(output.height, "\(field()).output.height", max: maxImageSide)
            if !output.warnings.isEmpty {
                try checker.count(output.warnings.count, "\(field()).output.warnings", max: maxWarnings)
                for (index, warning) in output.warnings.enumerated() {
                    try checker.bytes(warning, "\(field()).output.warnings[\(index)]", max: maxWarningBytes)
                }
            }
            try checker.bytes(output.location, "\(field()).output.location", max: maxPathBytes)
            try checker.atMost(output.size, "\(field()).output.size", max: maxOutputBytes)
        case .failure(let failure):
            try checker.bytes(failure.message, "\(field()).failure.message", max: maxTextBytes)
        // retry_after_ms is clamped where it is taken (`RetryAfterClamp`); unknown codes read as unspecified.
        }
    }

    static func check(_ submit: SubmitBatch) throws(Violation) {
        let checker = Checker(message: "SubmitBatch")
        try checker.bytes(submit.requestID, "SubmitBatch.request_id", max: maxIDBytes)
        try checker.count(submit.items.count, "SubmitBatch.items", max: maxItemsPerBatch)
        for (index, item) in submit.items.enumerated() {
            // Sources are checked with their content rules in `BatchRegistry` (`PeerInputRules.sourceProblem`).
            try checker.bytes(item.outputName, "SubmitBatch.items[\(index)].output_name", max: maxNameBytes)
            if let upload = item.upload {
                try checker.atMost(
                    upload.size, "SubmitBatch.items[\(index)].upload.size", max: ClusterDefaults.uploadFileBytes)
                if upload.size == 0 {
                    throw checker.violation(
                        "SubmitBatch.items[\(index)].upload.size", .invalidRequest,
                        "is 0: an empty file is no image")
                }
            }
            // A relative path (a photo library's folders), written below --out or a sink: never out of it.
            if !item.outputName.isEmpty {
                try checker.outputPath(item.outputName, "SubmitBatch.items[\(index)].output_name")
            }
        }
        if let parameters = submit.parameters {
            try check(parameters, field: "SubmitBatch.parameters", checker: checker)
        }
        try checker.bytes(submit.sink, "SubmitBatch.sink", max: maxPathBytes)
        try checker.bytes(submit.s3Endpoint, "SubmitBatch.s3_endpoint", max: maxEndpointBytes)
    }

    static func check(_ request: RetryBatch, maxBatchItems: Int) throws(Violation) {
        let checker = Checker(message: "RetryBatch")
        try checker.bytes(request.requestID, "RetryBatch.request_id", max: maxIDBytes)
        try checker.bytes(request.batchID, "RetryBatch.batch_id", max: maxIDBytes)
        try checker.count(request.items.count, "RetryBatch.items", max: maxBatchItems)
        for (index, item) in request.items.enumerated() {
            try checker.bytes(item, "RetryBatch.items[\(index)]", max: maxPathBytes)
        }
    }

    /// The filter's and encoders' parameters: fractions within 0...1, a blur radius of 0 or 0.5...500,
    /// qualities 0...100, an angle within -360...360 degrees (the image format and the falloff are enums, refused
    /// when unknown on decoding).
    static func check(_ parameters: WireTiltShiftParameters, field: String, checker: Checker) throws(Violation) {
        try checker.fraction(parameters.focusPosition, "\(field).focus_position")
        try checker.fraction(parameters.sharpBand, "\(field).sharp_band")
        try checker.fraction(parameters.transition, "\(field).transition")
        let radius = parameters.blurRadius
        if !(radius == 0 || (radius.isFinite && radius >= 0.5 && radius <= maxBlurRadius)) {
            throw checker.violation(
                "\(field).blur_radius", .invalidRequest,
                "is \(radius), neither 0 nor within 0.5...\(Int(maxBlurRadius))")
        }
        try checker.atMost(parameters.jpegQuality, "\(field).jpeg_quality", max: maxQuality)
        try checker.atMost(parameters.webpQuality, "\(field).webp_quality", max: maxQuality)
        try checker.atMost(parameters.avifQuality, "\(field).avif_quality", max: maxQuality)
        let angle = Double(parameters.angle)
        if !(angle.isFinite && TiltShiftParameters.angleRange.contains(angle)) {
            throw checker.violation(
                "\(field).angle", .invalidRequest, "is \(parameters.angle), not within -360...360 degrees")
        }
    }

    // MARK: What a worker receives

    /// Checks an assignment before a worker runs it: the first field out of bounds, which the worker
    /// answers as the task's failure (a worker answers every assignment it receives).
    public static func violation(in assignment: TaskAssignment) -> Violation? {
        do {
            try check(assignment)
            return nil
        } catch {
            return error
        }
    }

    static func check(_ assignment: TaskAssignment) throws(Violation) {
        let checker = Checker(message: "TaskAssignment")
        if let unreadable = assignment.unreadableField {
            throw Violation(
                message: "TaskAssignment", field: "TaskAssignment.parameters", code: .invalidRequest,
                reason: "\(unreadable): a value this worker does not know (upgrade the worker)")
        }
        if assignment.kind == .unspecified {
            throw checker.violation(
                "TaskAssignment.kind", .invalidRequest,
                "is not a kind this worker knows (download, tilt-shift, noop): upgrade the worker")
        }
        try checker.bytes(assignment.taskID, "TaskAssignment.task_id", max: maxIDBytes)
        try checker.bytes(assignment.batchID, "TaskAssignment.batch_id", max: maxIDBytes)
        try checker.bytes(assignment.source, "TaskAssignment.source", max: maxPathBytes)
        try checker.count(assignment.inputs.count, "TaskAssignment.inputs", max: maxInputsPerAssignment)
        for (index, input) in assignment.inputs.enumerated() {
            try checker.bytes(input.fromTaskID, "TaskAssignment.inputs[\(index)].from_task_id", max: maxIDBytes)
            try checker.bytes(input.mediaType, "TaskAssignment.inputs[\(index)].media_type", max: maxMediaTypeBytes)
        }
        if let parameters = assignment.parameters {
            try check(parameters, field: "TaskAssignment.parameters", checker: checker)
        }
        try checker.bytes(assignment.sink, "TaskAssignment.sink", max: maxPathBytes)
        try checker.bytes(assignment.sinkName, "TaskAssignment.sink_name", max: maxNameBytes)
        try checker.bytes(assignment.s3Endpoint, "TaskAssignment.s3_endpoint", max: maxEndpointBytes)
        if let followOn = assignment.followOn {
            try checker.bytes(followOn.taskID, "TaskAssignment.follow_on.task_id", max: maxIDBytes)
            if let parameters = followOn.parameters {
                try check(parameters, field: "TaskAssignment.follow_on.parameters", checker: checker)
            }
            try checker.bytes(followOn.sink, "TaskAssignment.follow_on.sink", max: maxPathBytes)
            try checker.bytes(followOn.sinkName, "TaskAssignment.follow_on.sink_name", max: maxNameBytes)
        }
    }

    // MARK: What a client receives

    /// The first field of a coordinator's answer out of bounds, for a client that sizes its tables by the
    /// counts it announces; `nil` when the answer is within bounds.
    public static func violation(inAnswer message: Message) -> Violation? {
        do {
            switch message {
            case .batchAccepted(let accepted):
                try Checker(message: "BatchAccepted").atMost(
                    Int(accepted.itemCount), "BatchAccepted.item_count", max: maxItemsPerBatch)
            case .retryAccepted(let accepted):
                let checker = Checker(message: "RetryAccepted")
                try checker.atMost(Int(accepted.itemCount), "RetryAccepted.item_count", max: maxItemsPerBatch)
                try checker.count(
                    accepted.itemIndexes.count, "RetryAccepted.item_indexes", max: Int(accepted.itemCount))
            case .itemsAdded(let added):
                // first_index + the items added: the batch's size after the manifest, in 64-bit arithmetic.
                try Checker(message: "ItemsAdded").atMost(
                    Int(added.firstIndex) + added.items.count, "ItemsAdded.first_index + items", max: maxItemsPerBatch)
            case .uploadRequest(let request):
                let checker = Checker(message: "UploadRequest")
                try checker.bytes(request.batchID, "UploadRequest.batch_id", max: maxIDBytes)
                try checker.count(request.items.count, "UploadRequest.items", max: maxUploadsPerRequest)
                for (index, item) in request.items.enumerated() {
                    try checker.bytes(item.path, "UploadRequest.items[\(index)].path", max: maxPathBytes)
                }
            case .statusReply(let reply):
                let checker = Checker(message: "StatusReply")
                for (index, batch) in reply.batches.enumerated() {
                    try checker.atMost(
                        Int(batch.itemCount), "StatusReply.batches[\(index)].item_count", max: maxItemsPerBatch)
                }
            default:
                break
            }
            return nil
        } catch {
            return error
        }
    }
}
