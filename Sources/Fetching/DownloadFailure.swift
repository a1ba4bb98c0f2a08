import Imaging

/// One failed download attempt: the error to report, and whether another attempt may succeed.
///
/// ``FetchOperation`` throws it to the engine, whose ``FetchConfiguration/retryPolicy`` retries the
/// transient ones; what finally escapes a fetch is always the plain `ImagingError`.
struct DownloadFailure: Error, CustomStringConvertible {
    /// What went wrong, naming the URL and the cause.
    let error: ImagingError
    /// `true` for failures that a later attempt may not meet (connection refused or reset, timeouts, a
    /// rate below the minimum, HTTP 408, 429 and 5xx); `false` for the others (other 4xx, limits,
    /// redirects to other schemes, bad URLs).
    let isTransient: Bool
    /// The wait the server asked for before another attempt (`Retry-After`), if any.
    var retryAfter: Duration? = nil

    var description: String { error.message }

    /// The error to report when no attempt follows this one: the attempts made are counted in its
    /// message, with `note` (why no more were made) when given.
    func finalError(attempts: Int, note: String? = nil) -> ImagingError {
        var remarks: [String] = []
        if isTransient && attempts > 1 { remarks.append("after \(attempts) attempts") }
        if let note { remarks.append(note) }
        guard !remarks.isEmpty else { return error }
        return ImagingError(error.kind, error.message + " (" + remarks.joined(separator: "; ") + ")")
    }
}
