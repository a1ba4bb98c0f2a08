import CZeroMQ

/// An error reported by libzmq, with the operation that failed and libzmq's own explanation.
public struct ZeroMQError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The `errno` value libzmq set.
    public let code: Int32
    /// What Shiftwork was doing, e.g. `bind tcp://127.0.0.1:5570`.
    public let operation: String

    /// Captures the calling thread's current `errno` for `operation`.
    static func last(_ operation: String) -> ZeroMQError {
        ZeroMQError(code: zmq_errno(), operation: operation)
    }

    /// Creates an error for `operation` with an explicit errno `code`.
    public init(code: Int32, operation: String) {
        self.code = code
        self.operation = operation
    }

    public var description: String {
        "\(operation): \(String(cString: zmq_strerror(code)))"
    }

    /// The context was shut down while the call was waiting.
    public var isTerminated: Bool { code == ETERM }
}
