import Fetching
import Foundation
import Runtime

/// Where a worker writes a batch's outputs itself (`TaskAssignment.sink`), so that their bytes never
/// cross the coordinator: only `StoredOutput`, their metadata, does.
protocol OutputSink: Sendable {
    /// The sink as the user gave it (a directory or `s3://BUCKET/PREFIX`), for messages.
    var description: String { get }

    /// Stores `bytes` (of `mediaType`) under `name` (a relative path, `OutputPath`, ending in the file name
    /// with its extension: `2024/01/IMG_0001.jpg`), whole or not at all; a directory sink makes the folders.
    ///
    /// - Throws: `SinkError`, naming the sink and the reason.
    func store(_ bytes: [UInt8], name: String, mediaType: String) async throws -> StoredOutput
}

/// What a sink reports of an output it stored.
struct StoredOutput: Sendable {
    /// Where it is: a path, or an `s3://` URL.
    let location: String
    let size: UInt64
    /// CRC-32C of its bytes.
    let crc32c: UInt32
}

/// A write to a sink that failed: the item fails with `FailureCode.sink` and this message, which names
/// the sink and the reason (never credentials); the worker and the batch go on.
struct SinkError: Error, CustomStringConvertible {
    let sink: String
    let reason: String
    var description: String { "sink \(sink): \(reason)" }
}

/// Makes the sink an assignment names.
enum OutputSinks {
    /// Checks a `TaskAssignment.sinkName` from the network: a relative path (`OutputPath`: the folders of a
    /// photo library and the file's stem; no `..`, not absolute, no hidden component, no NUL or other control
    /// characters, within its bounds), so that no output lands outside its sink.
    static func checkName(_ name: String, sink: String) throws(SinkError) {
        if let problem = OutputPath.problem(name) { throw SinkError(sink: sink, reason: problem) }
    }

    /// The sink for `target` (`TaskAssignment.sink`): a directory path (or `file://` URL), or
    /// `s3://BUCKET/PREFIX` (at `s3Endpoint`, empty: AWS) uploaded through `fetcher`.
    static func make(
        _ target: String, s3Endpoint: String = "", threads: ComputeThreads,
        fetcher: ImageFetcher? = nil
    ) throws(SinkError) -> any OutputSink {
        if S3Location.isS3(target) {
            guard let fetcher else { throw SinkError(sink: target, reason: "S3 sinks need the worker's fetcher") }
            do {
                return S3Sink(
                    prefix: try S3Location(target), endpoint: s3Endpoint.isEmpty ? nil : s3Endpoint,
                    fetcher: fetcher, threads: threads)
            } catch {
                throw SinkError(sink: target, reason: error.description)
            }
        }
        if target.hasPrefix("file://") {
            guard let url = URL(string: target), url.isFileURL else {
                throw SinkError(sink: target, reason: "not a valid file:// URL")
            }
            return DirectorySink(directory: url, threads: threads)
        }
        guard target.hasPrefix("/") else {
            throw SinkError(sink: target, reason: "a directory sink must be an absolute path every worker reaches")
        }
        return DirectorySink(directory: URL(fileURLWithPath: target, isDirectory: true), threads: threads)
    }
}
