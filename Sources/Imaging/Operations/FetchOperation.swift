import Operations

/// Fetches one source that may be an image or a manifest (a text list of images), as an operation of
/// the engine: what a worker runs for a download task, so that a batch can grow from a manifest.
/// `DownloadOperation` is the image-only form, whose output injects into a `TiltShiftOperation`.
public final class FetchOperation: ResultOperation<FetchedContent>, @unchecked Sendable {
    /// The URL or path to fetch.
    public let source: String
    private let fetcher: ImageFetcher

    /// Creates a fetch of `source` through `fetcher` (which holds the limits and the HTTP client).
    public init(source: String, fetcher: ImageFetcher, priority: OperationPriority = .normal) {
        self.source = source
        self.fetcher = fetcher
        super.init(name: "download \(source)", priority: priority)
    }

    /// Fetches the bytes and recognises an image or a manifest.
    public override func produce() async throws -> FetchedContent {
        try await fetcher.fetchContent(source)
    }
}
