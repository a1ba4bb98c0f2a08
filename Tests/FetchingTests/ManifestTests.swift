import Fetching
import Foundation
import XCTest

/// What counts as a manifest, and how its entries are resolved.
final class ManifestTests: XCTestCase {
    private func parse(_ text: String, from source: String = "https://example.com/lists/manifest.txt") -> [String]? {
        Manifest(parsing: Array(text.utf8), source: source)?.entries
    }

    func testURLsAndPathsOneALineWithCommentsAndBlankLines() {
        let text = """
            # holiday photos
            https://example.com/a.jpg

            http://other.example.org/b.PNG?size=large
              c.jpeg
            /images/d.png
            more.txt\r
            """
        XCTAssertEqual(
            parse(text),
            [
                "https://example.com/a.jpg",
                "http://other.example.org/b.PNG?size=large",
                "https://example.com/lists/c.jpeg",
                "https://example.com/images/d.png",
                "https://example.com/lists/more.txt",
            ])
    }

    func testRelativePathsOfALocalManifestResolveAgainstItsDirectory() {
        XCTAssertEqual(
            parse("a.jpg\n/abs/b.png\nsub/c.png", from: "/data/batch/list.txt"),
            ["/data/batch/a.jpg", "/abs/b.png", "/data/batch/sub/c.png"])
        XCTAssertEqual(parse("my photo.jpg", from: "file:///data/list.txt"), ["file:///data/my%20photo.jpg"])
    }

    func testTextThatIsNotAListOfImagesIsNoManifest() {
        XCTAssertNil(parse("<!DOCTYPE html>\n<html><body>Not found</body></html>"), "an HTML page")
        XCTAssertNil(parse("Dear reader,\nthis is a letter."), "prose")
        XCTAssertNil(parse("{\"images\": [\"a.jpg\"]}"), "JSON")
        XCTAssertNil(parse("a.jpg\nnotes.doc"), "an entry that is neither an image nor a manifest")
        XCTAssertNil(parse("ftp://example.com/a.jpg"), "an unsupported scheme")
        XCTAssertNil(parse("# only comments\n\n"), "no entries")
        XCTAssertNil(Manifest(parsing: [0x61, 0x2E, 0x6A, 0x70, 0x67, 0x00], source: "x.txt"), "binary")
        XCTAssertNil(Manifest(parsing: [0xC3, 0x28, 0x2E, 0x6A, 0x70, 0x67], source: "x.txt"), "invalid UTF-8")
    }

    func testWhatIsNotAManifestSaysWhichLineAndWhy() {
        func problem(_ text: String) -> String? {
            guard case .failure(let problem) = Manifest.parse(Array(text.utf8), source: "/data/list.txt") else {
                return nil
            }
            return problem.description
        }
        let line = problem("# picked\na.jpg\n\nnotes.doc\nb.jpg")
        XCTAssertTrue(line?.hasPrefix("line 4 (notes.doc) is neither") == true, line ?? "parsed")
        XCTAssertEqual(problem("# only comments\n\n"), "it lists no image (only blank lines and # comments)")
        XCTAssertEqual(problem("a.jpg\u{0}"), "it is not text (UTF-8 without NUL bytes)")
        let long = problem(String(repeating: "x", count: 200) + ".doc")
        XCTAssertTrue(long?.contains(String(repeating: "x", count: 80) + "…)") == true, long ?? "parsed")
        guard case .success(let manifest) = Manifest.parse(Array("a.jpg\r\nb.png\r\n".utf8), source: "/d/l.txt")
        else { return XCTFail("a list with CRLF line ends is a manifest") }
        XCTAssertEqual(manifest.entries, ["/d/a.jpg", "/d/b.png"])
    }

    func testAManifestIsNotAnImageForImageOnlyFetches() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("manifest-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let list = directory.appendingPathComponent("list.txt")
        try Data("a.jpg\nb.png\n".utf8).write(to: list)
        var configuration = FetchConfiguration()
        configuration.allowLocalFiles = true
        let fetcher = ImageFetcher(configuration: configuration)
        defer { Task { await fetcher.shutdown() } }
        guard case .manifest(let manifest) = try await fetcher.fetchContent(list.path) else {
            return XCTFail("list.txt is a manifest")
        }
        XCTAssertEqual(
            manifest.entries,
            [directory.appendingPathComponent("a.jpg").path, directory.appendingPathComponent("b.png").path])
        do {
            _ = try await fetcher.fetch(list.path)
            XCTFail("fetch(_:) wants an image")
        } catch {
            XCTAssertTrue("\(error)".contains("manifest of 2 images"), "\(error)")
        }
    }
}
