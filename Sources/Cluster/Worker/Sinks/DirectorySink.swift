import Foundation
import Runtime

/// A directory every worker reaches (a shared volume): each output goes to its name's folder below it (made
/// as needed, `OutputTree`: `2024/01/IMG_0001.jpg`), written as a nameless file
/// (`O_TMPFILE`; a hidden temporary name where the file system has none), synced, and linked under its
/// final name, which is never replaced (`name.ext`, else `name-2.ext`, …: unique within the batch and
/// beside earlier batches' files); the directory is synced after. A worker killed mid-write leaves nothing
/// (at most a hidden `.partial` file on a file system without nameless files), never a truncated file under
/// a final name. The file I/O runs on the worker's `ComputeThreads`, never on Swift's cooperative pool.
struct DirectorySink: OutputSink {
    let directory: URL
    let threads: ComputeThreads

    var description: String { directory.path }

    func store(_ bytes: [UInt8], name: String, mediaType: String) async throws -> StoredOutput {
        try await threads.run { _ in try write(bytes, name: name) }
    }

    /// Stores `bytes` under `name` now, on the calling thread (blocking file I/O: one of ``threads``, never
    /// Swift's cooperative pool). `SinkTiltShiftOperation` calls it on a sink thread straight after the
    /// pipeline (`ComputeThreads.run(_:then:_:)`).
    ///
    /// - Throws: `SinkError`, naming the sink and the reason.
    func write(_ bytes: [UInt8], name: String) throws -> StoredOutput {
        let written: OutputFile.Written
        do {
            // A relative path keeps a library's folders: they are made below the sink, never through a link.
            let (folder, fileName) = try OutputTree.prepare(name, under: directory, durable: true)
            let fileExtension = (fileName as NSString).pathExtension
            let stem = (fileName as NSString).deletingPathExtension
            written = try OutputFile.write(
                bytes, in: folder, stem: stem, fileExtension: fileExtension,
                overwrite: false, durable: true)
        } catch let error as OutputTreeError {
            if !Self.isDirectory(directory) {
                throw SinkError(
                    sink: description, reason: "no such directory on this worker (is the shared volume mounted here?)")
            }
            throw SinkError(sink: description, reason: "\(error)")
        } catch let error as OutputFileError {
            // No stat beforehand: the first system call into the directory says whether it is there.
            if error.errno == ENOENT || error.errno == ENOTDIR, !Self.isDirectory(directory) {
                throw SinkError(
                    sink: description, reason: "no such directory on this worker (is the shared volume mounted here?)")
            }
            throw SinkError(sink: description, reason: "\(error)")
        }
        return StoredOutput(location: written.url.path, size: UInt64(bytes.count), crc32c: CRC32C.checksum(bytes))
    }

    private static func isDirectory(_ url: URL) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) && isDirectory.boolValue
    }
}
