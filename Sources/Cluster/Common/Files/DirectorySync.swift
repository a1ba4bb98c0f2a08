import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Makes a directory's entries durable: after a file is renamed into it or a folder made in it, an
/// `fsync` of the directory itself is what keeps the new name through a machine failure.
enum DirectorySync {
    /// Syncs `directory`'s entries, best effort (a directory that cannot be opened is left as it is).
    static func sync(_ directory: URL) {
        let descriptor = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        fsync(descriptor)
        close(descriptor)
    }
}
