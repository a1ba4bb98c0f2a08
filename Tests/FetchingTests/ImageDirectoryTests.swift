import Fetching
import Foundation
import Imaging
import XCTest

/// `ImageDirectory`: a directory tree becomes its images, recursively, in a stable order, recognised by
/// their signatures; everything else is listed as skipped.
final class ImageDirectoryTests: XCTestCase {
    private var files: TestFiles!
    private var root: URL!

    override func setUpWithError() throws {
        files = try TestFiles()
        root = files.directory.appendingPathComponent("photos")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    override func tearDown() {
        files.remove()
    }

    private func write(_ bytes: [UInt8], _ relative: String) throws {
        let url = root.appendingPathComponent(relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(bytes).write(to: url)
    }

    func testImagesAreFoundRecursivelyInSortedOrderBySignature() throws {
        try write(files.jpeg, "b.jpg")
        try write(files.png, "a.png")
        try write(files.jpeg, "Z-upper.JPG")
        try write(files.jpeg, "sub/c.jpeg")
        try write(files.png, "sub/deeper/scan")  // no extension: found by its signature
        try write(files.html, "sub/fake.jpg")  // an image's name, but HTML inside: skipped
        try write(Array("a list\n".utf8), "notes.txt")
        try write([], "empty.png")  // empty: not an image
        try write(files.jpeg, ".hidden.jpg")  // hidden: passed over
        try write(files.jpeg, ".git/objects/x.jpg")  // inside a hidden directory: passed over
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("nothing"), withIntermediateDirectories: true)

        let directory = try ImageDirectory(path: root.path)
        let prefix = root.path + "/"
        XCTAssertEqual(
            directory.images, ["Z-upper.JPG", "a.png", "b.jpg", "sub/c.jpeg", "sub/deeper/scan"].map { prefix + $0 })
        XCTAssertEqual(directory.pathsInside, ["Z-upper.JPG", "a.png", "b.jpg", "sub/c.jpeg", "sub/deeper/scan"])
        XCTAssertEqual(directory.skipped, ["empty.png", "notes.txt", "sub/fake.jpg"])
        XCTAssertEqual(directory.unreadable, [])
        XCTAssertNil(directory.unreadableSummary())
        XCTAssertEqual(
            directory.skippedSummary(),
            "\(root.path): skipped 3 files that are not images (JPEG, PNG, WebP, AVIF, HEIC/HEIF, TIFF, GIF or BMP): empty.png, notes.txt, sub/fake.jpg"
        )
        // The same tree listed again gives the same order.
        XCTAssertEqual(try ImageDirectory(path: root.path).images, directory.images)
    }

    func testEveryFormatReadIsFoundByItsSignatureWhateverItsName() throws {
        // Each format's first bytes, as a file of that format starts (the rest does not matter for the listing):
        // WebP needs 12 bytes to be told from other RIFF files, AVIF and HEIC their ftyp box's brands (16 and more).
        func ftyp(_ major: String, _ compatible: [String]) -> [UInt8] {
            let brands = compatible.flatMap { Array($0.utf8) }
            return [0, 0, 0, UInt8(16 + brands.count)] + Array("ftyp".utf8) + Array(major.utf8) + [0, 0, 0, 0] + brands
        }
        let bmpHeader: [UInt8] = Array("BM".utf8) + [UInt8](repeating: 0, count: 12) + [40, 0, 0, 0]
        let samples: [(String, [UInt8])] = [
            ("a-webp", Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WEBPVP8 ".utf8)),
            ("b-avif", ftyp("avif", ["mif1", "miaf"])),
            ("c-avif-compatible", ftyp("mif1", ["miaf", "avif"])),
            ("d-heic", ftyp("heic", ["mif1", "heic"])),
            ("e-heif", ftyp("mif1", ["heic"])),
            ("f-tiff", [0x49, 0x49, 0x2A, 0x00, 8, 0, 0, 0]),
            ("g-tiff-big-endian", [0x4D, 0x4D, 0x00, 0x2A, 0, 0, 0, 8]),
            ("h-gif", Array("GIF89a".utf8) + [1, 0, 1, 0]),
            ("i-bmp", bmpHeader),
        ]
        for (name, bytes) in samples { try write(bytes, name) }
        try write(Array("RIFF".utf8) + [0, 0, 0, 0] + Array("WAVEfmt ".utf8), "j-wave.webp")  // RIFF, but sound
        try write(Array("BM and more text".utf8), "k-text.bmp")  // BM, but no BMP header
        try write(ftyp("isom", ["mp41"]), "l-video.heic")  // ftyp, but an MP4
        let directory = try ImageDirectory(path: root.path)
        XCTAssertEqual(directory.images, samples.map { root.path + "/" + $0.0 })
        XCTAssertEqual(directory.skipped, ["j-wave.webp", "k-text.bmp", "l-video.heic"])
    }

    func testTheSummaryListsAFewNamesThenHowManyMore() throws {
        try write(files.jpeg, "photo.jpg")
        for index in 1...7 { try write(Array("text \(index)".utf8), "note\(index).txt") }
        let directory = try ImageDirectory(path: root.path)
        XCTAssertEqual(directory.images, [root.appendingPathComponent("photo.jpg").path])
        XCTAssertEqual(
            directory.skippedSummary(shown: 2),
            "\(root.path): skipped 7 files that are not images (JPEG, PNG, WebP, AVIF, HEIC/HEIF, TIFF, GIF or BMP): note1.txt, note2.txt, and 5 more"
        )
    }

    func testNoSkippedFilesMeansNoSummary() throws {
        try write(files.png, "one.png")
        XCTAssertNil(try ImageDirectory(path: root.path).skippedSummary())
    }

    func testALinkLoopIsWalkedOnceAndLinkedFilesAreFollowed() throws {
        try write(files.jpeg, "real/photo.jpg")
        try FileManager.default.createSymbolicLink(
            atPath: root.appendingPathComponent("real/loop").path, withDestinationPath: "..")
        try FileManager.default.createSymbolicLink(
            atPath: root.appendingPathComponent("linked.jpg").path, withDestinationPath: "real/photo.jpg")
        try FileManager.default.createSymbolicLink(
            atPath: root.appendingPathComponent("dangling.jpg").path, withDestinationPath: "gone.jpg")
        let directory = try ImageDirectory(path: root.path)
        XCTAssertEqual(
            directory.images,
            [root.appendingPathComponent("linked.jpg").path, root.appendingPathComponent("real/photo.jpg").path])
        XCTAssertEqual(directory.skipped, ["dangling.jpg"])
    }

    func testADirectoryThatCannotBeReadIsAnErrorNamingIt() throws {
        let missing = root.appendingPathComponent("missing").path
        XCTAssertThrowsError(try ImageDirectory(path: missing)) { error in
            XCTAssertEqual((error as? ImagingError)?.message, "\(missing): no such file")
        }
    }

    func testOnlyLocalDirectoriesAreDirectories() throws {
        try write(files.jpeg, "photo.jpg")
        XCTAssertEqual(ImageDirectory.directoryPath(of: root.path), root.path)
        XCTAssertEqual(ImageDirectory.directoryPath(of: "file://" + root.path), root.path)
        XCTAssertNil(ImageDirectory.directoryPath(of: root.appendingPathComponent("photo.jpg").path))
        XCTAssertNil(ImageDirectory.directoryPath(of: root.appendingPathComponent("missing").path))
        XCTAssertNil(ImageDirectory.directoryPath(of: "http://127.0.0.1/photos/"))
    }
}
