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
///
/// A durable write without `overwrite` (a directory sink) on Linux skips the temporary *name*: the file is
/// created nameless (`O_TMPFILE`), written, synced, and linked under its final name (`linkat` through
/// `/proc/self/fd`), so a worker killed mid-write leaves nothing at all, and the directory is changed once
/// instead of three times (create, link, unlink). A file system without `O_TMPFILE`, or no `/proc`, takes
/// the temporary name as above. Used by the client for `--out` and by workers for a directory sink.
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
    static func write(
        _ bytes: [UInt8], in directory: URL, stem: String, fileExtension: String, overwrite: Bool,
        durable: Bool = false
    ) throws -> Written {
        if durable, !overwrite,
            let written = try writeNameless(bytes, in: directory, stem: stem, fileExtension: fileExtension)
        {
            return written
        }
        let wanted = directory.appendingPathComponent("\(stem).\(fileExtension)")
        let temporary = directory.appendingPathComponent(
            ".\(stem).\(fileExtension).\(UUID().uuidString.prefix(8)).partial")
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
            if durable { DirectorySync.sync(directory) }
            return Written(url: wanted, existing: nil)
        }
        defer { unlink(temporary.path) }
        let written = try linkUnderFreeName(in: directory, stem: stem, fileExtension: fileExtension) { candidate in
            link(temporary.path, candidate)
        }
        if durable {
            unlink(temporary.path)
            DirectorySync.sync(directory)
        }
        return written
    }

    /// Links a file under the first free name of `stem.ext`, `stem-2.ext`, … in `directory`: `link` makes
    /// one name (a path in, `link(2)`'s result out) and fails with `EEXIST` when it is taken.
    private static func linkUnderFreeName(
        in directory: URL, stem: String, fileExtension: String,
        link: (String) -> Int32
    ) throws -> Written {
        let wanted = directory.appendingPathComponent("\(stem).\(fileExtension)")
        for attempt in 1...10_000 {
            let candidate =
                attempt == 1 ? wanted : directory.appendingPathComponent("\(stem)-\(attempt).\(fileExtension)")
            if link(candidate.path) == 0 { return Written(url: candidate, existing: attempt == 1 ? nil : wanted) }
            guard errno == EEXIST else { throw OutputFileError(url: candidate, errno: errno) }
        }
        throw OutputFileError(url: wanted, errno: EEXIST)
    }

    /// Whether this process can name an open file by path (`/proc/self/fd/N`), which `linkat` needs to give
    /// a nameless file a name without privileges.
    private static let canNameOpenFiles = access("/proc/self/fd", X_OK) == 0

    /// The durable write of a nameless file (`O_TMPFILE`) linked under a free name once synced (see the
    /// type's description); `nil` where the system or the file system cannot create one, for the caller to
    /// take a temporary name instead.
    private static func writeNameless(
        _ bytes: [UInt8], in directory: URL, stem: String, fileExtension: String
    ) throws -> Written? {
        #if os(Linux)
        guard canNameOpenFiles else { return nil }
        let descriptor = open(directory.path, __O_TMPFILE | O_WRONLY | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else {
            // The file system has no nameless files (EOPNOTSUPP; EISDIR from kernels before 3.11).
            if errno == EOPNOTSUPP || errno == EISDIR { return nil }
            throw OutputFileError(url: directory, errno: errno)
        }
        defer { close(descriptor) }
        var failure = writeWhole(bytes, to: descriptor)
        if failure == 0, fsync(descriptor) != 0 { failure = errno }
        // Nothing to remove on failure: the file has no name and goes with its descriptor.
        if failure != 0 {
            throw OutputFileError(url: directory.appendingPathComponent("\(stem).\(fileExtension)"), errno: failure)
        }
        let openFile = "/proc/self/fd/\(descriptor)"
        let written = try linkUnderFreeName(in: directory, stem: stem, fileExtension: fileExtension) { candidate in
            linkat(AT_FDCWD, openFile, AT_FDCWD, candidate, AT_SYMLINK_FOLLOW)
        }
        DirectorySync.sync(directory)
        return written
        #else
        return nil
        #endif
    }

    /// Writes `bytes` into a new file at `url` and syncs it to disk; on failure the file is removed.
    private static func writeSynced(_ bytes: [UInt8], to url: URL) throws {
        let descriptor = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw OutputFileError(url: url, errno: errno) }
        var failure = writeWhole(bytes, to: descriptor)
        if failure == 0, fsync(descriptor) != 0 { failure = errno }
        close(descriptor)
        if failure != 0 {
            unlink(url.path)
            throw OutputFileError(url: url, errno: failure)
        }
    }

    /// Writes all of `bytes` to `descriptor`; returns 0, or the `errno` of the write that failed.
    private static func writeWhole(_ bytes: [UInt8], to descriptor: Int32) -> Int32 {
        bytes.withUnsafeBytes { buffer -> Int32 in
            guard let base = buffer.baseAddress else { return 0 }
            var offset = 0
            while offset < buffer.count {
                let written = writeToDescriptor(descriptor, base + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return 0
        }
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
