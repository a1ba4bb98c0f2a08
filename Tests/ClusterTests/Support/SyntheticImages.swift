import Imaging

/// Encoded test images with detail everywhere (so blur is measurable) and a known size.
enum SyntheticImages {
    static func make(width: Int, height: Int, channels: Int = 3, format: ImageFormat, seed: UInt64) throws -> [UInt8] {
        var generator = SplitMix64(seed: seed)
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

/// A small deterministic random number generator for test data.
struct SplitMix64: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
