import Operations

/// Fetches one image (`http(s)://`, `file://` or a local path) as an operation of the engine.
///
/// Its output, a `FetchedImage`, can be injected into a `TiltShiftOperation`:
/// ```swift
/// let download = DownloadOperation(source: url, fetcher: fetcher)
/// let tiltShift = TiltShiftOperation(parameters: .coreImage)
/// try tiltShift.injectResult(from: download)
/// try queue.addOperations([download, tiltShift])
/// ```
/// Cancelling the operation abandons the transfer.
public final class DownloadOperation: ResultOperation<FetchedImage>, @unchecked Sendable {
    /// The URL or path to fetch.
    public let source: String
    private let fetcher: ImageFetcher

    /// Creates a download of `source` through `fetcher` (which holds the limits and the HTTP client).
    public init(source: String, fetcher: ImageFetcher, priority: OperationPriority = .normal) {
        self.source = source
        self.fetcher = fetcher
        super.init(name: "download \(source)", priority: priority)
    }

    /// Fetches the bytes and recognises their format.
    public override func produce() async throws -> FetchedImage {
        try await fetcher.fetch(source)
    }
}
