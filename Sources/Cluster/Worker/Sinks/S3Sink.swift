import Fetching
import Runtime

/// An S3 bucket (or an S3-compatible store) under a prefix, `s3://BUCKET/PREFIX`: each output is one
/// signed PUT from the worker (libcurl's AWS SigV4, on the fetcher's transfer thread) to `PREFIX/NAME`.
/// A single PUT is atomic in S3: an upload cut short leaves no object. Names are unique within a batch;
/// a later batch with the same names replaces its objects (S3 has no "create only" for every store).
struct S3Sink: OutputSink {
    let prefix: S3Location
    /// The S3-compatible endpoint (`nil`: AWS).
    let endpoint: String?
    let fetcher: ImageFetcher
    /// For the checksum (CPU work, never on Swift's cooperative pool).
    let threads: ComputeThreads

    var description: String { prefix.description }

    func store(_ bytes: [UInt8], name: String, mediaType: String) async throws -> StoredOutput {
        let location = prefix.appending(name)
        let crc = try await threads.run { _ in CRC32C.checksum(bytes) }
        do {
            try await fetcher.upload(bytes, contentType: mediaType, to: location, endpoint: endpoint)
        } catch let error as S3Error {
            throw SinkError(sink: description, reason: error.description)
        }
        return StoredOutput(location: location.description, size: UInt64(bytes.count), crc32c: crc)
    }
}
