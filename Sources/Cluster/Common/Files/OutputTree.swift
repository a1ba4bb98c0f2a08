import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Makes the folders of a relative output path (`OutputPath`) below an output directory, so that
/// `2024/01/IMG_0001` is written as `OUT/2024/01/IMG_0001.jpg`, and never anywhere else.
///
/// The name is checked first (`OutputPath.problem`: no `..`, no absolute path, no NUL). Each folder is
/// then looked at with `lstat` before it is used: one that is missing is made (mode 0755, as `mkdir -p`),
/// one that is a directory is entered, and one that is anything else, a symbolic link above all (which
/// could lead out of the output directory), is refused with the folder's name. The output directory itself
/// may be a link: the user chose it. With `durable` (a worker's sink), the directory a new folder was made in
/// is synced, so that a crash cannot lose the folder of a file synced into it.
///
/// Blocking (file system calls): call it on a thread of its own (`ComputeThreads`), not on Swift's pool.
enum OutputTree {
    /// The directory in which `name`'s last component is to be written, its folders made; and that last
    /// component (the stem, or the file name, as the caller gave it).
    ///
    /// - Throws: ``OutputTreeError`` naming the name or the folder and what was wrong.
    static func prepare(
        _ name: String, under root: URL, durable: Bool = false
    ) throws(OutputTreeError) -> (directory: URL, last: String) {
        if let problem = OutputPath.problem(name) { throw OutputTreeError(name: name, reason: problem) }
        let (folders, last) = OutputPath.split(name)
        var directory = root
        for folder in folders {
            let parent = directory
            directory = directory.appendingPathComponent(folder, isDirectory: true)
            var info = stat()
            if lstat(directory.path, &info) == 0 {
                switch info.st_mode & S_IFMT {
                case S_IFDIR: continue
                case S_IFLNK:
                    throw OutputTreeError(
                        name: name,
                        reason:
                            "\(directory.path) is a symbolic link: outputs are never written through a link below the output directory"
                    )
                default:
                    throw OutputTreeError(name: name, reason: "\(directory.path) is a file, not a folder")
                }
            }
            guard errno == ENOENT else {
                throw OutputTreeError(name: name, reason: "\(directory.path): \(String(cString: strerror(errno)))")
            }
            // Another writer may make it meanwhile (two workers of one batch): EEXIST is then fine, if it
            // is a directory and no link.
            if mkdir(directory.path, 0o755) != 0 {
                let failure = errno
                guard failure == EEXIST, lstat(directory.path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
                    throw OutputTreeError(
                        name: name,
                        reason: "could not make the folder \(directory.path): \(String(cString: strerror(failure)))")
                }
            } else if durable {
                DirectorySync.sync(parent)
            }
        }
        return (directory, last)
    }
}

/// A relative output path refused, or a folder of it that could not be made, with the reason.
struct OutputTreeError: Error, CustomStringConvertible {
    /// The output name as it came (print it escaped: it came from the network).
    let name: String
    let reason: String

    var description: String { "output name '\(name)': \(reason)" }
}
