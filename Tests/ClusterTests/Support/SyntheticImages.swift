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
