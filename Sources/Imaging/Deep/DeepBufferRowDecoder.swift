/// The rows of a 16-bit image already decoded whole (an interlaced 16-bit PNG, a 10 or 12-bit AVIF), served from memory.
final class DeepBufferRowDecoder: RowDecoder {
    let width: Int
    let height: Int
    let channels: Int
    let bitsPerSample = 16
    let metadata: ImageMetadata
    let sourceBitsPerSample: Int
    private let rows: [UInt8]
    private var next = 0

    /// `rows`: `decoder`'s every row (`decoder.rowBytes × height` bytes).
    convenience init(_ decoder: RowDecoder, rows: [UInt8]) {
        self.init(
            width: decoder.width, height: decoder.height, channels: decoder.channels, metadata: decoder.metadata,
            sourceBits: 16, rows: rows)
    }

    /// `rows`: `height` rows of `width × channels` 16-bit samples; `sourceBits`: the depth stored in the file.
    init(width: Int, height: Int, channels: Int, metadata: ImageMetadata, sourceBits: Int, rows: [UInt8]) {
        (self.width, self.height, self.channels, self.metadata) = (width, height, channels, metadata)
        precondition(rows.count == width * channels * 2 * height)
        self.sourceBitsPerSample = sourceBits
        self.rows = rows
    }

    func read(into pixels: UnsafeMutablePointer<UInt8>, rows count: Int, token: CancellationToken) throws {
        try token.check()
        let bytes = rowBytes
        rows.withUnsafeBufferPointer { source in
            guard let base = source.baseAddress else { return }
            pixels.update(from: base + next * bytes, count: count * bytes)
        }
        next += count
    }

    /// Every row of a 16-bit `decoder` turned upright by an EXIF/TIFF `orientation` (2…8), as
    /// `ImageBuffer.oriented(exifOrientation:)` turns 8-bit images.
    static func upright(
        _ decoder: RowDecoder, orientation: Int, token: CancellationToken
    ) throws -> DeepBufferRowDecoder {
        var rows = [UInt8](repeating: 0, count: decoder.rowBytes * decoder.height)
        try rows.withUnsafeMutableBufferPointer { buffer in
            guard let base = buffer.baseAddress else { return }
            try decoder.read(into: base, rows: decoder.height, token: token)
        }
        let (w, h, c) = (decoder.width, decoder.height, decoder.channels)
        let swaps = orientation >= 5
        let (outW, outH) = swaps ? (h, w) : (w, h)
        let pixelBytes = 2 * c
        var turned = [UInt8](repeating: 0, count: rows.count)
        rows.withUnsafeBufferPointer { src in
            turned.withUnsafeMutableBufferPointer { dst in
                for y in 0..<outH {
                    for x in 0..<outW {
                        // (sx, sy): the source pixel shown at (x, y) in the upright image.
                        let (sx, sy): (Int, Int)
                        switch orientation {
                        case 2: (sx, sy) = (w - 1 - x, y)
                        case 3: (sx, sy) = (w - 1 - x, h - 1 - y)
                        case 4: (sx, sy) = (x, h - 1 - y)
                        case 5: (sx, sy) = (y, x)
                        case 6: (sx, sy) = (y, h - 1 - x)
                        case 7: (sx, sy) = (w - 1 - y, h - 1 - x)
                        case 8: (sx, sy) = (w - 1 - y, x)
                        default: (sx, sy) = (x, y)
                        }
                        let s = (sy * w + sx) * pixelBytes
                        let d = (y * outW + x) * pixelBytes
                        for k in 0..<pixelBytes { dst[d + k] = src[s + k] }
                    }
                }
            }
        }
        return DeepBufferRowDecoder(
            width: outW, height: outH, channels: c, metadata: decoder.metadata,
            sourceBits: decoder.sourceBitsPerSample, rows: turned)
    }
}
