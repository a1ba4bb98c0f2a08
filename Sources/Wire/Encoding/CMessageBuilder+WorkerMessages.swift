import CShiftworkProto

/// The messages a worker and the coordinator exchange about the worker itself: hello, welcome, heartbeat, goodbye.
extension CMessageBuilder {
    mutating func workerHello(_ m: WorkerHello) -> UnsafeMutablePointer<Shiftwork__V1__WorkerHello> {
        let c = arena.make(Shiftwork__V1__WorkerHello.self)
        shiftwork__v1__worker_hello__init(c)
        c.pointee.worker_id = string(m.workerID)
        c.pointee.slots = m.slots
        c.pointee.version = string(m.version)
        c.pointee.hostname = string(m.hostname)
        c.pointee.accepts_batches = m.acceptsBatches ? 1 : 0
        c.pointee.accepts_chained_tasks = m.acceptsChainedTasks ? 1 : 0
        c.pointee.give_back_threads = m.giveBackThreads
        return c
    }

    mutating func welcome(_ m: Welcome) -> UnsafeMutablePointer<Shiftwork__V1__Welcome> {
        let c = arena.make(Shiftwork__V1__Welcome.self)
        shiftwork__v1__welcome__init(c)
        c.pointee.heartbeat_interval_ms = m.heartbeatIntervalMs
        c.pointee.coordinator_id = string(m.coordinatorID)
        c.pointee.max_message_bytes = m.maxMessageBytes
        c.pointee.accepts_batches = m.acceptsBatches ? 1 : 0
        return c
    }

    mutating func heartbeat(_ m: Heartbeat) -> UnsafeMutablePointer<Shiftwork__V1__Heartbeat> {
        let c = arena.make(Shiftwork__V1__Heartbeat.self)
        shiftwork__v1__heartbeat__init(c)
        c.pointee.worker_id = string(m.workerID)
        c.pointee.running = m.running
        c.pointee.dropped_messages = m.droppedMessages
        c.pointee.last_sequence = m.lastSequence
        c.pointee.n_holding = m.holding.count
        c.pointee.holding = arena.copy(m.holding)
        return c
    }

    mutating func workerGoodbye(_ m: WorkerGoodbye) -> UnsafeMutablePointer<Shiftwork__V1__WorkerGoodbye> {
        let c = arena.make(Shiftwork__V1__WorkerGoodbye.self)
        shiftwork__v1__worker_goodbye__init(c)
        c.pointee.worker_id = string(m.workerID)
        c.pointee.draining = m.draining ? 1 : 0
        return c
    }
}
