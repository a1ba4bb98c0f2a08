import Cluster
import Foundation

/// Normalises the inputs given on the command line: local paths become absolute, URLs stay as they are.
enum InputList {
    static func normalize(_ inputs: [String]) throws -> [String] {
        guard !inputs.isEmpty else {
            throw CommandError("no inputs: give image URLs (http, https, file) or paths")
        }
        if let (index, problem) = inputs.enumerated().compactMap({ input in
            PeerInputRules.sourceProblem(input.element).map { (input.offset, $0) } }).first {
            throw CommandError("input \(index + 1): \(problem)")
        }
        let cwd = FileManager.default.currentDirectoryPath
        return inputs.map { input in
            if input.contains("://") || input.hasPrefix("/") { return input }
            return URL(fileURLWithPath: input, relativeTo: URL(fileURLWithPath: cwd, isDirectory: true)).standardizedFileURL.path
        }
    }
}
