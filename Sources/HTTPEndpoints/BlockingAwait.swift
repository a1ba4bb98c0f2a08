import Foundation

/// Runs `work` in a task and blocks the calling thread until it returns its value.
///
/// For the threads of an HTTP server (which may block) to ask an actor: the task only awaits, and the
/// calling thread waits outside Swift's cooperative pool. Never call it from a task.
public func blockingAwait<Value: Sendable>(_ work: @escaping @Sendable () async -> Value) -> Value {
    let completion = Completion<Value>()
    Task { completion.complete(await work()) }
    return completion.wait()
}

/// One value, handed from a task to a waiting thread.
private final class Completion<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is read and written only with `condition` locked.
    private let condition = NSCondition()
    private var value: Value?

    func complete(_ value: Value) {
        condition.lock()
        self.value = value
        condition.signal()
        condition.unlock()
    }

    func wait() -> Value {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let value { return value }
            condition.wait()
        }
    }
}
