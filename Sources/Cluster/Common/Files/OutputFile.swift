import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes one output image into the output directory: whole or not at all, and never over a file that is
/// already there unless told to.
///
/// The bytes go to a hidden temporary file first. Without `overwrite`, it is then *linked* under the
/// first free name of `stem.ext`, `stem-2.ext`, `stem-3.ext`, … (`link` fails when the name exists, so
/// even a file created meanwhile by another process is never replaced), and the temporary name is
/// removed. With `overwrite`, it is renamed over `stem.ext` (atomic: a reader sees the old or the new
/// image, never a mix). With `durable` (a worker writing into a sink), the file is synced before it gets
/// its name and the directory after, so that a crash leaves the whole file or none under that name.
/// Used by the client for `--out` and by workers for a directory sink.
enum OutputFile {
    /// Where an output went.
    struct Written: Equatable {
        /// The file written.
        let url: URL
        /// The name that was wanted but taken by an existing file (`nil`: written under it).
        let existing: URL?
    }

    /// Writes `bytes` as `stem.fileExtension` in `directory` (see the type's description).
    ///
    /// Blocking file I/O: call it on a thread of its own (`ComputeThreads`), not on Swift's pool.
    static func write(_ bytes: [UInt8], in directory: URL, stem: String, fileExtension: String, overwrite: Bool,
                      durable: Bool = false) throws -> Written {
        let wanted = directory.appendingPathComponent("\(stem).\(fileExtension)")
        let temporary = directory.appendingPathComponent(".\(stem).\(fileExtension).\(UUID().uuidString.prefix(8)).partial")
        if durable {
            try writeSynced(bytes, to: temporary)
        } else {
            try Data(bytes).write(to: temporary)
        }
        if overwrite {
            guard rename(temporary.path, wanted.path) == 0 else {
                let error = OutputFileError(url: wanted, errno: errno)
                unlink(temporary.path)
                throw error
            }
            if durable { syncDirectory(directory) }
            return Written(url: wanted, existing: nil)
        }
        defer { unlink(temporary.path) }
        for attempt in 1...10_000 {
            let candidate = attempt == 1 ? wanted : directory.appendingPathComponent("\(stem)-\(attempt).\(fileExtension)")
            if link(temporary.path, candidate.path) == 0 {
                if durable {
                    unlink(temporary.path)
                    syncDirectory(directory)
                }
                return Written(url: candidate, existing: attempt == 1 ? nil : wanted)
            }
            guard errno == EEXIST else { throw OutputFileError(url: candidate, errno: errno) }
        }
        throw OutputFileError(url: wanted, errno: EEXIST)
    }

    /// Writes `bytes` into a new file at `url` and syncs it to disk; on failure the file is removed.
    private static func writeSynced(_ bytes: [UInt8], to url: URL) throws {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw OutputFileError(url: url, errno: errno) }
        var failure: Int32 = 0
        bytes.withUnsafeBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            var offset = 0
            while offset < buffer.count {
                let written = writeToDescriptor(descriptor, base + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                offset += written
            }
        }
        if failure == 0, fsync(descriptor) != 0 { failure = errno }
        close(descriptor)
        if failure != 0 {
            unlink(url.path)
            throw OutputFileError(url: url, errno: failure)
        }
    }

    /// Syncs a directory's entries (a new name in it), best effort.
    private static func syncDirectory(_ directory: URL) {
        let descriptor = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }
}

/// A write of an output file that failed, with the file and the system's reason.
struct OutputFileError: Error, CustomStringConvertible {
    let url: URL
    let errno: Int32

    var description: String { "could not write \(url.path): \(String(cString: strerror(errno)))" }
}

/// `write(2)`, under a name that `OutputFile.write` does not shadow.
private func writeToDescriptor(_ descriptor: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int {
    write(descriptor, bytes, count)
}
