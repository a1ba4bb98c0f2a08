import Foundation
import Wire

#if canImport(Glibc)
import Glibc
#endif

/// A client's local input as an upload (docs/protocol.md, "Uploads"): which inputs are local files, what
/// is announced for them (`UploadMetadata`), and the bytes sent when the coordinator asks, checked
/// against what was announced. Blocking file I/O: called on `ClientUploads`' own queue or before a batch
/// is submitted, never on the cooperative pool's hot path.
enum LocalUpload {
    /// Why a local file cannot be uploaded.
    struct Refusal: Error, CustomStringConvertible {
        let description: String
        /// The file cannot be read at all (gone, unreadable, not a regular file): its item fails, naming it,
        /// and the rest of the batch goes on. Otherwise (empty, over the limit) the submission is refused.
        var failsItemOnly = false
    }

    /// What is announced for a local file that cannot be read (`Refusal.failsItemOnly`): one byte, modified at
    /// 0. Its bytes are never sent: asked for it, the client answers with the failure (`ClientUploads`).
    static let unreadable = UploadMetadata(size: 1, modifiedUnixNanoseconds: 0)

    /// The absolute path of a local input (a path, or a `file://` URL); `nil` for a URL of another scheme.
    static func path(of source: String) -> String? {
        if let url = URL(string: source), let scheme = url.scheme, scheme.count > 1 {
            guard scheme.lowercased() == "file" else { return nil }
            return url.standardizedFileURL.path
        }
        let url = URL(
            fileURLWithPath: source, relativeTo: URL(fileURLWithPath: FileManager.default.currentDirectoryPath))
        return url.standardizedFileURL.path
    }

    /// What `stat` says of the file now: its size and modification time (nanoseconds).
    static func metadata(of path: String) throws(Refusal) -> UploadMetadata {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw Refusal(description: "\(path): \(String(cString: strerror(errno)))", failsItemOnly: true)
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw Refusal(description: "\(path) is not a regular file", failsItemOnly: true)
        }
        let nanoseconds = Int64(info.st_mtim.tv_sec) &* 1_000_000_000 &+ Int64(info.st_mtim.tv_nsec)
        return UploadMetadata(size: UInt64(max(0, info.st_size)), modifiedUnixNanoseconds: nanoseconds)
    }

    /// What a local file is announced as, refused up front when the workers could not take it: empty, or
    /// over the upload limit (the workers' image limit).
    static func announce(
        _ path: String, limit: UInt64 = ClusterDefaults.uploadFileBytes
    ) throws(Refusal)
        -> UploadMetadata
    {
        let metadata = try metadata(of: path)
        if metadata.size == 0 { throw Refusal(description: "\(path) is empty: there is no image to send") }
        if metadata.size > limit {
            throw Refusal(
                description:
                    "\(path) is \(mebibytes(metadata.size)) MiB, more than the \(mebibytes(limit)) MiB a worker accepts (the upload limit): leave it out, or make it smaller"
            )
        }
        return metadata
    }

    /// The answer to one file the coordinator asked for: its bytes and their CRC-32C, or, when the file is
    /// gone, unreadable or not what was announced (size, modification time), a failure naming it.
    static func answer(_ wanted: UploadWanted, batchID: String) -> UploadData {
        func failure(_ text: String) -> UploadData {
            UploadData(batchID: batchID, itemIndex: wanted.itemIndex, failure: text)
        }
        let path = wanted.path
        guard let expected = wanted.expected else {
            return failure("\(path): the coordinator did not say what to send")
        }
        let before: UploadMetadata
        do { before = try metadata(of: path) } catch {
            return failure("\(path) vanished since it was submitted (\(error))")
        }
        if let change = difference(expected, before) {
            return failure("\(path) changed since it was submitted (\(change))")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            return failure("\(path) could not be read")
        }
        let bytes = [UInt8](data)
        // Read whole and unchanged: the same size and time after reading as announced.
        guard let after = try? metadata(of: path), difference(expected, after) == nil,
            UInt64(bytes.count) == expected.size
        else { return failure("\(path) changed while it was read: submit it again") }
        return UploadData(batchID: batchID, itemIndex: wanted.itemIndex, data: bytes, crc32c: CRC32C.checksum(bytes))
    }

    /// How `now` differs from what was announced; `nil` when it does not.
    private static func difference(_ announced: UploadMetadata, _ now: UploadMetadata) -> String? {
        if announced.size != now.size { return "size \(announced.size) then, \(now.size) now" }
        if announced.modifiedUnixNanoseconds != now.modifiedUnixNanoseconds { return "modified since" }
        return nil
    }

    private static func mebibytes(_ bytes: UInt64) -> String {
        let value = Double(bytes) / 1_048_576
        return value >= 10 || value == value.rounded() ? "\(Int(value.rounded()))" : String(format: "%.1f", value)
    }
}
