import CShiftworkProto

/// The client messages: batches, their items, results, cancellation and refusals.
extension CMessageBuilder {
    mutating func batchItem(_ m: BatchItem) -> UnsafeMutablePointer<Shiftwork__V1__BatchItem> {
        let c = arena.make(Shiftwork__V1__BatchItem.self)
        shiftwork__v1__batch_item__init(c)
        c.pointee.source = string(m.source)
        c.pointee.output_name = string(m.outputName)
        return c
    }

    mutating func submitBatch(_ m: SubmitBatch) -> UnsafeMutablePointer<Shiftwork__V1__SubmitBatch> {
        let c = arena.make(Shiftwork__V1__SubmitBatch.self)
        shiftwork__v1__submit_batch__init(c)
        c.pointee.request_id = string(m.requestID)
        (c.pointee.n_items, c.pointee.items) = repeated(m.items) { $0.batchItem($1) }
        if let parameters = m.parameters {
            c.pointee.parameters = self.parameters(parameters)
        }
        c.pointee.kind = Shiftwork__V1__TaskKind(rawValue: m.kind.rawValue)
        c.pointee.accepts_batches = m.acceptsBatches ? 1 : 0
        c.pointee.sink = string(m.sink)
        c.pointee.s3_endpoint = string(m.s3Endpoint)
        if let retries = m.retries {
            c.pointee.retry_limit_case = SHIFTWORK__V1__SUBMIT_BATCH__RETRY_LIMIT_RETRIES
            c.pointee.retries = retries
        }
        c.pointee.deadline_seconds = m.deadlineSeconds
        c.pointee.priority = m.priority
        c.pointee.idempotency_key = string(m.idempotencyKey)
        return c
    }

    mutating func batchAccepted(_ m: BatchAccepted) -> UnsafeMutablePointer<Shiftwork__V1__BatchAccepted> {
        let c = arena.make(Shiftwork__V1__BatchAccepted.self)
        shiftwork__v1__batch_accepted__init(c)
        c.pointee.request_id = string(m.requestID)
        c.pointee.batch_id = string(m.batchID)
        c.pointee.item_count = m.itemCount
        c.pointee.coordinator_id = string(m.coordinatorID)
        c.pointee.attached = m.attached ? 1 : 0
        return c
    }

    mutating func fetchResults(_ m: FetchResults) -> UnsafeMutablePointer<Shiftwork__V1__FetchResults> {
        let c = arena.make(Shiftwork__V1__FetchResults.self)
        shiftwork__v1__fetch_results__init(c)
        c.pointee.request_id = string(m.requestID)
        c.pointee.batch_id = string(m.batchID)
        return c
    }

    mutating func itemFinished(_ m: ItemFinished) -> UnsafeMutablePointer<Shiftwork__V1__ItemFinished> {
        let c = arena.make(Shiftwork__V1__ItemFinished.self)
        shiftwork__v1__item_finished__init(c)
        c.pointee.batch_id = string(m.batchID)
        c.pointee.item_index = m.itemIndex
        c.pointee.output_name = string(m.outputName)
        switch m.outcome {
        case .output(let output):
            c.pointee.outcome_case = SHIFTWORK__V1__ITEM_FINISHED__OUTCOME_OUTPUT
            c.pointee.output = taskOutput(output)
        case .failure(let failure):
            c.pointee.outcome_case = SHIFTWORK__V1__ITEM_FINISHED__OUTCOME_FAILURE
            c.pointee.failure = taskFailure(failure)
        }
        return c
    }

    mutating func itemsAdded(_ m: ItemsAdded) -> UnsafeMutablePointer<Shiftwork__V1__ItemsAdded> {
        let c = arena.make(Shiftwork__V1__ItemsAdded.self)
        shiftwork__v1__items_added__init(c)
        c.pointee.batch_id = string(m.batchID)
        c.pointee.parent_index = m.parentIndex
        c.pointee.first_index = m.firstIndex
        (c.pointee.n_items, c.pointee.items) = repeated(m.items) { $0.batchItem($1) }
        return c
    }

    mutating func batchFinished(_ m: BatchFinished) -> UnsafeMutablePointer<Shiftwork__V1__BatchFinished> {
        let c = arena.make(Shiftwork__V1__BatchFinished.self)
        shiftwork__v1__batch_finished__init(c)
        c.pointee.batch_id = string(m.batchID)
        c.pointee.succeeded = m.succeeded
        c.pointee.failed = m.failed
        c.pointee.cancelled = m.cancelled
        return c
    }

    mutating func statusRequest(_ m: StatusRequest) -> UnsafeMutablePointer<Shiftwork__V1__StatusRequest> {
        let c = arena.make(Shiftwork__V1__StatusRequest.self)
        shiftwork__v1__status_request__init(c)
        c.pointee.request_id = string(m.requestID)
        c.pointee.batch_id = string(m.batchID)
        return c
    }

    mutating func cancelBatch(_ m: CancelBatch) -> UnsafeMutablePointer<Shiftwork__V1__CancelBatch> {
        let c = arena.make(Shiftwork__V1__CancelBatch.self)
        shiftwork__v1__cancel_batch__init(c)
        c.pointee.batch_id = string(m.batchID)
        c.pointee.n_item_indexes = m.itemIndexes.count
        c.pointee.item_indexes = arena.copy(m.itemIndexes)
        c.pointee.request_id = string(m.requestID)
        return c
    }

    mutating func cancelAccepted(_ m: CancelAccepted) -> UnsafeMutablePointer<Shiftwork__V1__CancelAccepted> {
        let c = arena.make(Shiftwork__V1__CancelAccepted.self)
        shiftwork__v1__cancel_accepted__init(c)
        c.pointee.request_id = string(m.requestID)
        c.pointee.batch_id = string(m.batchID)
        c.pointee.cancelled_items = m.cancelledItems
        return c
    }

    mutating func retryBatch(_ m: RetryBatch) -> UnsafeMutablePointer<Shiftwork__V1__RetryBatch> {
        let c = arena.make(Shiftwork__V1__RetryBatch.self)
        shiftwork__v1__retry_batch__init(c)
        c.pointee.request_id = string(m.requestID)
        c.pointee.batch_id = string(m.batchID)
        (c.pointee.n_items, c.pointee.items) = strings(m.items)
        c.pointee.accepts_batches = m.acceptsBatches ? 1 : 0
        return c
    }

    mutating func retryAccepted(_ m: RetryAccepted) -> UnsafeMutablePointer<Shiftwork__V1__RetryAccepted> {
        let c = arena.make(Shiftwork__V1__RetryAccepted.self)
        shiftwork__v1__retry_accepted__init(c)
        c.pointee.request_id = string(m.requestID)
        c.pointee.batch_id = string(m.batchID)
        c.pointee.n_item_indexes = m.itemIndexes.count
        c.pointee.item_indexes = arena.copy(m.itemIndexes)
        c.pointee.item_count = m.itemCount
        c.pointee.coordinator_id = string(m.coordinatorID)
        return c
    }

    mutating func refusal(_ m: Refusal) -> UnsafeMutablePointer<Shiftwork__V1__Refusal> {
        let c = arena.make(Shiftwork__V1__Refusal.self)
        shiftwork__v1__refusal__init(c)
        c.pointee.request_id = string(m.requestID)
        c.pointee.reason = string(m.reason)
        c.pointee.code = Shiftwork__V1__RefusalCode(rawValue: m.code.rawValue)
        return c
    }
}
