import CShiftworkProto

/// Encodes ``JournalRecord``s into protobuf `JournalRecord` bytes and back, with the same protobuf-c
/// code and conversions as the wire messages. Decoding never traps: a damaged record is a ``WireError``.
public enum JournalCodec {
    /// The bytes of `record`.
    public static func encode(_ record: JournalRecord) -> [UInt8] {
        // A record holds no image payloads (outputs live in the results directory): nothing to pin.
        var builder = CMessageBuilder(pinned: PinnedPayloads(buffers: []))
        let c = builder.journalRecord(record)
        let size = shiftwork__v1__journal_record__get_packed_size(c)
        let bytes = [UInt8](unsafeUninitializedCapacity: size) { buffer, initializedCount in
            guard let base = buffer.baseAddress else {
                initializedCount = 0
                return
            }
            initializedCount = shiftwork__v1__journal_record__pack(c, base)
        }
        builder.end()
        return bytes
    }

    /// The record held by `bytes`.
    ///
    /// - Throws: ``WireError/malformed(_:)`` for bytes that are not a record, ``WireError/missingBody``
    ///   for a record of a kind this version does not know.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(WireError) -> JournalRecord {
        guard let base = bytes.baseAddress, bytes.count > 0 else { throw .malformed("empty journal record") }
        guard let c = shiftwork__v1__journal_record__unpack(nil, bytes.count, base.assumingMemoryBound(to: UInt8.self))
        else {
            throw .malformed("not a valid JournalRecord (\(bytes.count) bytes)")
        }
        defer { shiftwork__v1__journal_record__free_unpacked(c, nil) }
        return try JournalRecord(c.pointee)
    }

    /// The record held by `bytes`; see ``decode(_:)-(UnsafeRawBufferPointer)``.
    public static func decode(_ bytes: [UInt8]) throws(WireError) -> JournalRecord {
        let result = bytes.withUnsafeBytes { buffer in
            Result { () throws(WireError) -> JournalRecord in try decode(buffer) }
        }
        return try result.get()
    }
}

extension CMessageBuilder {
    fileprivate mutating func journalRecord(
        _ record: JournalRecord
    ) -> UnsafeMutablePointer<Shiftwork__V1__JournalRecord> {
        let c = arena.make(Shiftwork__V1__JournalRecord.self)
        shiftwork__v1__journal_record__init(c)
        switch record {
        case .started(let coordinatorID, let incarnation, let unixMilliseconds):
            let started = arena.make(Shiftwork__V1__JournalStarted.self)
            shiftwork__v1__journal_started__init(started)
            started.pointee.coordinator_id = string(coordinatorID)
            started.pointee.incarnation = incarnation
            started.pointee.unix_ms = unixMilliseconds
            c.pointee.record_case = SHIFTWORK__V1__JOURNAL_RECORD__RECORD_STARTED
            c.pointee.started = started
        case .batchAccepted(let batchID, let client, let submit, let unixMilliseconds, let ownerKey):
            let accepted = arena.make(Shiftwork__V1__JournalBatchAccepted.self)
            shiftwork__v1__journal_batch_accepted__init(accepted)
            accepted.pointee.batch_id = string(batchID)
            accepted.pointee.client = bytes(client)
            accepted.pointee.submit = submitBatch(submit)
            accepted.pointee.unix_ms = unixMilliseconds
            accepted.pointee.owner_key = string(ownerKey)
            c.pointee.record_case = SHIFTWORK__V1__JOURNAL_RECORD__RECORD_BATCH_ACCEPTED
            c.pointee.batch_accepted = accepted
        case .itemFinished(let item):
            c.pointee.record_case = SHIFTWORK__V1__JOURNAL_RECORD__RECORD_ITEM_FINISHED
            c.pointee.item_finished = itemFinished(item)
        case .itemsAdded(let added):
            c.pointee.record_case = SHIFTWORK__V1__JOURNAL_RECORD__RECORD_ITEMS_ADDED
            c.pointee.items_added = itemsAdded(added)
        case .batchCancelled(let cancel):
            c.pointee.record_case = SHIFTWORK__V1__JOURNAL_RECORD__RECORD_BATCH_CANCELLED
            c.pointee.batch_cancelled = cancelBatch(cancel)
        case .batchRetired(let batchID):
            let retired = arena.make(Shiftwork__V1__JournalBatchRetired.self)
            shiftwork__v1__journal_batch_retired__init(retired)
            retired.pointee.batch_id = string(batchID)
            c.pointee.record_case = SHIFTWORK__V1__JOURNAL_RECORD__RECORD_BATCH_RETIRED
            c.pointee.batch_retired = retired
        case .batchRetried(let batchID, let itemIndexes, let unixMilliseconds):
            let retried = arena.make(Shiftwork__V1__JournalBatchRetried.self)
            shiftwork__v1__journal_batch_retried__init(retried)
            retried.pointee.batch_id = string(batchID)
            retried.pointee.n_item_indexes = itemIndexes.count
            retried.pointee.item_indexes = arena.copy(itemIndexes)
            retried.pointee.unix_ms = unixMilliseconds
            c.pointee.record_case = SHIFTWORK__V1__JOURNAL_RECORD__RECORD_BATCH_RETRIED
            c.pointee.batch_retried = retried
        case .attemptFailed(let batchID, let itemIndex, let attempt):
            let failed = arena.make(Shiftwork__V1__JournalAttemptFailed.self)
            shiftwork__v1__journal_attempt_failed__init(failed)
            failed.pointee.batch_id = string(batchID)
            failed.pointee.item_index = itemIndex
            failed.pointee.attempt = attemptStatus(attempt)
            c.pointee.record_case = SHIFTWORK__V1__JOURNAL_RECORD__RECORD_ATTEMPT_FAILED
            c.pointee.attempt_failed = failed
        case .pairPosition(let term, let records):
            let position = arena.make(Shiftwork__V1__JournalPairPosition.self)
            shiftwork__v1__journal_pair_position__init(position)
            position.pointee.term = term
            position.pointee.records = records
            c.pointee.record_case = SHIFTWORK__V1__JOURNAL_RECORD__RECORD_PAIR_POSITION
            c.pointee.pair_position = position
        case .pairTerm(let term):
            let record = arena.make(Shiftwork__V1__JournalPairTerm.self)
            shiftwork__v1__journal_pair_term__init(record)
            record.pointee.term = term
            c.pointee.record_case = SHIFTWORK__V1__JOURNAL_RECORD__RECORD_PAIR_TERM
            c.pointee.pair_term = record
        case .pairHistory(let history):
            let record = arena.make(Shiftwork__V1__JournalPairHistory.self)
            shiftwork__v1__journal_pair_history__init(record)
            record.pointee.history = string(history)
            c.pointee.record_case = SHIFTWORK__V1__JOURNAL_RECORD__RECORD_PAIR_HISTORY
            c.pointee.pair_history = record
        }
        return c
    }
}

