import Cluster
import Fetching
import Foundation
import Runtime

/// The inputs given on the command line, made ready to submit: `-` becomes the lines of standard input,
/// local paths become absolute, URLs stay as they are, a local directory becomes the images inside it
/// (``ImageDirectory``: recursive, sorted, by signature), in place of the directory, each with its path
/// inside the directory (the outputs keep the library's folders), and, when local files are uploaded, a
/// local list of images (`.txt`, `.list`: ``LocalManifest``) becomes its entries (the workers cannot read it;
/// otherwise a worker reads it and the batch grows by its entries while it runs, as for a list at a URL).
struct InputList {
    /// The sources to submit, in order.
    let sources: [String]
    /// For each source that came from a directory, its path inside that directory; `nil` for the others.
    let pathsInDirectories: [String?]
    /// One line per directory that held files that are not images or entries that could not be read,
    /// saying what was left out.
    let notes: [String]

    /// The input that stands for standard input's lines: `find … | shiftwork submit -`.
    static let standardInput = "-"

    /// Validates `inputs` and expands the directories among them; `-` reads standard input first (one
    /// input a line, as on the command line; empty lines ignored). Reads on ``ComputeThreads/shared``, not on
    /// the calling task's thread.
    ///
    /// - Throws: `CommandError` for no inputs, an input the coordinator would refuse, or inputs whose
    ///   directories hold no image at all.
    static func resolve(_ inputs: [String], readingLocalLists: Bool = false) async throws -> InputList {
        var inputs = inputs
        var piped: [Bool] = Array(repeating: false, count: inputs.count)
        if inputs.contains(standardInput) {
            let lines = try await ComputeThreads.shared.run { _ in readLines(FileHandle.standardInput) }
            piped = inputs.flatMap { $0 == standardInput ? Array(repeating: true, count: lines.count) : [false] }
            inputs = inputs.flatMap { $0 == standardInput ? lines : [$0] }
            if inputs.isEmpty {
                throw CommandError(
                    "no inputs: standard input ('-') held no line; give one image URL, path or directory a line (e.g. find ~/Pictures -name '*.HEIC' | shiftwork submit -)"
                )
            }
        }
        guard !inputs.isEmpty else {
            throw CommandError(
                "no inputs: give image URLs (http, https, file), paths or directories, or '-' to read them from standard input"
            )
        }
        if let (index, problem) = inputs.enumerated().compactMap({ input in
            PeerInputRules.sourceProblem(input.element).map { (input.offset, $0) }
        }).first {
            throw CommandError("input \(index + 1): \(problem)")
        }
        let cwd = FileManager.default.currentDirectoryPath
        let absolute = inputs.map { input in
            if input.contains("://") || input.hasPrefix("/") { return input }
            return URL(fileURLWithPath: input, relativeTo: URL(fileURLWithPath: cwd, isDirectory: true))
                .standardizedFileURL.path
        }
        let pipedInputs = piped
        return try await ComputeThreads.shared.run { _ in
            try expand(absolute, piped: pipedInputs, readingLocalLists: readingLocalLists)
        }
    }

    /// The folder every one of `paths` (absolute file paths) is in, the deepest such: the root of a
    /// library that `find DIR … | shiftwork submit -` lists file by file.
    static func commonFolder(of paths: [String]) -> [Substring] {
        var common: [Substring]?
        for path in paths {
            let folders = path.split(separator: "/").dropLast()
            guard let known = common else {
                common = Array(folders)
                continue
            }
            common = Array(zip(known, folders).prefix(while: { $0 == $1 }).map(\.0))
        }
        return common ?? []
    }

    /// The non-empty lines of `handle` (blocking: it reads to the end), without their line ends (`\n` or
    /// `\r\n`); surrounding spaces are kept (a file name may hold them), a line of spaces only is empty.
    static func readLines(_ handle: FileHandle) -> [String] {
        let text = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        return text.split(separator: "\n", omittingEmptySubsequences: true).compactMap { line in
            let line = line.hasSuffix("\r") ? String(line.dropLast()) : String(line)
            return line.allSatisfy(\.isWhitespace) ? nil : line
        }
    }

    /// Replaces each local directory in `inputs` by its images and, with `readingLocalLists`, each local list by
    /// its entries (blocking: file system reads). The files among the `piped` inputs (read from standard input) keep their paths
    /// below the folder they all share (`find ~/Pictures -name '*.HEIC' | shiftwork submit -` keeps the
    /// library's folders, as a directory does).
    static func expand(_ inputs: [String], piped: [Bool] = [], readingLocalLists: Bool = false) throws -> InputList {
        var sources: [String] = []
        var paths: [String?] = []
        var notes: [String] = []
        var emptyDirectories: [String] = []
        let isDirectory = inputs.map { ImageDirectory.directoryPath(of: $0) }
        let pipedFiles = Set(
            inputs.indices.filter { index in
                index < piped.count && piped[index] && isDirectory[index] == nil && inputs[index].hasPrefix("/")
                    && !(readingLocalLists && LocalManifest.isLocalManifest(inputs[index]))
            })
        let root = commonFolder(of: pipedFiles.sorted().map { inputs[$0] })
        for (index, input) in inputs.enumerated() {
            if readingLocalLists, isDirectory[index] == nil, LocalManifest.isLocalManifest(input) {
                let manifest = try LocalManifest(reading: input)
                if let (entry, problem) = manifest.entries.lazy.compactMap({ entry in
                    PeerInputRules.sourceProblem(entry).map { (entry, $0) }
                }).first {
                    throw CommandError(
                        "\(PrintableText.escape(input)) lists \(PrintableText.escape(entry)), which the coordinator would refuse: \(problem)"
                    )
                }
                sources += manifest.entries
                paths += manifest.pathsBelowManifest
                continue
            }
            guard let path = isDirectory[index] else {
                sources.append(input)
                if pipedFiles.contains(index) {
                    paths.append(input.split(separator: "/").dropFirst(root.count).joined(separator: "/"))
                } else {
                    paths.append(nil)
                }
                continue
            }
            let directory: ImageDirectory
            do {
                directory = try ImageDirectory(path: path)
            } catch {
                throw CommandError("\(error.message): give a directory you can read, or the images themselves")
            }
            sources += directory.images
            paths += directory.pathsInside.map { Optional($0) }
            if let summary = directory.skippedSummary() { notes.append(summary) }
            if let summary = directory.unreadableSummary() { notes.append(summary) }
            if directory.images.isEmpty { emptyDirectories.append(path) }
        }
        let named = emptyDirectories.map { "'\($0)'" }.joined(separator: ", ")
        let verb = emptyDirectories.count == 1 ? "holds" : "hold"
        if sources.isEmpty {
            let skipped = notes.isEmpty ? "" : " (" + notes.joined(separator: "; ") + ")"
            throw CommandError(
                "no images to process: \(named) \(verb) no image file (JPEG, PNG, WebP, AVIF, HEIC, TIFF, GIF or BMP)\(skipped); give a directory with images, or image files or URLs"
            )
        }
        if !emptyDirectories.isEmpty {
            notes.append("\(named) \(verb) no image file (JPEG, PNG, WebP, AVIF, HEIC, TIFF, GIF or BMP)")
        }
        return InputList(sources: sources, pathsInDirectories: paths, notes: notes)
    }
}
