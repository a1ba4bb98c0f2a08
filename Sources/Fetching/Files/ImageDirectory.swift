import Imaging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The images inside a local directory, as `shiftwork run DIR` and `shiftwork submit DIR` take them.
///
/// The walk is recursive and its order is stable: in each directory the entries are sorted by their
/// names' bytes, and a subdirectory's images come where its name sorts. A file is an image when its first
/// bytes are the signature of a format Imaging reads (JPEG, PNG, WebP, AVIF, HEIC/HEIF, TIFF, GIF or BMP:
/// `ImageFormat(sniffing:)`, given as many bytes as its longest signature needs), whatever its name:
/// `scan.JPG`, `photo`, `IMG_0001.HEIC` and `page.tif` are all found, and a `notes.jpg` that holds text is not. Hidden entries (names
/// starting with `.`, such as `.git` or `.DS_Store`) are passed over; symbolic links are followed, and
/// a directory reached twice (a link loop) is walked once. Anything else, including sockets and pipes,
/// is *skipped* and listed, so that the caller can say what it left out; a file or folder inside that
/// cannot be read (permissions) is listed as *unreadable*, with the reason, and the walk goes on. Each
/// image's path inside the directory is kept too (``pathsInside``): the outputs keep the library's folders.
///
/// Blocking (it reads the file system): call it on ``ComputeThreads``, never on Swift's cooperative pool.
public struct ImageDirectory: Sendable {
    /// The directory as given.
    public let path: String
    /// Absolute or as-given paths of the images found, in walk order.
    public let images: [String]
    /// Each image's path relative to `path` (`2024/01/IMG_0001.HEIC`), in the order of ``images``.
    public let pathsInside: [String]
    /// Paths, relative to `path`, of the files that are not images, in walk order.
    public let skipped: [String]
    /// Paths, relative to `path` (a folder's with a `/` at its end), of what could not be read, each with the
    /// reason (`2024/02/: permission denied`), in walk order. The names are the file system's: escape them
    /// before printing.
    public let unreadable: [String]

    /// Lists the images under the directory `path`.
    ///
    /// - Throws: `ImagingError` of kind `.download` when `path` cannot be opened as a directory (the
    ///   message names the path and the cause).
    public init(path: String) throws(ImagingError) {
        self.path = path
        var walk = Walk()
        try walk.visit(directory: path, relative: "", isTop: true)
        images = walk.images
        pathsInside = walk.pathsInside
        skipped = walk.skipped
        unreadable = walk.unreadable
    }

    /// The local directory `source` names (a path or a `file://` URL), or nil when it names anything else:
    /// an `http(s)` URL, a file, or nothing that exists (those go on as they are, and fail, if they do,
    /// with their own error when fetched).
    public static func directoryPath(of source: String) -> String? {
        guard case .localFile(let path)? = try? FetchSource(source) else { return nil }
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else { return nil }
        return path
    }

    /// One line for people about the skipped files, or nil when none was skipped, e.g.
    /// `samples: skipped 3 files that are not images: a.txt, b/c.pdf, d.md`. At most `shown` names are
    /// listed, then how many more. The names are the file system's: escape them before printing.
    public func skippedSummary(shown: Int = 5) -> String? {
        guard !skipped.isEmpty else { return nil }
        let names = skipped.prefix(shown).joined(separator: ", ")
        let more = skipped.count > shown ? ", and \(skipped.count - shown) more" : ""
        let files = skipped.count == 1 ? "1 file that is not an image" : "\(skipped.count) files that are not images"
        return "\(path): skipped \(files) (\(ImageFormat.readableNames)): \(names)\(more)"
    }

    /// One line for people about what could not be read, or nil when everything could, e.g.
    /// `photos: could not read 2 entries (the rest goes on): 2024/02/: permission denied, a.jpg: permission denied`.
    /// The names are the file system's: escape them before printing.
    public func unreadableSummary(shown: Int = 5) -> String? {
        guard !unreadable.isEmpty else { return nil }
        let names = unreadable.prefix(shown).joined(separator: ", ")
        let more = unreadable.count > shown ? ", and \(unreadable.count - shown) more" : ""
        let entries = unreadable.count == 1 ? "1 entry" : "\(unreadable.count) entries"
        return "\(path): could not read \(entries), left out (the other images go on): \(names)\(more)"
    }

