/// The error with which items cancelled by a client's request finish.
struct BatchCancelledError: Error, CustomStringConvertible {
    let batchID: String
    var description: String { "cancelled by request (batch \(batchID))" }
}
