import CShiftworkProto

/// The task messages: assignments with their parameters and injected inputs, results, cancellation.
extension CMessageBuilder {
    mutating func parameters(_ m: WireTiltShiftParameters) -> UnsafeMutablePointer<Shiftwork__V1__TiltShiftParameters> {
        let c = arena.make(Shiftwork__V1__TiltShiftParameters.self)
        shiftwork__v1__tilt_shift_parameters__init(c)
        c.pointee.focus_position = m.focusPosition
        c.pointee.sharp_band = m.sharpBand
        c.pointee.transition = m.transition
        c.pointee.blur_radius = m.blurRadius
        c.pointee.output_format = Shiftwork__V1__ImageFormat(rawValue: m.outputFormat.rawValue)
        c.pointee.jpeg_quality = m.jpegQuality
        c.pointee.webp_quality = m.webpQuality
        c.pointee.avif_quality = m.avifQuality
        c.pointee.colour_srgb = m.colourSRGB ? 1 : 0
        c.pointee.strip_metadata = m.stripMetadata ? 1 : 0
        c.pointee.angle = m.angle
        c.pointee.falloff = Shiftwork__V1__Falloff(rawValue: m.falloff.rawValue)
        return c
    }

    mutating func injectedInput(_ m: InjectedInput) -> UnsafeMutablePointer<Shiftwork__V1__InjectedInput> {
        let c = arena.make(Shiftwork__V1__InjectedInput.self)
        shiftwork__v1__injected_input__init(c)
        c.pointee.from_task_id = string(m.fromTaskID)
        c.pointee.data = bytes(m.data)
        c.pointee.media_type = string(m.mediaType)
        c.pointee.on_worker = m.onWorker ? 1 : 0
        return c
    }

    mutating func taskAssignment(_ m: TaskAssignment) -> UnsafeMutablePointer<Shiftwork__V1__TaskAssignment> {
        let c = arena.make(Shiftwork__V1__TaskAssignment.self)
        shiftwork__v1__task_assignment__init(c)
        c.pointee.task_id = string(m.taskID)
        c.pointee.batch_id = string(m.batchID)
        c.pointee.attempt = m.attempt
        c.pointee.kind = Shiftwork__V1__TaskKind(rawValue: m.kind.rawValue)
        c.pointee.source = string(m.source)
        (c.pointee.n_inputs, c.pointee.inputs) = repeated(m.inputs) { $0.injectedInput($1) }
        if let parameters = m.parameters {
            c.pointee.parameters = self.parameters(parameters)
        }
        c.pointee.task_key = m.taskKey
        c.pointee.sequence = m.sequence
        c.pointee.keep_output = m.keepOutput ? 1 : 0
        c.pointee.sink = string(m.sink)
        c.pointee.sink_name = string(m.sinkName)
        c.pointee.s3_endpoint = string(m.s3Endpoint)
        if let followOn = m.followOn {
            c.pointee.follow_on = chainedTask(followOn)
        }
        return c
    }

    mutating func chainedTask(_ m: ChainedTask) -> UnsafeMutablePointer<Shiftwork__V1__ChainedTask> {
        let c = arena.make(Shiftwork__V1__ChainedTask.self)
        shiftwork__v1__chained_task__init(c)
        c.pointee.task_id = string(m.taskID)
        c.pointee.attempt = m.attempt
        c.pointee.task_key = m.taskKey
        if let parameters = m.parameters {
            c.pointee.parameters = self.parameters(parameters)
        }
        c.pointee.sink = string(m.sink)
        c.pointee.sink_name = string(m.sinkName)
        return c
    }

    mutating func taskOutput(_ m: TaskOutput) -> UnsafeMutablePointer<Shiftwork__V1__TaskOutput> {
        let c = arena.make(Shiftwork__V1__TaskOutput.self)
        shiftwork__v1__task_output__init(c)
        c.pointee.data = bytes(m.data)
        c.pointee.media_type = string(m.mediaType)
        c.pointee.width = m.width
        c.pointee.height = m.height
        (c.pointee.n_warnings, c.pointee.warnings) = strings(m.warnings)
        c.pointee.held_on_worker = m.heldOnWorker ? 1 : 0
        c.pointee.location = string(m.location)
        c.pointee.size = m.size
        c.pointee.crc32c = m.crc32c
        return c
    }

    mutating func taskFailure(_ m: TaskFailure) -> UnsafeMutablePointer<Shiftwork__V1__TaskFailure> {
        let c = arena.make(Shiftwork__V1__TaskFailure.self)
        shiftwork__v1__task_failure__init(c)
        c.pointee.code = Shiftwork__V1__FailureCode(rawValue: m.code.rawValue)
        c.pointee.message = string(m.message)
        c.pointee.transient = m.isTransient ? 1 : 0
        c.pointee.retry_after_ms = m.retryAfterMs
        return c
    }

    mutating func taskResult(_ m: TaskResult) -> UnsafeMutablePointer<Shiftwork__V1__TaskResult> {
        let c = arena.make(Shiftwork__V1__TaskResult.self)
        shiftwork__v1__task_result__init(c)
        c.pointee.task_id = string(m.taskID)
        c.pointee.attempt = m.attempt
        c.pointee.task_key = m.taskKey
        switch m.outcome {
        case .output(let output):
            c.pointee.outcome_case = SHIFTWORK__V1__TASK_RESULT__OUTCOME_OUTPUT
            c.pointee.output = taskOutput(output)
        case .failure(let failure):
            c.pointee.outcome_case = SHIFTWORK__V1__TASK_RESULT__OUTCOME_FAILURE
            c.pointee.failure = taskFailure(failure)
        }
        return c
    }

    mutating func cancelTask(_ m: CancelTask) -> UnsafeMutablePointer<Shiftwork__V1__CancelTask> {
        let c = arena.make(Shiftwork__V1__CancelTask.self)
        shiftwork__v1__cancel_task__init(c)
        c.pointee.task_id = string(m.taskID)
        c.pointee.reason = string(m.reason)
        c.pointee.task_key = m.taskKey
        return c
    }

    mutating func giveBackTask(_ m: GiveBackTask) -> UnsafeMutablePointer<Shiftwork__V1__GiveBackTask> {
        let c = arena.make(Shiftwork__V1__GiveBackTask.self)
        shiftwork__v1__give_back_task__init(c)
        c.pointee.task_key = m.taskKey
        c.pointee.attempt = m.attempt
        return c
    }

    mutating func taskGivenBack(_ m: TaskGivenBack) -> UnsafeMutablePointer<Shiftwork__V1__TaskGivenBack> {
        let c = arena.make(Shiftwork__V1__TaskGivenBack.self)
        shiftwork__v1__task_given_back__init(c)
        c.pointee.task_key = m.taskKey
        c.pointee.attempt = m.attempt
        c.pointee.given_back = m.givenBack ? 1 : 0
        return c
    }
}
