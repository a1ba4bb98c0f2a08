import CImageCodecs

/// Takes 16-bit rows and hands them to an 8-bit encoder dithered to 8 bits (an 8×8 ordered dither,
/// `sw_dither16_to_8`), not truncated: a smooth 16-bit gradient keeps its average level instead of banding.
/// For the formats that hold 8 bits only (JPEG, WebP) and those whose deeper modes are not written (AVIF).
final class DitheringRowEncoder: RowEncoder {
    private let encoder: RowEncoder
    private let width: Int
    private let channels: Int
    /// One block of rows at 8 bits, grown to the largest block written.
    private var rows: [UInt8] = []
    private var nextRow = 0

    init(_ encoder: RowEncoder, width: Int, channels: Int) {
        self.encoder = encoder
        self.width = width
        self.channels = channels
    }

    func write(_ pixels: UnsafePointer<UInt8>, rows count: Int, token: CancellationToken) throws {
        let samples = width * channels
        if rows.count < samples * count { rows = [UInt8](repeating: 0, count: samples * count) }
        try rows.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            let source = UnsafeRawPointer(pixels).assumingMemoryBound(to: UInt16.self)
            for row in 0..<count {
                sw_dither16_to_8(
                    source + row * samples, base + row * samples, width, Int32(channels),
                    Int32(truncatingIfNeeded: nextRow + row))
            }
            try encoder.write(base, rows: count, token: token)
        }
        nextRow += count
    }

    func finish(token: CancellationToken) throws -> [UInt8]? {
        try encoder.finish(token: token)
    }
}
