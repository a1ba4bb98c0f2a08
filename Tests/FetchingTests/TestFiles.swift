import Foundation
import Imaging

/// Files the fetch tests serve and read: images made with Imaging's codecs (so this target needs no
/// fixtures of its own), an HTML page, and a temporary directory holding them.
struct TestFiles {
    /// A 256×256 JPEG of noise (about 60 KB: larger than the small limits the tests set).
    let jpeg: [UInt8]
    /// A 64×48 PNG.
    let png: [UInt8]
    /// An HTML page, as servers answer instead of an image.
    let html = Array("<!DOCTYPE html>\n<html><body>Not found</body></html>\n".utf8)
    /// A temporary directory holding `photo.jpg`, `photo.png` and `page.html`; removed by ``remove()``.
    let directory: URL

    init() throws {
        jpeg = try ImageCodec.encode(Self.noise(width: 256, height: 256), as: .jpeg)
        png = try ImageCodec.encode(Self.noise(width: 64, height: 48), as: .png)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("fetching-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try Data(jpeg).write(to: directory.appendingPathComponent("photo.jpg"))
        try Data(png).write(to: directory.appendingPathComponent("photo.png"))
        try Data(html).write(to: directory.appendingPathComponent("page.html"))
    }

    /// The path of `name` in ``directory``.
    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Removes ``directory``.
    func remove() { try? FileManager.default.removeItem(at: directory) }

    private static func noise(width: Int, height: Int) -> ImageBuffer {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        var image = ImageBuffer(width: width, height: height, channels: 3)
        for i in 0..<image.pixels.count {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            image.pixels[i] = UInt8(truncatingIfNeeded: state >> 56)
        }
        return image
    }
}
