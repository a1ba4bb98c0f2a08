import Imaging

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads local files with a size limit, with errors that name the file and the cause. Blocking: the
/// fetcher calls it on its own threads (``ComputeThreads``), never on Swift's cooperative pool.
enum LocalFileReader {
    /// Reads the whole file at `path`, refusing files larger than `maxBytes` before reading them, and
    /// stopping between chunks once `isCancelled` says so.
    static func read(path: String, maxBytes: Int, isCancelled: () -> Bool = { false }) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            throw ImagingError(.download, "\(path): \(errnoMessage(errno))")
        }
        defer { close(fd) }
        var info = stat()
        if fstat(fd, &info) != 0 {
            throw ImagingError(.download, "\(path): \(errnoMessage(errno))")
        }
        if (info.st_mode & S_IFMT) == S_IFDIR {
            throw ImagingError(.download, "\(path): is a directory, not an image file")
        }
        let size = Int(info.st_size)
        if size > maxBytes {
            throw ImagingError(
                .limit,
                "\(path): file is \(ImageLimits.mebibytes(size)) MiB, over the limit of \(ImageLimits.mebibytes(maxBytes)) MiB; "
                    + "raise it with --max-bytes or FetchConfiguration.maxBytes")
        }
        var bytes = [UInt8]()
        bytes.reserveCapacity(size)
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            if isCancelled() { throw ImagingError.cancelledError }
            let count = chunk.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ImagingError(.download, "\(path): \(errnoMessage(errno))")
            }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
            if bytes.count > maxBytes {
                throw ImagingError(
                    .limit,
                    "\(path): file is larger than the limit of \(ImageLimits.mebibytes(maxBytes)) MiB; "
                        + "raise it with --max-bytes or FetchConfiguration.maxBytes")
            }
        }
        return bytes
    }

    /// `read(2)` of the platform's C library.
    static func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int {
        #if canImport(Glibc)
        Glibc.read(fd, buffer, count)
        #elseif canImport(Musl)
        Musl.read(fd, buffer, count)
        #else
        Darwin.read(fd, buffer, count)
        #endif
    }

    static func errnoMessage(_ code: Int32) -> String {
        switch code {
        case ENOENT: return "no such file"
        case EACCES: return "permission denied"
        default:
            if let text = strerror(code) { return String(cString: text).lowercased() }
            return "error \(code)"
        }
    }

    /// Decodes `%XX` escapes of a `file://` URL path.
    static func percentDecoded(_ text: String) -> String {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%"), let h = iterator.next(), let l = iterator.next(),
                let hv = hexValue(h), let lv = hexValue(l)
            {
                bytes.append(hv << 4 | lv)
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
