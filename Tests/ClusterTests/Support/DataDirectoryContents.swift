import Foundation

/// What a coordinator's `--data-dir` holds, byte for byte: its journal file and every file under
/// `results/`. Two readings compare equal only when nothing in them changed.
struct DataDirectoryContents: Equatable, CustomStringConvertible {
    /// The journal file's bytes (empty when there is none yet).
    let journal: [UInt8]
    /// Every file under `results/`, by its path relative to it, with its bytes.
    let results: [String: [UInt8]]

    /// Reads `directory` as it stands.
    init(_ directory: URL) throws {
        let journalURL = directory.appendingPathComponent("journal")
        journal =
            FileManager.default.fileExists(atPath: journalURL.path) ? [UInt8](try Data(contentsOf: journalURL)) : []
        let resultsURL = directory.appendingPathComponent("results", isDirectory: true)
        var results: [String: [UInt8]] = [:]
        let files = FileManager.default.enumerator(atPath: resultsURL.path)?.allObjects as? [String] ?? []
        for file in files {
            let url = resultsURL.appendingPathComponent(file)
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory), !isDirectory.boolValue
            else { continue }
            results[file] = [UInt8](try Data(contentsOf: url))
        }
        self.results = results
    }

    var description: String {
        "journal of \(journal.count) bytes, results: \(results.keys.sorted().map { "\($0) (\(results[$0]?.count ?? 0) bytes)" })"
    }
}
