import Runtime

/// The bounded hand-over between a socket's thread (the producer) and the one task that consumes a
/// ``SocketChannel``'s messages: groups of messages in order, never more than the high watermark of
/// messages held, with the producer told to stop reading at the high watermark and woken below the low.
final class InboundBuffer: Sendable {
    private struct State {
        var groups: [[[[UInt8]]]] = []
        /// Index of the next group to hand out in `groups` (taken groups are dropped in bulk).
        var head = 0
        /// Messages in `groups[head...]`.
        var buffered = 0
        /// The most messages ever held at once.
        var peak = 0
        /// Whether the producer stopped reading (it reached the high watermark) and waits to be woken.
        var paused = false
        var finished = false
        /// The consumer, suspended in `next()` while nothing is held.
        var waiter: CheckedContinuation<[[[UInt8]]]?, Never>?
    }

    let watermarks: InboundWatermarks
    private let state = InlineLock(State())
    /// Wakes the producer once the consumer took the held messages down to the low watermark.
    private let wakeProducer: @Sendable () -> Void

    init(watermarks: InboundWatermarks, wakeProducer: @escaping @Sendable () -> Void) {
        self.watermarks = watermarks
        self.wakeProducer = wakeProducer
    }

    // MARK: Producer (the socket's thread)

    /// How many more messages the producer may read now; 0 means: stop reading until woken. Once the
    /// high watermark was reached, 0 until the consumer has taken the held messages down to the low one.
    func capacity() -> Int {
        state.withLock { state in
            if state.paused { return 0 }
            let room = max(0, watermarks.high - state.buffered)
            if room == 0 { state.paused = true }
            return room
        }
    }

    /// Hands over a group of messages (at most the last `capacity()`), straight to a waiting consumer
    /// when there is one.
    func append(_ group: [[[UInt8]]]) {
        guard !group.isEmpty else { return }
        let waiter: CheckedContinuation<[[[UInt8]]]?, Never>? = state.withLock { state in
            if state.finished { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            state.groups.append(group)
            state.buffered += group.count
            state.peak = max(state.peak, state.buffered)
            return nil
        }
        waiter?.resume(returning: group)
    }

    /// No more messages: the consumer gets what is held, then the end.
    func finish() {
        let waiter = state.withLock { state in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    // MARK: Consumer

    /// Messages held for the consumer now.
    var bufferedMessages: Int { state.withLock { $0.buffered } }

    /// The most messages held at once so far (never above the high watermark).
    var peakBufferedMessages: Int { state.withLock { $0.peak } }

    /// The next group of messages in order; `nil` once finished and emptied, or when the consuming task
    /// is cancelled. Runs on the caller's actor (no hop off it and back for each group).
    func next(isolation actor: isolated (any Actor)? = #isolation) async -> [[[UInt8]]]? {
        if let group = state.withLock({ popLocked(&$0) }) {
            resumeProducerIfDrained()
            return group
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<[[[UInt8]]]?, Never>) in
                let immediate: [[[UInt8]]]?? = state.withLock { state in
                    // Cancelled before the handler below could find a waiter: it is set by now.
                    if Task.isCancelled { return .some(nil) }
                    if let group = popLocked(&state) { return .some(group) }
                    if state.finished { return .some(nil) }
                    state.waiter = continuation
                    return .none
                }
                if case .some(let group) = immediate {
                    continuation.resume(returning: group)
                    resumeProducerIfDrained()
                }
            }
        } onCancel: {
            let waiter = state.withLock { state in
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(returning: nil)
        }
    }

    private func popLocked(_ state: inout State) -> [[[UInt8]]]? {
        guard state.head < state.groups.count else { return nil }
        let group = state.groups[state.head]
        state.groups[state.head] = []
        state.head += 1
        state.buffered -= group.count
        if state.head == state.groups.count {
            state.groups.removeAll(keepingCapacity: true)
            state.head = 0
        } else if state.head >= 64, state.head * 2 >= state.groups.count {
            state.groups.removeFirst(state.head)
            state.head = 0
        }
        return group
    }

    private func resumeProducerIfDrained() {
        let wake = state.withLock { state in
            guard state.paused, state.buffered <= watermarks.low else { return false }
            state.paused = false
            return true
        }
        if wake { wakeProducer() }
    }
}