extension JournalRecord {
    fileprivate init(_ c: Shiftwork__V1__JournalRecord) throws(WireError) {
        switch c.record_case {
        case SHIFTWORK__V1__JOURNAL_RECORD__RECORD_STARTED:
            let started = try required(c.started, "JournalRecord.started").pointee
            self = .started(
                coordinatorID: try readString(started.coordinator_id), incarnation: started.incarnation,
                unixMilliseconds: started.unix_ms)
        case SHIFTWORK__V1__JOURNAL_RECORD__RECORD_BATCH_ACCEPTED:
            let accepted = try required(c.batch_accepted, "JournalRecord.batch_accepted").pointee
            let submit = try required(accepted.submit, "JournalBatchAccepted.submit").pointee
            self = .batchAccepted(
                batchID: try readString(accepted.batch_id), client: readBytes(accepted.client),
                submit: try SubmitBatch(submit), unixMilliseconds: accepted.unix_ms,
                ownerKey: try readString(accepted.owner_key))
        case SHIFTWORK__V1__JOURNAL_RECORD__RECORD_ITEM_FINISHED:
            self = .itemFinished(try ItemFinished(try required(c.item_finished, "JournalRecord.item_finished").pointee))
        case SHIFTWORK__V1__JOURNAL_RECORD__RECORD_ITEMS_ADDED:
            self = .itemsAdded(try ItemsAdded(try required(c.items_added, "JournalRecord.items_added").pointee))
        case SHIFTWORK__V1__JOURNAL_RECORD__RECORD_BATCH_CANCELLED:
            self = .batchCancelled(
                try CancelBatch(try required(c.batch_cancelled, "JournalRecord.batch_cancelled").pointee))
        case SHIFTWORK__V1__JOURNAL_RECORD__RECORD_BATCH_RETIRED:
            let retired = try required(c.batch_retired, "JournalRecord.batch_retired").pointee
            self = .batchRetired(batchID: try readString(retired.batch_id))
        case SHIFTWORK__V1__JOURNAL_RECORD__RECORD_BATCH_RETRIED:
            let retried = try required(c.batch_retried, "JournalRecord.batch_retried").pointee
            let indexes = readUInt32s(retried.n_item_indexes, retried.item_indexes)
            self = .batchRetried(
                batchID: try readString(retried.batch_id), itemIndexes: indexes,
                unixMilliseconds: retried.unix_ms)
        case SHIFTWORK__V1__JOURNAL_RECORD__RECORD_ATTEMPT_FAILED:
            let failed = try required(c.attempt_failed, "JournalRecord.attempt_failed").pointee
            self = .attemptFailed(
                batchID: try readString(failed.batch_id), itemIndex: failed.item_index,
                attempt: try AttemptStatus(try required(failed.attempt, "JournalAttemptFailed.attempt").pointee))
        case SHIFTWORK__V1__JOURNAL_RECORD__RECORD_PAIR_POSITION:
            let position = try required(c.pair_position, "JournalRecord.pair_position").pointee
            self = .pairPosition(term: position.term, records: position.records)
        case SHIFTWORK__V1__JOURNAL_RECORD__RECORD_PAIR_TERM:
            self = .pairTerm(try required(c.pair_term, "JournalRecord.pair_term").pointee.term)
        case SHIFTWORK__V1__JOURNAL_RECORD__RECORD_PAIR_HISTORY:
            self = .pairHistory(
                try readString(try required(c.pair_history, "JournalRecord.pair_history").pointee.history))
        default:
            throw .missingBody
        }
    }
}
