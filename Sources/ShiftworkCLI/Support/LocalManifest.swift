import Cluster
import Fetching
import Foundation

/// A manifest on the client's own disk (`photos.txt`, `shoot.list`: a text list of images, one a line), read
/// by the client rather than sent: its local entries are the user's files, which only this machine can read.
/// It becomes its entries in place of itself, each local image uploaded as any local file is, each URL
/// fetched by the workers; a list it names is read in turn (`maxDepth` deep, as the coordinator expands
/// downloaded manifests). A manifest reached over a URL is still expanded by the cluster while the batch runs.
struct LocalManifest {
    /// The entries, absolute (paths resolved against the manifest's folder), lists among them expanded.
    let entries: [String]
    /// For each entry, its path below the folder of the manifest given (`nil` for a URL or a file outside it):
    /// the outputs keep those folders, as a directory's do.
    let pathsBelowManifest: [String?]

    /// Lists inside lists at most this deep (the manifest given is depth 1), as `BatchRegistry` allows.
    static let maxDepth = 2
    /// The largest manifest file read (100,000 entries of a long path each fit).
    static let maxBytes = 32 << 20

    /// Whether `input` (an absolute path or a URL) is a local file named as a list (`.txt`, `.list`).
    static func isLocalManifest(_ input: String) -> Bool {
        guard let path = localPath(of: input), Manifest.isManifestPath(path) else { return false }
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && !isDirectory.boolValue
    }

    /// Reads the manifest at `input` (blocking: file reads) and the local lists it names.
    ///
    /// - Throws: `CommandError` naming the file and what is wrong with it (unreadable, too large, a line that is
    ///   not an image URL or path, lists nested too deep), and what to do.
    init(reading input: String) throws {
        guard let path = Self.localPath(of: input) else {
            throw CommandError("\(input) is not a local file")
        }
        let folder = (path as NSString).deletingLastPathComponent
        var entries: [String] = []
        try Self.read(path, depth: 1, into: &entries)
        self.entries = entries
        self.pathsBelowManifest = entries.map { entry in
            guard entry.hasPrefix(folder + "/") else { return nil }
            return String(entry.dropFirst(folder.count + 1))
        }
    }

    private static func read(_ path: String, depth: Int, into entries: inout [String]) throws {
        let shown = PrintableText.escape(path)
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CommandError("cannot read the list \(shown): check that it exists and that you may read it")
        }
        defer { try? handle.close() }
        let data = (try? handle.read(upToCount: maxBytes + 1)) ?? Data()
        guard data.count <= maxBytes else {
            throw CommandError(
                "the list \(shown) is larger than \(maxBytes >> 20) MiB: split it into smaller lists, or pipe it (shiftwork submit - < LIST)"
            )
        }
        let manifest: Manifest
        switch Manifest.parse([UInt8](data), source: path) {
        case .success(let parsed): manifest = parsed
        case .failure(let problem):
            throw CommandError(
                "\(shown) is not a list of images: \(PrintableText.escape(problem.description)); give one image URL or path a line (# starts a comment)"
            )
        }
        for entry in manifest.entries {
            guard isLocalManifest(entry) else {
                entries.append(localPath(of: entry) ?? entry)
                continue
            }
            guard depth < maxDepth else {
                throw CommandError(
                    "the list \(shown) names another list, \(PrintableText.escape(entry)), nested deeper than \(maxDepth) levels: list its images directly"
                )
            }
            try read(localPath(of: entry) ?? entry, depth: depth + 1, into: &entries)
        }
        if entries.count > Manifest.maxEntries {
            throw CommandError(
                "the list \(shown) and the lists it names hold more than \(Manifest.maxEntries) entries: submit them in parts"
            )
        }
    }

    /// The path of a local input: an absolute path, or a `file://` URL's path; `nil` for other URLs.
    private static func localPath(of input: String) -> String? {
        if input.hasPrefix("/") { return input }
        guard input.lowercased().hasPrefix("file://"), let url = URL(string: input) else { return nil }
        return url.standardizedFileURL.path
    }
}
