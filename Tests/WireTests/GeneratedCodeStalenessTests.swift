import Foundation
import XCTest

/// The generated protobuf code that is committed is what the generation scripts make from proto/ today:
/// the protobuf-c code in Sources/CShiftworkProto (scripts/generate-proto) and the Python client's module
/// in clients/python/src/shiftwork_client/_proto (scripts/generate-proto-python), and the Swift wire types with
/// their builders and decoders in Sources/Wire/Generated (scripts/generate-wire-swift). `make proto` runs all three.
final class GeneratedCodeStalenessTests: XCTestCase {
    func testCommittedProtobufCCodeIsUpToDate() throws {
        try assertUpToDate(
            script: "scripts/generate-proto", compiler: "protoc-c", package: "protobuf-c-compiler",
            setup: "scripts/setup",
            committed: "Sources/CShiftworkProto", suffixes: [".pb-c.c", ".pb-c.h"])
    }

    func testCommittedPythonClientCodeIsUpToDate() throws {
        try assertUpToDate(
            script: "scripts/generate-proto-python", compiler: "protoc", package: "protobuf-compiler",
            setup: "scripts/setup-python",
            committed: "clients/python/src/shiftwork_client/_proto", suffixes: [".py"])
    }

    func testCommittedWireSwiftBridgeIsUpToDate() throws {
        try assertUpToDate(
            script: "scripts/generate-wire-swift", compiler: "protoc", package: "protobuf-compiler",
            setup: "scripts/setup-python",
            committed: "Sources/Wire/Generated", suffixes: [".generated.swift"])
    }

    /// Runs `script` into a temporary directory and compares every generated file (those ending in one of
    /// `suffixes`; hand-written files beside them are not compared) with the one under `committed`.
    private func assertUpToDate(
        script: String, compiler: String, package: String, setup: String, committed: String, suffixes: [String],
        file: StaticString = #filePath, line: UInt = #line
    ) throws {
        guard Self.findInPath(compiler) != nil else {
            return XCTFail(
                "\(compiler) not found in PATH: run \(setup) (it installs \(package))", file: file, line: line)
        }
        let fileManager = FileManager.default
        let output = fileManager.temporaryDirectory.appendingPathComponent("shiftwork-proto-\(UUID().uuidString)")
        try fileManager.createDirectory(at: output, withIntermediateDirectories: true)
        defer { try? fileManager.removeItem(at: output) }

        let process = Process()
        process.executableURL = RepositoryRoot.url.appendingPathComponent(script)
        process.arguments = [output.path]
        let errors = Pipe()
        process.standardError = errors
        try process.run()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            return XCTFail("\(script) failed (\(process.terminationStatus)): \(errorText)", file: file, line: line)
        }

        let committedRoot = RepositoryRoot.url.appendingPathComponent(committed)
        let generated = Self.generatedFiles(under: output, suffixes: suffixes)
        let present = Self.generatedFiles(under: committedRoot, suffixes: suffixes)
        XCTAssertFalse(generated.isEmpty, "\(script) produced no files", file: file, line: line)
        let fix = "run `make proto` (\(script)) and commit the result"
        for path in generated.sorted() {
            let fresh = try Data(contentsOf: output.appendingPathComponent(path))
            guard let old = try? Data(contentsOf: committedRoot.appendingPathComponent(path)) else {
                XCTFail("\(committed)/\(path) is missing: \(fix)", file: file, line: line)
                continue
            }
            XCTAssertTrue(
                fresh == old,
                "\(committed)/\(path) differs from what proto/ generates: \(fix)\(errorText.isEmpty ? "" : " (\(errorText))")",
                file: file, line: line)
        }
        for path in present.subtracting(generated).sorted() {
            XCTFail(
                "\(committed)/\(path) is no longer generated from proto/: delete it, \(fix)", file: file, line: line)
        }
    }

    /// The files under `root` whose names end in one of `suffixes`, as paths relative to it.
    private static func generatedFiles(under root: URL, suffixes: [String]) -> Set<String> {
        let rootPath = root.standardizedFileURL.resolvingSymlinksInPath().path
        guard let enumerator = FileManager.default.enumerator(atPath: rootPath) else { return [] }
        var files: Set<String> = []
        while let path = enumerator.nextObject() as? String {
            if suffixes.contains(where: { path.hasSuffix($0) }), !path.contains("__pycache__") {
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
