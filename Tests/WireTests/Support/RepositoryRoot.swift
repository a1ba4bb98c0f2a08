import Foundation

/// The checkout these tests were built from, for tests that read its files (proto/, docs/, scripts/).
enum RepositoryRoot {
    /// The nearest directory above this file (Tests/WireTests/Support/…, symbolic links resolved) that
    /// holds scripts/generate-proto.
    static var url: URL {
        var directory = URL(fileURLWithPath: #filePath).resolvingSymlinksInPath().deletingLastPathComponent()
        while directory.path != "/" {
            if FileManager.default.fileExists(atPath: directory.appendingPathComponent("scripts/generate-proto").path) {
                return directory
            }
            directory.deleteLastPathComponent()
        }
        // Where it must be: this file is Tests/WireTests/Support/RepositoryRoot.swift.
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }
}
