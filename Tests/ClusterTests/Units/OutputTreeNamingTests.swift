import Foundation
import XCTest

@testable import Cluster

/// Output names that keep a library as it is (`OutputNaming.treeNames`, `OutputPath`, `OutputTree`): folders
/// kept, characters kept, names decided by input order, and never a path out of the output directory.
final class OutputTreeNamingTests: XCTestCase {
    private var root: URL!

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("tree-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: root)
    }

    func testADirectoryInputKeepsItsFoldersAndItsNamesCharacters() {
        let inputs = [
            "/p/2024/01/IMG_0001.HEIC", "/p/2024/02/IMG_0001.HEIC", "/p/my photo #1 (copy).jpg",
            "/p/café/Ünïcode name.png", "https://example.org/a/street%20view.jpg", "/elsewhere/x.jpg",
        ]
        let inside: [String?] = [
            "2024/01/IMG_0001.HEIC", "2024/02/IMG_0001.HEIC", "my photo #1 (copy).jpg",
            "café/Ünïcode name.png", nil, nil,
        ]
        XCTAssertEqual(
            OutputNaming.names(for: inputs, pathsInDirectories: inside, layout: .tree),
            ["2024/01/IMG_0001", "2024/02/IMG_0001", "my photo #1 (copy)", "café/Ünïcode name", "street view", "x"])
    }

    func testRepeatedNamesAreResolvedInInputOrderTheSameWayEveryTime() {
        let inputs = ["/p/a/x.jpg", "/p/a/x.png", "/p/A/X.jpg", "/q/x.jpg", "/r/x.jpg"]
        let inside: [String?] = ["a/x.jpg", "a/x.png", "A/X.jpg", nil, nil]
        let names = OutputNaming.names(for: inputs, pathsInDirectories: inside, layout: .tree)
        XCTAssertEqual(names, ["a/x", "a/x-2", "A/X-3", "x", "x-2"], "compared without case: A/X-2 is a/x-2's")
        for _ in 0..<3 {
            XCTAssertEqual(OutputNaming.names(for: inputs, pathsInDirectories: inside, layout: .tree), names)
        }
    }

    func testFlatIsTodaysNaming() {
        let inputs = ["/p/a/x.jpg", "/p/b/c/x.jpg", "/p/my photo #1 (copy).jpg"]
        let inside: [String?] = ["a/x.jpg", "b/c/x.jpg", "my photo #1 (copy).jpg"]
        XCTAssertEqual(
            OutputNaming.names(for: inputs, pathsInDirectories: inside, layout: .flat),
            ["x", "x-2", "my_photo__1__copy_"])
    }

    func testWhatNoFileSystemTakesOrWhatWouldEscapeIsReplaced() {
        let inputs = ["https://x.org/..%2F..%2Fetc%2Fpasswd", "/p/.hidden.jpg", "/p/nul", "/p/x", "https://x.org/"]
        let inside: [String?] = [nil, nil, "a\u{0}b/c\u{1}d.jpg", "../../x.jpg", nil]
        let names = OutputNaming.names(for: inputs, pathsInDirectories: inside, layout: .tree)
        XCTAssertEqual(Array(names.dropFirst()), ["_hidden", "a_b/c_d", "_./_./x", "x"])
        XCTAssertFalse(names[0].contains("/"), names[0])
        for name in names { XCTAssertNil(OutputPath.problem(name), name) }
    }

    func testALongPathKeepsItsLastComponentAndAComponentIsCut() {
        let deep = (0..<40).map { "f\($0)" }.joined(separator: "/") + "/photo.jpg"
        let long = String(repeating: "é", count: 300) + ".jpg"
        let names = OutputNaming.names(for: ["/p/1", "/p/2"], pathsInDirectories: [deep, long], layout: .tree)
        XCTAssertEqual(names[0], "photo")
        XCTAssertEqual(names[1].utf8.count, OutputPath.maxComponentBytes - 20)
        for name in names { XCTAssertNil(OutputPath.problem(name), name) }
    }

    func testHostileNamesAreRefusedByTheRule() {
        let hostile = [
            "../x", "a/../../x", "/etc/x", "a\u{0}b", String(repeating: "x", count: 10_000), "", "a//b", "a/",
            ".hidden", "a/.b", String(repeating: "y", count: 201),
            Array(repeating: "d", count: 33).joined(separator: "/"),
        ]
        for name in hostile { XCTAssertNotNil(OutputPath.problem(name), name.prefix(30).description) }
        for name in ["x", "2024/01/IMG_0001", "my photo #1 (copy)", "café/Ünïcode"] {
            XCTAssertNil(OutputPath.problem(name), name)
        }
    }

    func testTheTreeIsMadeBelowTheRootAndNeverThroughALink() throws {
        let (folder, last) = try OutputTree.prepare("2024/01/IMG_0001", under: root)
        XCTAssertEqual(folder.path, root.appendingPathComponent("2024/01").path)
        XCTAssertEqual(last, "IMG_0001")
        var isDirectory: ObjCBool = false
        XCTAssertTrue(
            FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory) && isDirectory.boolValue)

        let outside = root.appendingPathComponent("outside")
        let out = root.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: outside, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: out.appendingPathComponent("link"), withDestinationURL: outside)
        XCTAssertThrowsError(try OutputTree.prepare("link/x", under: out)) { error in
            XCTAssertTrue("\(error)".contains("is a symbolic link"), "\(error)")
        }
        XCTAssertThrowsError(try OutputTree.prepare("link/deeper/x", under: out))
        XCTAssertThrowsError(try OutputTree.prepare("../x", under: out))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: outside.path), [])
    }

    func testSubmittedNamesAreThoseOfTheSubmissionAndAHostileEchoFailsOnlyItsItem() {
        var names = OutputNames(layout: .tree)
        XCTAssertEqual(names.name(of: 1, submitted: "b/c/x", finished: "ignored"), "b/c/x")
        XCTAssertEqual(names.name(of: 0, submitted: "", finished: "a/x"), "a/x")
        XCTAssertEqual(
            names.name(of: 2, submitted: "", finished: "a/x"), "a/x-2", "a repeated echo gets a name of its own")
        XCTAssertEqual(names.name(of: 1, submitted: "", finished: "other"), "b/c/x", "an item keeps its name")

        var flat = OutputNames(layout: .flat)
        flat.know([.init(source: "/p/b/c/x.jpg"), .init(source: "/p/a/x.jpg")])
        XCTAssertEqual(
            flat.name(of: 1, submitted: "", finished: "a/x"), "x-2", "flat names follow item order, not arrival")
        XCTAssertEqual(flat.name(of: 0, submitted: "", finished: "b/c/x"), "x")
    }
}
