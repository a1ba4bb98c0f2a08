import Cluster
import Fetching
import Foundation
import Runtime

/// The inputs given on the command line, made ready to submit: local paths become absolute, URLs stay as
/// they are, and a local directory becomes the images inside it (``ImageDirectory``: recursive, sorted,
/// by signature), in place of the directory.
struct InputList {
    /// The sources to submit, in order.
    let sources: [String]
    /// One line per directory that held files that are not images, saying what was left out.
    let notes: [String]

    /// Validates `inputs` and expands the directories among them. Reads the file system on
    /// ``ComputeThreads/shared``, not on the calling task's thread.
    ///
    /// - Throws: `CommandError` for no inputs, an input the coordinator would refuse, or inputs whose
    ///   directories hold no image at all.
    static func resolve(_ inputs: [String]) async throws -> InputList {
        guard !inputs.isEmpty else {
            throw CommandError("no inputs: give image URLs (http, https, file), paths or directories")
        }
        if let (index, problem) = inputs.enumerated().compactMap({ input in
            PeerInputRules.sourceProblem(input.element).map { (input.offset, $0) } }).first {
            throw CommandError("input \(index + 1): \(problem)")
        }
        let cwd = FileManager.default.currentDirectoryPath
        let absolute = inputs.map { input in
            if input.contains("://") || input.hasPrefix("/") { return input }
            return URL(fileURLWithPath: input, relativeTo: URL(fileURLWithPath: cwd, isDirectory: true)).standardizedFileURL.path
        }
        return try await ComputeThreads.shared.run { _ in try expand(absolute) }
    }

    /// Replaces each local directory in `inputs` by its images (blocking: file system reads).
    static func expand(_ inputs: [String]) throws -> InputList {
        var sources: [String] = []
        var notes: [String] = []
        var emptyDirectories: [String] = []
        for input in inputs {
            guard let path = ImageDirectory.directoryPath(of: input) else {
                sources.append(input)
                continue
            }
            let directory: ImageDirectory
            do {
                directory = try ImageDirectory(path: path)
            } catch {
                throw CommandError("\(error.message): give a directory you can read, or the images themselves")
            }
            sources += directory.images
            if let summary = directory.skippedSummary() { notes.append(summary) }
            if directory.images.isEmpty { emptyDirectories.append(path) }
        }
        let named = emptyDirectories.map { "'\($0)'" }.joined(separator: ", ")
        let verb = emptyDirectories.count == 1 ? "holds" : "hold"
        if sources.isEmpty {
            let skipped = notes.isEmpty ? "" : " (" + notes.joined(separator: "; ") + ")"
            throw CommandError("no images to process: \(named) \(verb) no image file (JPEG, PNG, WebP, AVIF, HEIC, TIFF, GIF or BMP)\(skipped); give a directory with images, or image files or URLs")
        }
        if !emptyDirectories.isEmpty { notes.append("\(named) \(verb) no image file (JPEG, PNG, WebP, AVIF, HEIC, TIFF, GIF or BMP)") }
        return InputList(sources: sources, notes: notes)
    }
}