    /// The state of one walk: what it found, and the directories it has been in.
    private struct Walk {
        var images: [String] = []
        var pathsInside: [String] = []
        var skipped: [String] = []
        var unreadable: [String] = []
        var visited: Set<FileIdentity> = []

        mutating func visit(directory: String, relative: String, isTop: Bool) throws(ImagingError) {
            var info = stat()
            guard stat(directory, &info) == 0 else {
                if isTop { throw ImagingError(.download, "\(directory): \(LocalFileReader.errnoMessage(errno))") }
                unreadable.append(relative + "/: " + LocalFileReader.errnoMessage(errno))
                return
            }
            guard visited.insert(FileIdentity(info)).inserted else { return }
            guard let names = Self.entries(of: directory) else {
                if isTop { throw ImagingError(.download, "\(directory): \(LocalFileReader.errnoMessage(errno))") }
                unreadable.append(relative + "/: " + LocalFileReader.errnoMessage(errno))
                return
            }
            let prefix = directory.hasSuffix("/") ? directory : directory + "/"
            for name in names {
                let path = prefix + name
                let shown = relative.isEmpty ? name : relative + "/" + name
                var entry = stat()
                guard stat(path, &entry) == 0 else {  // a dangling link, or one removed meanwhile
                    skipped.append(shown)
                    continue
                }
                switch entry.st_mode & S_IFMT {
                case S_IFDIR:
                    try visit(directory: path, relative: shown, isTop: false)
                case S_IFREG:
                    switch Self.signature(of: path) {
                    case .image:
                        images.append(path)
                        pathsInside.append(shown)
                    case .notImage:
                        skipped.append(shown)
                    case .unreadable(let code):
                        unreadable.append(shown + ": " + LocalFileReader.errnoMessage(code))
                    }
                default:
                    skipped.append(shown)
                }
            }
        }

        /// The names in `directory`, hidden ones left out, sorted by their bytes; nil when it cannot be read.
        private static func entries(of directory: String) -> [String]? {
            guard let stream = opendir(directory) else { return nil }
            defer { closedir(stream) }
            var names: [[UInt8]] = []
            while let entry = readdir(stream) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    Array(raw.prefix(while: { $0 != 0 }))
                }
                if name.first == UInt8(ascii: ".") { continue }  // ".", "..", and hidden entries
                names.append(name)
            }
            return names.sorted { $0.lexicographicallyPrecedes($1) }.map { String(decoding: $0, as: UTF8.self) }
        }

        /// What a file's first bytes are.
        enum Signature {
            case image, notImage
            case unreadable(errno: Int32)
        }

        /// Whether the file starts with the signature of a format Imaging reads (reads at most
        /// `ImageFormat.sniffedBytes`, what the longest signature needs: an ISO BMFF `ftyp` box's brands), or
        /// could not be read (the `errno` of `open` or `read`).
        private static func signature(of path: String) -> Signature {
            let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
            guard fd >= 0 else { return .unreadable(errno: errno) }
            defer { close(fd) }
            var head = [UInt8](repeating: 0, count: ImageFormat.sniffedBytes)
            var count = 0
            while count < head.count {
                let read = head.withUnsafeMutableBytes { buffer in
                    LocalFileReader.systemRead(fd, buffer.baseAddress.map { $0 + count }, buffer.count - count)
                }
                if read < 0, errno == EINTR { continue }
                if read < 0 { return .unreadable(errno: errno) }
                if read == 0 { break }
                count += read
            }
            return ImageFormat(sniffing: head.prefix(count)) != nil ? .image : .notImage
        }
    }

    /// A file's device and inode: the same directory reached by two paths has one identity.
    private struct FileIdentity: Hashable {
        let device: UInt64
        let inode: UInt64

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
        }
    }
}
