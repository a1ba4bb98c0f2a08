import Foundation
import Operations

/// A directory every worker reaches (a shared volume): each output is written to a hidden temporary name,
/// synced, and linked under its final name, which is never replaced (`name.ext`, else `name-2.ext`, …:
/// unique within the batch and beside earlier batches' files); the directory is synced after. A worker
/// killed mid-write leaves at most a hidden `.partial` file, never a truncated one under a final name.
/// The file I/O runs on the worker's `ComputeThreads`, never on Swift's cooperative pool.
struct DirectorySink: OutputSink {
    let directory: URL
    let threads: ComputeThreads

    var description: String { directory.path }

    func store(_ bytes: [UInt8], name: String, mediaType: String) async throws -> StoredOutput {
        let (directory, sink) = (directory, description)
        let fileExtension = (name as NSString).pathExtension
        let stem = (name as NSString).deletingPathExtension
        return try await threads.run { _ in
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: directory.path, isDirectory: &isDirectory), isDirectory.boolValue else {
                throw SinkError(sink: sink, reason: "no such directory on this worker (is the shared volume mounted here?)")
            }
            let written: OutputFile.Written
            do {
                written = try OutputFile.write(bytes, in: directory, stem: stem, fileExtension: fileExtension,
                                               overwrite: false, durable: true)
            } catch let error as OutputFileError {
                throw SinkError(sink: sink, reason: "\(error)")
            }
            return StoredOutput(location: written.url.path, size: UInt64(bytes.count), crc32c: CRC32C.checksum(bytes))
        }
    }
}
