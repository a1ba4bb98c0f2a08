/// How a transfer ended, as the ``TransferLoop`` hands it back: libcurl's result, what the last
/// response said, and the body when it was kept.
struct TransferReport: Sendable {
    /// The URL requested.
    var url: String
    /// libcurl's result code (`CURLE_OK`: the transfer completed, whatever the HTTP status).
    var curlCode: UInt32
    /// libcurl's message for a failure (its error buffer), empty otherwise.
    var curlMessage: String
    /// The `errno` of a failed connection (e.g. `ECONNREFUSED`), 0 if none.
    var systemError: Int32
    /// The last response's status code; 0 when no response arrived.
    var status: Int
    /// The URL of the last request, after redirects.
    var effectiveURL: String?
    /// The last `Location` header received (raw, as the server sent it).
    var location: String?
    /// The last response's `Retry-After` header (raw).
    var retryAfter: String?
    /// The body of a 2xx response; empty otherwise.
    var body: [UInt8]
    /// Why the loop stopped the transfer itself, if it did.
    var stop: TransferStop?
    /// The source policy's refusal when every address the transfer tried to connect to was refused (then
    /// no connection was opened for the request that failed); `nil` otherwise.
    var refusal: SourceRefusal? = nil
}

/// A reason the ``TransferLoop`` ended a transfer before libcurl did.
enum TransferStop: Sendable, Equatable {
    /// The response announced a `Content-Length` of this many bytes, over the limit.
    case announcedTooLarge(Int)
    /// The body grew past the limit.
    case bodyTooLarge
    /// The final response is not a success (its status is in the report): its body is not wanted.
    case unsuccessfulStatus
    /// Nothing arrived for the request's read timeout.
    case silent
    /// The waiting task was cancelled.
    case cancelled
    /// The loop was shut down.
    case shutDown
    /// libcurl refused to set the transfer up (the message says why).
    case setupFailed(String)
}
