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
/// image, never a mix).
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
    static func write(_ bytes: [UInt8], in directory: URL, stem: String, fileExtension: String, overwrite: Bool) throws -> Written {
        let wanted = directory.appendingPathComponent("\(stem).\(fileExtension)")
        let temporary = directory.appendingPathComponent(".\(stem).\(fileExtension).\(UUID().uuidString.prefix(8)).partial")
        try Data(bytes).write(to: temporary)
        if overwrite {
            guard rename(temporary.path, wanted.path) == 0 else {
                let error = OutputFileError(url: wanted, errno: errno)
                unlink(temporary.path)
                throw error
            }
            return Written(url: wanted, existing: nil)
        }
        defer { unlink(temporary.path) }
        for attempt in 1...10_000 {
            let candidate = attempt == 1 ? wanted : directory.appendingPathComponent("\(stem)-\(attempt).\(fileExtension)")
            if link(temporary.path, candidate.path) == 0 {
                return Written(url: candidate, existing: attempt == 1 ? nil : wanted)
            }
            guard errno == EEXIST else { throw OutputFileError(url: candidate, errno: errno) }
        }
        throw OutputFileError(url: wanted, errno: EEXIST)
    }
}

/// A write of an output file that failed, with the file and the system's reason.
struct OutputFileError: Error, CustomStringConvertible {
    let url: URL
    let errno: Int32

    var description: String { "could not write \(url.path): \(String(cString: strerror(errno)))" }
}
