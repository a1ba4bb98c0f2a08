import Dispatch

/// How `StripBlender` spreads a pass over its threads.
extension StripBlender {
    /// Runs `body` over the float columns split into one multiple-of-16 range per thread. The backward pass's
    /// ring is shared: each thread uses its own columns of it.
    func parallelColumns(_ body: @escaping @Sendable (Range<Int>) throws -> Void) throws {
        let vectors = columns / 16
        let workers = max(1, min(threads, vectors))
        try parallel(workers) { worker in
            try body((16 * (vectors * worker / workers))..<(16 * (vectors * (worker + 1) / workers)))
        }
    }

    /// Runs `body(worker)` for each worker, on the calling thread alone when there is one.
    func parallel(_ workers: Int, _ body: @escaping @Sendable (Int) throws -> Void) throws {
        if workers <= 1 {
            try body(0)
            return
        }
        let errors = FirstError()
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            do { try body(worker) } catch { errors.record(error) }
        }
        if let error = errors.first { throw error }
    }
}
