/// Why a worker stopped on its own.
public enum WorkerError: Error, CustomStringConvertible {
    /// The coordinator refused this worker and retrying will not help.
    case refused(String)
    /// The coordinator refused this worker's CurveZMQ handshake; the text says what to check.
    case notAuthorized(String)

    public var description: String {
        switch self {
        case .refused(let reason): "the coordinator refused this worker: \(reason)"
        case .notAuthorized(let advice): advice
        }
    }
}
