import Imaging
import ShiftworkTestSupport

/// Encoded test images with detail everywhere (so blur is measurable) and a known size.
enum SyntheticImages {
    static func make(width: Int, height: Int, channels: Int = 3, format: ImageFormat, seed: UInt64) throws -> [UInt8] {
        var generator = SeededGenerator(seed: seed)
        var pixels = [UInt8](repeating: 0, count: width * height * channels)
        for y in 0..<height {
            for x in 0..<width {
                let checker: UInt8 = ((x / 4 + y / 4) % 2 == 0) ? 200 : 40
                for c in 0..<channels {
                    let noise = UInt8(truncatingIfNeeded: generator.next() % 24)
                    pixels[(y * width + x) * channels + c] = c == 3 ? 255 : checker &+ noise &+ UInt8(c * 7)
                }
            }
        }
        let image = try ImageBuffer(width: width, height: height, channels: channels, pixels: pixels)
        return try ImageCodec.encode(image, as: format)
    }
}

extension TestHTTPServer {
    /// Serves `count` synthetic 120×90 images (JPEG and PNG in turn) under `/prefix/`, each with the
    /// response `custom` gives (`nil`: served at once), and returns their URLs.
    func serveSyntheticImages(
        _ count: Int, prefix: String, response custom: (_ bytes: [UInt8], _ format: ImageFormat) -> Response? = { _, _ in nil }
    ) throws -> [String] {
        try (0..<count).map { index in
            let format: ImageFormat = index % 2 == 0 ? .jpeg : .png
            let bytes = try SyntheticImages.make(width: 120, height: 90, format: format, seed: UInt64(index))
            let path = Self.syntheticImagePath(index, prefix: prefix)
            if let response = custom(bytes, format) {
                serve(path: path, response: response)
            } else {
                serve(path: path, body: bytes, contentType: format.mediaType)
            }
            return url(path)
        }
    }

    /// The path of the `index`th image `serveSyntheticImages` served under `prefix`.
    static func syntheticImagePath(_ index: Int, prefix: String) -> String {
        "/\(prefix)/image-\(index).\(index % 2 == 0 ? "jpg" : "png")"
    }
}
