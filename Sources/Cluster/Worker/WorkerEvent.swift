import Messaging
import Wire

/// What reaches a worker's loop (`Worker.serve`) from outside it, through its inbox: posted from other
/// threads (an operation finishing, the socket's monitor) or from its service group, consumed in order.
enum WorkerEvent: Sendable {
    /// A task's operation finished, with the result read from it.
    case taskFinished(AssignedTask, TaskResult)
    /// The socket's monitor saw a handshake fail (with CurveZMQ).
    case handshakeFailed(HandshakeFailure)
    /// The socket monitor saw the connection of the worker's socket number `generation` become live or end
    /// (with several coordinators).
    case connection(ConnectionEvent, generation: Int)
    /// The coordinator watch may say to turn now (a passive refusal came).
    case turnDue
    /// The service group shuts down gracefully: drain.
    case drainRequested
}
