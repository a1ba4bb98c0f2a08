import XCTest

@testable import Cluster

final class OutputNamingTests: XCTestCase {
    func testNamesComeFromTheLastPathComponentWithoutExtension() {
        var naming = OutputNaming()
        XCTAssertEqual(naming.stem(for: "https://example.org/a/b/street.jpg?size=large"), "street")
        XCTAssertEqual(naming.stem(for: "/home/me/Pictures/Harbour.PNG"), "Harbour")
        XCTAssertEqual(naming.stem(for: "file:///tmp/caf%C3%A9%20terrace.jpeg"), "caf__terrace")
    }

    func testNamesNeverEscapeTheOutputDirectory() {
        var naming = OutputNaming()
        for hostile in [
            "../../etc/passwd", "https://x.org/..%2F..%2Fetc%2Fpasswd", "/", "...", ".hidden.jpg", "a/b/..",
            "https://x.org/",
        ] {
            let stem = naming.stem(for: hostile)
            XCTAssertFalse(stem.contains("/"), "\(hostile) -> \(stem)")
            XCTAssertFalse(stem.hasPrefix("."), "\(hostile) -> \(stem)")
            XCTAssertFalse(stem.isEmpty, hostile)
        }
    }

    func testCollisionsGetDistinctNames() {
        var naming = OutputNaming()
        XCTAssertEqual(naming.stem(for: "https://a.org/photo.jpg"), "photo")
        XCTAssertEqual(naming.stem(for: "https://b.org/photo.png"), "photo-2")
        XCTAssertEqual(naming.stem(for: "/x/PHOTO.jpg"), "PHOTO-3")
    }
}
