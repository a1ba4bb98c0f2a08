import Imaging

/// One failed download attempt: the error to report, and whether another attempt may succeed.
///
/// ``FetchOperation`` throws it to the engine, whose ``FetchConfiguration/retryPolicy`` retries the
/// transient ones; what finally escapes a fetch is always the plain `ImagingError`.
struct DownloadFailure: Error, CustomStringConvertible {
    /// What went wrong, naming the URL and the cause.
    let error: ImagingError
    /// `true` for failures that a later attempt may not meet (connection refused or reset, timeouts,
    /// HTTP 408, 429 and 5xx); `false` for the others (other 4xx, limits, redirects, bad URLs).
    let isTransient: Bool
    var description: String { error.message }

    /// The error to report when no attempt follows this one, the `attempts` made counted in its message.
    func finalError(attempts: Int) -> ImagingError {
        guard isTransient, attempts > 1 else { return error }
        return ImagingError(error.kind, error.message + " (after \(attempts) attempts)")
    }
}
