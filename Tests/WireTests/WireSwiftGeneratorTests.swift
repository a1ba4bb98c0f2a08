import Foundation
import XCTest

/// The generator of Sources/Wire/Generated passes its own unit tests (scripts/wire-swift/tests, run by
/// `scripts/generate-wire-swift --self-test`): a change that breaks its name conversions, its mapping's checks, the
/// order of its payload walk, boxed members, the enums or the files per group fails here, with the Python test's
/// own message, not only as stale output.
final class WireSwiftGeneratorTests: XCTestCase {
    func testTheGeneratorPassesItsUnitTests() throws {
        let process = Process()
        process.executableURL = RepositoryRoot.url.appendingPathComponent("scripts/generate-wire-swift")
        process.arguments = ["--self-test"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0, "scripts/generate-wire-swift --self-test failed:\n\(text)")
        XCTAssertTrue(text.contains("OK"), "the generator's unit tests did not report OK:\n\(text)")
    }
}
