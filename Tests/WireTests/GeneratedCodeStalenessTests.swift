import Foundation
import XCTest

/// The protobuf-c code committed in Sources/CShiftworkProto is what scripts/generate-proto makes from
/// proto/ today.
final class GeneratedCodeStalenessTests: XCTestCase {
    private static let generatedSuffixes = [".pb-c.c", ".pb-c.h"]

    private var repositoryRoot: URL { RepositoryRoot.url }

    func testCommittedProtobufCCodeIsUpToDate() throws {
        guard Self.findInPath("protoc-c") != nil else {
            return XCTFail("protoc-c not found in PATH: run scripts/setup (it installs protobuf-c-compiler)")
        }
        let fileManager = FileManager.default
        let output = fileManager.temporaryDirectory.appendingPathComponent("shiftwork-proto-\(UUID().uuidString)")
        try fileManager.createDirectory(at: output, withIntermediateDirectories: true)
        defer { try? fileManager.removeItem(at: output) }

        let process = Process()
        process.executableURL = repositoryRoot.appendingPathComponent("scripts/generate-proto")
        process.arguments = [output.path]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            return XCTFail("scripts/generate-proto failed (\(process.terminationStatus)): \(errorText)")
        }

        let committedRoot = repositoryRoot.appendingPathComponent("Sources/CShiftworkProto")
        let generated = Self.generatedFiles(under: output)
        let committed = Self.generatedFiles(under: committedRoot)
        XCTAssertFalse(generated.isEmpty, "scripts/generate-proto produced no files")

        for path in generated.sorted() {
            let fresh = try Data(contentsOf: output.appendingPathComponent(path))
            let committedFile = committedRoot.appendingPathComponent(path)
            guard let old = try? Data(contentsOf: committedFile) else {
                XCTFail("Sources/CShiftworkProto/\(path) is missing: run scripts/generate-proto and commit the result")
                continue
            }
            XCTAssertTrue(
                fresh == old,
                "Sources/CShiftworkProto/\(path) differs from what proto/ generates: run scripts/generate-proto and commit the result")
        }
        for path in committed.subtracting(generated).sorted() {
            XCTFail("Sources/CShiftworkProto/\(path) is no longer generated from proto/: delete it, run scripts/generate-proto and commit the result")
        }
    }

    /// The generated files under `root`, as paths relative to it (the hand-written umbrella header and
    /// module map are not generated and not compared).
    private static func generatedFiles(under root: URL) -> Set<String> {
        let rootPath = root.standardizedFileURL.resolvingSymlinksInPath().path
        guard let enumerator = FileManager.default.enumerator(atPath: rootPath) else { return [] }
        var files: Set<String> = []
        while let path = enumerator.nextObject() as? String {
            if generatedSuffixes.contains(where: { path.hasSuffix($0) }) {
                files.insert(path)
            }
        }
        return files
    }

    private static func findInPath(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") {
            let candidate = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: candidate) {
                return candidate
            }
        }
        return nil
    }
}
