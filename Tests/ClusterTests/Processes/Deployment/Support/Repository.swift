import Foundation

/// Paths in the repository these tests read (compose.yaml, Dockerfile, scripts, docs/examples).
enum Repository {
    /// The repository's root: the nearest folder above this source file that holds Package.swift.
    static let root: URL = {
        var folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: folder.appendingPathComponent("Package.swift").path) {
            let parent = folder.deletingLastPathComponent()
            precondition(parent.path != folder.path, "no Package.swift above \(#filePath)")
            folder = parent
        }
        return folder
    }()

    static func file(_ relativePath: String) -> URL { root.appendingPathComponent(relativePath) }

    static func text(_ relativePath: String) throws -> String {
        do {
            return try String(contentsOf: file(relativePath), encoding: .utf8)
        } catch {
            throw DeploymentTestError("cannot read \(file(relativePath).path): \(error)")
        }
    }
}
