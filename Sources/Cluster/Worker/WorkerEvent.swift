import Messaging
import Wire

/// What reaches a worker's loop (`Worker.serve`) from outside it, through its inbox: posted from other
/// threads (an operation finishing, the socket's monitor) or from its service group, consumed in order.
enum WorkerEvent: Sendable {
    /// A task's operation finished, with the result read from it.
    case taskFinished(AssignedTask, TaskResult)
    /// The socket's monitor saw a handshake fail (with CurveZMQ).
    case handshakeFailed(HandshakeFailure)
    /// The service group shuts down gracefully: drain.
    case drainRequested
}
