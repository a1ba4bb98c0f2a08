import Imaging
import ShiftworkTestSupport

/// Encoded test images with detail everywhere (so blur is measurable) and a known size.
enum SyntheticImages {
    /// Builds the image's first rows pixel by pixel and repeats them below. The rows repeat far enough
    /// apart (at least 64 KiB, twice deflate's window, and a multiple of the checkerboard's period) that
    /// neither PNG nor JPEG compresses the repetition, so encoded sizes stay those of noise; small images
    /// (up to 64 KiB of pixels) never repeat. A 24-megapixel image is then built by copying rows, not by a
    /// per-byte loop over all of it (seconds in a debug build).
    static func make(width: Int, height: Int, channels: Int = 3, format: ImageFormat, seed: UInt64) throws -> [UInt8] {
        var generator = SeededGenerator(seed: seed)
        let rowBytes = width * channels
        let repeatAfter = ((64 * 1024 + rowBytes - 1) / max(1, rowBytes) + 7) / 8 * 8
        let distinctRows = (0..<min(height, repeatAfter)).map { y in
            var row = [UInt8](repeating: 0, count: rowBytes)
            for x in 0..<width {
                let checker: UInt8 = ((x / 4 + y / 4) % 2 == 0) ? 200 : 40
                for c in 0..<channels {
                    let noise = UInt8(truncatingIfNeeded: generator.next() % 24)
                    row[x * channels + c] = c == 3 ? 255 : checker &+ noise &+ UInt8(c * 7)
                }
            }
            return row
        }
        var pixels = [UInt8]()
        pixels.reserveCapacity(rowBytes * height)
        for y in 0..<height {
            pixels.append(contentsOf: distinctRows[y % distinctRows.count])
        }
        let image = try ImageBuffer(width: width, height: height, channels: channels, pixels: pixels)
        return try ImageCodec.encode(image, as: format)
    }

    /// A `side` × `side` RGB PNG whose every row is the same row with detail along it: it encodes small and
    /// fast, yet decodes and filters at full cost (a 64- or 100-megapixel one keeps a compute thread busy for
    /// a second or more), for tests that need a worker busy filtering.
    static func slowToFilterPNG(side: Int) throws -> [UInt8] {
        var row = [UInt8](repeating: 0, count: side * 3)
        for x in 0..<(side * 3) { row[x] = UInt8(truncatingIfNeeded: x * 7 + (x / 48) * 31) }
        var pixels: [UInt8] = []
        pixels.reserveCapacity(side * side * 3)
        for _ in 0..<side { pixels.append(contentsOf: row) }
        return try ImageCodec.encode(try ImageBuffer(width: side, height: side, channels: 3, pixels: pixels), as: .png)
    }
}

extension TestHTTPServer {
    /// Serves `count` synthetic 120×90 images (JPEG and PNG in turn) under `/prefix/`, each with the
    /// response `custom` gives (`nil`: served at once), and returns their URLs.
    func serveSyntheticImages(
        _ count: Int, prefix: String,
        response custom: (_ bytes: [UInt8], _ format: ImageFormat) -> Response? = { _, _ in nil }
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
